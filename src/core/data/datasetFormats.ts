/**
 * The dataset formats the communities publish (see ../shared/data/README.md and the paper's
 * Tables 1-2), one entry each in a typed registry: MATH500 / AIME / AMC (`problem`, `answer`),
 * Minerva (`problem`, `solution`: the gold is its last `\boxed{}`), OlympiadBench
 * (`final_answer` list), GSM8K (answer after `#### `), NQ-open (`answer` list), FlashRAG /
 * Search-R1 (`golden_answers`), one-answer QA (hotpotqa_500, bamboogle), TriviaQA
 * (`answer.value` + `answer.aliases`), PopQA (`possible_answers`), HotpotQA and 2WikiMultihopQA
 * (`context` paragraphs), MuSiQue (`paragraphs`, `answer_aliases`) and verl's parquet layout
 * (`data_source`, `prompt`, `reward_model.ground_truth`, `extra_info`), in which DAPO-Math and the
 * Search-R1 splits ship. Each entry has a zod schema, a detector and a converter to `DatasetRow`;
 * the multi-hop formats also give the passages of their own small corpus. A new format is one
 * entry here plus its place in DETECT_ORDER.
 *
 * Pure (no file access): reading files, layouts and whole-file validation are datasets.ts's.
 * Tested by test/core/data/formats.test.ts and datasets.test.ts (every file in ../shared/data).
 */
import { z } from 'zod';
import { extractLastBoxed } from '../eval/latex';
import { jsonSyntaxText } from './jsonl';
import type { DatasetRow } from './types';

export const DATASET_FORMATS = [
  'math',
  'gsm8k',
  'nq',
  'flashrag',
  'qa',
  'hotpot',
  'minerva',
  'olympiad',
  'triviaqa',
  'popqa',
  '2wiki',
  'musique',
  'verl',
] as const;
export type DatasetFormat = (typeof DATASET_FORMATS)[number];

/** How the records sit in the file: one JSON object per line, one JSON list, or a parquet table. */
export type DatasetLayout = 'lines' | 'list' | 'table';
export type DatasetDomain = 'math' | 'qa';

const idField = z.union([z.string(), z.number()]).optional();
const text = z.string().min(1);
export type Raw = Record<string, unknown>;

export interface FormatSpec {
  description: string;
  /** Layouts the format is published in. */
  layouts: readonly DatasetLayout[];
  /** Grader and workflows the rows fit; a function where a record says (verl's `ability`). */
  domain: DatasetDomain | ((raw: Raw) => DatasetDomain);
  schema: z.ZodType<Raw>;
  /** Whether a record (the first of a file) has this format's fields. */
  detect(raw: Raw): boolean;
  /** Build the row; `fallbackId` is `<benchmark>-<line or index>`. May throw (named by the caller). */
  toRow(raw: Raw, benchmark: string, fallbackId: string): DatasetRow;
  /** The record's own paragraphs, for the small corpus multi-hop sets bring along. */
  passages?(raw: Raw): { title: string; text: string }[];
}

/** Split a record into the fields the row uses and everything else (kept as meta). */
function rest(raw: Raw, used: readonly string[]): Raw {
  return Object.fromEntries(Object.entries(raw).filter(([k]) => !used.includes(k)));
}

function pickId(raw: Raw, fallback: string): string {
  for (const k of ['id', '_id', 'unique_id', 'idx', 'question_id']) {
    const v = raw[k];
    if (typeof v === 'string' || typeof v === 'number') return String(v);
  }
  return fallback;
}

/** `27.0` -> `27`, `1e21` stays as written by String(). */
function numberText(v: string | number): string {
  return typeof v === 'number' ? String(v) : v.trim();
}

/** Aliases in order, blanks and repeats dropped. */
function aliases(...lists: unknown[]): string[] {
  const out: string[] = [];
  for (const x of lists.flat()) if (typeof x === 'string' && x.trim() !== '' && !out.includes(x.trim())) out.push(x.trim());
  return out;
}

/** `$\frac{1}{2}$` -> `\frac{1}{2}` (OlympiadBench wraps its final answers in math mode). */
function stripMathMode(s: string): string {
  return s
    .trim()
    .replace(/^\$+|\$+$/g, '')
    .trim();
}

const contextSchema = z.array(z.tuple([z.string(), z.array(z.string())]));
const contextPassages = (raw: Raw): { title: string; text: string }[] =>
  (raw.context as [string, string[]][]).map(([title, sentences]) => ({ title, text: sentences.join('').trim() }));
const supportingTitles = (raw: Raw): string[] => [...new Set((raw.supporting_facts as [string, number][]).map((f) => f[0]))];

/** verl's ground truth: a string (DAPO-Math), a number, or `{target: [aliases]}` (Search-R1). */
function verlGold(raw: Raw): string[] {
  const gt = (raw.reward_model as Raw).ground_truth;
  if (typeof gt === 'string' || typeof gt === 'number') return [numberText(gt)];
  const target = (gt as Raw).target;
  return aliases(Array.isArray(target) ? target : [target]);
}

/** The question of a verl row: extra_info.question, a question/problem column, else the last user message. */
function verlQuestion(raw: Raw): string {
  const extra = (raw.extra_info ?? {}) as Raw;
  for (const v of [extra.question, raw.question, raw.problem, extra.problem]) if (typeof v === 'string' && v.trim() !== '') return v.trim();
  const messages = raw.prompt as { role: string; content: string }[];
  const user = [...messages].reverse().find((m) => m.role === 'user') ?? messages[messages.length - 1];
  // Search-R1's template ends with "Question: <q>"; keep the question, not the instructions.
  const q = /Question:\s*([\s\S]+?)\s*$/.exec(user.content);
  return (q ? q[1] : user.content).trim();
}

export const FORMATS = {
  math: {
    description: 'MATH500 / AIME / AMC: {problem, answer (string or number)}',
    layouts: ['lines'],
    domain: 'math',
    schema: z.looseObject({ problem: text, answer: z.union([text, z.number()]), id: idField }),
    detect: (r) => 'problem' in r && 'answer' in r,
    toRow: (raw, benchmark, fallbackId) => ({
      id: pickId(raw, fallbackId),
      question: String(raw.problem),
      answers: [numberText(raw.answer as string | number)],
      benchmark,
      meta: rest(raw, ['problem', 'answer']),
    }),
  },
  gsm8k: {
    description: 'GSM8K: {question, answer} with the final answer after "#### "',
    layouts: ['lines'],
    domain: 'math',
    schema: z.looseObject({ question: text, answer: z.string().regex(/####\s*\S/, 'no "#### <answer>" at the end') }),
    detect: (r) => 'question' in r && typeof r.answer === 'string' && /####\s*\S+\s*$/.test(r.answer),
    toRow: (raw, benchmark, fallbackId) => {
      const full = String(raw.answer);
      const final = full
        .slice(full.lastIndexOf('####') + 4)
        .trim()
        .replace(/,/g, '');
      return {
        id: pickId(raw, fallbackId),
        question: String(raw.question),
        answers: [final],
        benchmark,
        meta: { ...rest(raw, ['question', 'answer']), solution: full },
      };
    },
  },
  nq: {
    description: 'NQ-open: {question, answer: [aliases]}',
    layouts: ['lines'],
    domain: 'qa',
    schema: z.looseObject({ question: text, answer: z.array(text).min(1) }),
    detect: (r) => 'question' in r && Array.isArray(r.answer),
    toRow: (raw, benchmark, fallbackId) => ({
      id: pickId(raw, fallbackId),
      question: String(raw.question),
      answers: (raw.answer as string[]).slice(),
      benchmark,
      meta: rest(raw, ['question', 'answer']),
    }),
  },
  flashrag: {
    description: 'FlashRAG / Search-R1: {id, question, golden_answers: [aliases]}',
    layouts: ['lines'],
    domain: 'qa',
    schema: z.looseObject({ question: text, golden_answers: z.array(text).min(1), id: idField }),
    detect: (r) => 'golden_answers' in r,
    toRow: (raw, benchmark, fallbackId) => ({
      id: pickId(raw, fallbackId),
      question: String(raw.question),
      answers: (raw.golden_answers as string[]).slice(),
      benchmark,
      meta: rest(raw, ['question', 'golden_answers']),
    }),
  },
  qa: {
    description: 'One-answer QA (hotpotqa_500, bamboogle): {question, answer: string}',
    layouts: ['lines'],
    domain: 'qa',
    schema: z.looseObject({ question: text, answer: text }),
    detect: (r) => 'question' in r && typeof r.answer === 'string',
    toRow: (raw, benchmark, fallbackId) => ({
      id: pickId(raw, fallbackId),
      question: String(raw.question),
      answers: [String(raw.answer)],
      benchmark,
      meta: rest(raw, ['question', 'answer']),
    }),
  },
  hotpot: {
    description: 'HotpotQA distractor: [{_id, question, answer, supporting_facts, context}] (JSON list or JSONL)',
    layouts: ['list', 'lines'],
    domain: 'qa',
    schema: z.looseObject({
      _id: z.string().min(1),
      question: text,
      answer: text,
      supporting_facts: z.array(z.tuple([z.string(), z.number().int()])),
      context: contextSchema,
    }),
    detect: (r) => 'supporting_facts' in r && 'context' in r,
    toRow: (raw, benchmark, fallbackId) => ({
      id: pickId(raw, fallbackId),
      question: String(raw.question),
      answers: [String(raw.answer)],
      benchmark,
      meta: { ...rest(raw, ['_id', 'question', 'answer', 'context']), supportingTitles: supportingTitles(raw) },
    }),
    passages: contextPassages,
  },
  minerva: {
    description: 'Minerva math: {problem, solution}; the gold answer is the last \\boxed{} of the solution',
    layouts: ['lines'],
    domain: 'math',
    schema: z.looseObject({ problem: text, solution: text.refine((s) => extractLastBoxed(s) !== null, 'no complete \\boxed{...} in the solution') }),
    detect: (r) => 'problem' in r && typeof r.solution === 'string' && !('answer' in r),
    toRow: (raw, benchmark, fallbackId) => ({
      id: pickId(raw, fallbackId),
      question: String(raw.problem),
      answers: [extractLastBoxed(String(raw.solution))!],
      benchmark,
      meta: rest(raw, ['problem']),
    }),
  },
  olympiad: {
    description: 'OlympiadBench: {question, final_answer: [..], is_multiple_answer?, unit?}',
    layouts: ['lines', 'list'],
    domain: 'math',
    schema: z.looseObject({ question: text, final_answer: z.array(text).min(1), is_multiple_answer: z.boolean().nullish(), unit: z.string().nullish() }),
    detect: (r) => 'final_answer' in r && 'question' in r,
    toRow: (raw, benchmark, fallbackId) => {
      const finals = (raw.final_answer as string[]).map(stripMathMode);
      // Several answers are graded as one tuple-like string; one answer may also be given as is.
      const gold = raw.is_multiple_answer ? finals.join(', ') : finals[0];
      return { id: pickId(raw, fallbackId), question: String(raw.question), answers: [gold], benchmark, meta: rest(raw, ['question', 'final_answer']) };
    },
  },
  triviaqa: {
    description: 'TriviaQA (Hugging Face trivia_qa): {question, answer: {value, aliases: [..]}}',
    layouts: ['lines', 'list'],
    domain: 'qa',
    schema: z.looseObject({ question: text, answer: z.looseObject({ value: text, aliases: z.array(z.string()).default([]) }) }),
    detect: (r) => 'question' in r && r.answer !== null && typeof r.answer === 'object' && !Array.isArray(r.answer) && 'value' in r.answer,
    toRow: (raw, benchmark, fallbackId) => {
      const a = raw.answer as { value: string; aliases: string[] };
      return {
        id: pickId(raw, fallbackId),
        question: String(raw.question),
        answers: aliases(a.value, a.aliases),
        benchmark,
        meta: rest(raw, ['question', 'answer']),
      };
    },
  },
  popqa: {
    description: 'PopQA: {question, possible_answers: [..] or its JSON text}',
    layouts: ['lines'],
    domain: 'qa',
    schema: z.looseObject({
      question: text,
      possible_answers: z.union([z.array(text).min(1), z.string().min(1)]),
    }),
    detect: (r) => 'possible_answers' in r && 'question' in r,
    toRow: (raw, benchmark, fallbackId) => {
      let list: unknown = raw.possible_answers;
      if (typeof list === 'string') {
        const textValue = list;
        try {
          list = JSON.parse(textValue);
        } catch (e) {
          throw new Error(`field "possible_answers" is text that is not a JSON list (${jsonSyntaxText(e, textValue)})`);
        }
      }
      const answers = aliases(Array.isArray(list) ? list : []);
      if (answers.length === 0) throw new Error('field "possible_answers" holds no answer');
      return { id: pickId(raw, fallbackId), question: String(raw.question), answers, benchmark, meta: rest(raw, ['question', 'possible_answers']) };
    },
  },
  '2wiki': {
    description: '2WikiMultihopQA: {_id, question, answer, answer_aliases?, context: [[title, sentences]], supporting_facts?, evidences?}',
    layouts: ['list', 'lines'],
    domain: 'qa',
    schema: z.looseObject({
      question: text,
      answer: text,
      answer_aliases: z.array(z.string()).optional(),
      context: contextSchema,
      supporting_facts: z.array(z.tuple([z.string(), z.number().int()])).optional(),
    }),
    detect: (r) => 'context' in r && ('evidences' in r || 'answer_aliases' in r),
    toRow: (raw, benchmark, fallbackId) => ({
      id: pickId(raw, fallbackId),
      question: String(raw.question),
      answers: aliases(raw.answer, raw.answer_aliases ?? []),
      benchmark,
      meta: { ...rest(raw, ['question', 'answer', 'answer_aliases', 'context']), ...(raw.supporting_facts ? { supportingTitles: supportingTitles(raw) } : {}) },
    }),
    passages: contextPassages,
  },
  musique: {
    description: 'MuSiQue: {id, question, answer, answer_aliases, paragraphs: [{title, paragraph_text, is_supporting}]}',
    layouts: ['lines', 'list'],
    domain: 'qa',
    schema: z.looseObject({
      question: text,
      answer: text,
      answer_aliases: z.array(z.string()).default([]),
      paragraphs: z.array(z.looseObject({ title: z.string(), paragraph_text: z.string(), is_supporting: z.boolean().optional() })),
    }),
    detect: (r) => 'paragraphs' in r && 'question' in r,
    toRow: (raw, benchmark, fallbackId) => {
      const paragraphs = raw.paragraphs as { title: string; is_supporting?: boolean }[];
      return {
        id: pickId(raw, fallbackId),
        question: String(raw.question),
        answers: aliases(raw.answer, raw.answer_aliases),
        benchmark,
        meta: {
          ...rest(raw, ['question', 'answer', 'answer_aliases', 'paragraphs']),
          supportingTitles: [...new Set(paragraphs.filter((p) => p.is_supporting).map((p) => p.title))],
        },
      };
    },
    passages: (raw) => (raw.paragraphs as { title: string; paragraph_text: string }[]).map((p) => ({ title: p.title, text: p.paragraph_text })),
  },
  verl: {
    description: "verl's RL parquet (DAPO-Math, Search-R1): {data_source, prompt: [{role, content}], reward_model: {ground_truth}, extra_info}",
    layouts: ['table', 'lines'],
    domain: (raw) => {
      const ability = String(raw.ability ?? '').toLowerCase();
      if (ability.includes('math')) return 'math';
      const gt = (raw.reward_model as Raw).ground_truth;
      return typeof gt === 'string' || typeof gt === 'number' ? 'math' : 'qa';
    },
    schema: z.looseObject({
      data_source: z.string(),
      prompt: z.array(z.looseObject({ role: z.string(), content: z.string() })).min(1),
      reward_model: z.looseObject({
        ground_truth: z.union([text, z.number(), z.looseObject({ target: z.union([text, z.array(text).min(1)]) })]),
      }),
      extra_info: z.record(z.string(), z.unknown()).nullish(),
    }),
    detect: (r) => 'data_source' in r && 'reward_model' in r,
    toRow: (raw, benchmark, fallbackId) => {
      const extra = (raw.extra_info ?? {}) as Raw;
      const index = extra.index;
      return {
        id: typeof index === 'number' || typeof index === 'string' ? `${benchmark}-${index}` : pickId(raw, fallbackId),
        question: verlQuestion(raw),
        answers: verlGold(raw),
        benchmark,
        meta: { ...rest(raw, ['prompt', 'reward_model', 'extra_info']), ...extra, prompt: raw.prompt },
      };
    },
  },
} satisfies Record<DatasetFormat, FormatSpec>;

/** The order detection tries formats in: the most specific fields first. */
const DETECT_ORDER: readonly DatasetFormat[] = [
  'verl',
  'musique',
  '2wiki',
  'hotpot',
  'olympiad',
  'popqa',
  'triviaqa',
  'flashrag',
  'minerva',
  'math',
  'nq',
  'gsm8k',
  'qa',
];

export function getFormat(name: string): FormatSpec {
  if (!Object.hasOwn(FORMATS, name)) {
    throw new Error(`unknown dataset format "${name}"; valid formats: ${DATASET_FORMATS.join(', ')}`);
  }
  return FORMATS[name as DatasetFormat];
}

/** Guess the format of a record (the first one of a file); `layout` true means a JSON list. */
export function detectFormat(first: unknown, layout: DatasetLayout | boolean): DatasetFormat | null {
  if (first === null || typeof first !== 'object' || Array.isArray(first)) return null;
  const at: DatasetLayout = layout === true ? 'list' : layout === false ? 'lines' : layout;
  const r = first as Raw;
  return DETECT_ORDER.find((f) => (FORMATS[f].layouts as readonly DatasetLayout[]).includes(at) && getFormat(f).detect(r)) ?? null;
}
