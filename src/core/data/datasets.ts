/**
 * Loaders for the dataset formats the communities publish (see ../shared/data/README.md and
 * the paper's Tables 1-2): MATH500 / AIME / AMC (`problem`, `answer`), Minerva (`problem`,
 * `solution`: the gold is its last `\boxed{}`), OlympiadBench (`final_answer` list), GSM8K
 * (answer after `#### `), NQ-open (`answer` list), FlashRAG / Search-R1 (`golden_answers`),
 * one-answer QA (hotpotqa_500, bamboogle), TriviaQA (`answer.value` + `answer.aliases`), PopQA
 * (`possible_answers`), HotpotQA and 2WikiMultihopQA (`context` paragraphs), MuSiQue
 * (`paragraphs`, `answer_aliases`) and verl's parquet layout (`data_source`, `prompt`,
 * `reward_model.ground_truth`, `extra_info`), in which DAPO-Math and the Search-R1 splits ship.
 * Each format is one entry in a typed registry with a zod schema and a detector; all become
 * `DatasetRow`s, and the multi-hop formats also give the passages of their own small corpus.
 *
 * A malformed line is an error naming the file and the line; nothing is half-imported: every
 * record is parsed and validated before any row is returned. The format is detected from the
 * first record when not given. Node-only (reads files). Not here: corpora (corpus.ts), parquet
 * decoding (parquet.ts).
 * Tested by test/core/data/datasets.test.ts (every file in ../shared/data) and formats.test.ts.
 */
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { z } from 'zod';
import { extractLastBoxed } from '../eval/latex';
import { formatSchemaError } from '../util/schemaError';
import { parseJsonl } from './jsonl';
import { isParquetMagic, readParquetRows } from './parquet';
import type { DatasetRow, Passage } from './types';

export const DATASET_FORMATS = ['math', 'gsm8k', 'nq', 'flashrag', 'qa', 'hotpot', 'minerva', 'olympiad', 'triviaqa', 'popqa', '2wiki', 'musique', 'verl'] as const;
export type DatasetFormat = (typeof DATASET_FORMATS)[number];

/** How the records sit in the file: one JSON object per line, one JSON list, or a parquet table. */
export type DatasetLayout = 'lines' | 'list' | 'table';
export type DatasetDomain = 'math' | 'qa';

const idField = z.union([z.string(), z.number()]).optional();
const text = z.string().min(1);
type Raw = Record<string, unknown>;

interface FormatSpec {
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
  return s.trim().replace(/^\$+|\$+$/g, '').trim();
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
      const final = full.slice(full.lastIndexOf('####') + 4).trim().replace(/,/g, '');
      return { id: pickId(raw, fallbackId), question: String(raw.question), answers: [final], benchmark, meta: { ...rest(raw, ['question', 'answer']), solution: full } };
    },
  },
  nq: {
    description: 'NQ-open: {question, answer: [aliases]}',
    layouts: ['lines'],
    domain: 'qa',
    schema: z.looseObject({ question: text, answer: z.array(text).min(1) }),
    detect: (r) => 'question' in r && Array.isArray(r.answer),
    toRow: (raw, benchmark, fallbackId) => ({
      id: pickId(raw, fallbackId), question: String(raw.question), answers: (raw.answer as string[]).slice(), benchmark, meta: rest(raw, ['question', 'answer']),
    }),
  },
  flashrag: {
    description: 'FlashRAG / Search-R1: {id, question, golden_answers: [aliases]}',
    layouts: ['lines'],
    domain: 'qa',
    schema: z.looseObject({ question: text, golden_answers: z.array(text).min(1), id: idField }),
    detect: (r) => 'golden_answers' in r,
    toRow: (raw, benchmark, fallbackId) => ({
      id: pickId(raw, fallbackId), question: String(raw.question), answers: (raw.golden_answers as string[]).slice(), benchmark, meta: rest(raw, ['question', 'golden_answers']),
    }),
  },
  qa: {
    description: 'One-answer QA (hotpotqa_500, bamboogle): {question, answer: string}',
    layouts: ['lines'],
    domain: 'qa',
    schema: z.looseObject({ question: text, answer: text }),
    detect: (r) => 'question' in r && typeof r.answer === 'string',
    toRow: (raw, benchmark, fallbackId) => ({
      id: pickId(raw, fallbackId), question: String(raw.question), answers: [String(raw.answer)], benchmark, meta: rest(raw, ['question', 'answer']),
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
      id: pickId(raw, fallbackId), question: String(raw.problem), answers: [extractLastBoxed(String(raw.solution))!], benchmark, meta: rest(raw, ['problem']),
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
      return { id: pickId(raw, fallbackId), question: String(raw.question), answers: aliases(a.value, a.aliases), benchmark, meta: rest(raw, ['question', 'answer']) };
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
        } catch {
          throw new Error(`field "possible_answers" is text that is not a JSON list: ${textValue.slice(0, 60)}`);
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
        meta: { ...rest(raw, ['question', 'answer', 'answer_aliases', 'paragraphs']), supportingTitles: [...new Set(paragraphs.filter((p) => p.is_supporting).map((p) => p.title))] },
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
const DETECT_ORDER: readonly DatasetFormat[] = ['verl', 'musique', '2wiki', 'hotpot', 'olympiad', 'popqa', 'triviaqa', 'flashrag', 'minerva', 'math', 'nq', 'gsm8k', 'qa'];

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

export interface LoadDatasetOptions {
  /** Benchmark name for the rows; default the file name without extension. */
  benchmark?: string;
  /** Keep only rows whose `split` (or verl's `extra_info.split`) is this. */
  split?: string;
  /** Keep the first `limit` rows (after the split filter). */
  limit?: number;
}

/** A loaded file: its rows, what it was read as, and the passages its records carry. */
export interface DatasetFile {
  path: string;
  format: DatasetFormat;
  domain: DatasetDomain;
  rows: DatasetRow[];
  /** The multi-hop formats' own paragraphs (deduplicated); empty for the others. */
  passages: Passage[];
}

/** JSON-safe copies: parquet INT64 columns arrive as BigInt. */
function plain(x: unknown): unknown {
  if (typeof x === 'bigint') return Number(x);
  if (Array.isArray(x)) return x.map(plain);
  if (x !== null && typeof x === 'object' && !(x instanceof Date)) return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, plain(v)]));
  return x;
}

function fileHead(path: string): Uint8Array {
  const fd = openSync(path, 'r');
  try {
    const head = new Uint8Array(4);
    readSync(fd, head, 0, 4, 0);
    return head;
  } finally {
    closeSync(fd);
  }
}

interface SourceRecord { where: string; raw: unknown; fallbackId: string }

function readRecords(path: string, benchmark: string): { layout: DatasetLayout; records: SourceRecord[] } {
  if (extname(path).toLowerCase() === '.parquet' || isParquetMagic(fileHead(path))) {
    const rows = readParquetRows(path);
    return { layout: 'table', records: rows.map((raw, i) => ({ where: `${path}: row ${i}`, raw: plain(raw), fallbackId: `${benchmark}-${i}` })) };
  }
  const content = readFileSync(path, 'utf8');
  if (content.trimStart().startsWith('[')) {
    let list: unknown;
    try {
      list = JSON.parse(content);
    } catch (e) {
      throw new Error(`${path}: invalid JSON: ${(e as Error).message}`);
    }
    if (!Array.isArray(list)) throw new Error(`${path}: expected a JSON list`);
    return { layout: 'list', records: list.map((raw, i) => ({ where: `${path}: item ${i}`, raw, fallbackId: `${benchmark}-${i}` })) };
  }
  const records = parseJsonl(content, path).map(({ raw, line }): SourceRecord => ({ where: `${path}:${line}`, raw, fallbackId: `${benchmark}-${line}` }));
  return { layout: 'lines', records };
}

/**
 * Load a dataset file: every record validated and converted before anything is returned.
 * Throws `Error("<file>:<line>: ...")` on the first malformed record (`<file>: item <i>` in a
 * JSON list, `<file>: row <i>` in a parquet table).
 */
export function loadDatasetFile(path: string, format?: DatasetFormat, options: LoadDatasetOptions = {}): DatasetFile {
  const benchmark = options.benchmark ?? basename(path, extname(path));
  const { layout, records } = readRecords(path, benchmark);
  if (records.length === 0) throw new Error(`${path}: no records`);
  const fmtName = format ?? detectFormat(records[0].raw, layout);
  if (fmtName === null) {
    throw new Error(`${records[0].where}: cannot detect the dataset format; pass one of: ${DATASET_FORMATS.join(', ')}`);
  }
  const spec = getFormat(fmtName);
  if (!spec.layouts.includes(layout)) {
    throw new Error(`${path}: format "${fmtName}" is read from ${spec.layouts.map((l) => LAYOUT_TEXT[l]).join(' or ')}, not ${LAYOUT_TEXT[layout]}`);
  }
  const rows: DatasetRow[] = [];
  const seen = new Set<string>();
  const passages = new Map<string, Passage>();
  let domain: DatasetDomain | null = null;
  for (const rec of records) {
    const parsed = spec.schema.safeParse(rec.raw);
    if (!parsed.success) throw new Error(`${rec.where}: ${formatSchemaError(`${fmtName} record`, parsed.error, rec.raw)}`);
    let row: DatasetRow;
    try {
      row = spec.toRow(parsed.data, benchmark, rec.fallbackId);
    } catch (err) {
      throw new Error(`${rec.where}: ${fmtName} record: ${(err as Error).message}`);
    }
    if (row.answers.length === 0) throw new Error(`${rec.where}: ${fmtName} record: no gold answer`);
    if (seen.has(row.id)) throw new Error(`${rec.where}: duplicate id "${row.id}"`);
    const d = typeof spec.domain === 'function' ? spec.domain(parsed.data) : spec.domain;
    if (domain !== null && d !== domain) throw new Error(`${rec.where}: a ${d} record in a file whose first record is ${domain}; one file holds one domain`);
    domain = d;
    seen.add(row.id);
    if (options.split !== undefined && (row.meta.split ?? (row.meta.extra_info as Raw | undefined)?.split) !== options.split) continue;
    rows.push(row);
    for (const p of spec.passages?.(parsed.data) ?? []) {
      const key = `${p.title}\u0001${p.text}`;
      if (!passages.has(key)) passages.set(key, { id: `${benchmark}/p${passages.size}`, title: p.title, text: p.text });
    }
  }
  if (options.split !== undefined && rows.length === 0) throw new Error(`${path}: no row has split "${options.split}"`);
  const limited = options.limit !== undefined ? rows.slice(0, options.limit) : rows;
  return { path, format: fmtName, domain: domain!, rows: limited, passages: [...passages.values()] };
}

const LAYOUT_TEXT: Record<DatasetLayout, string> = { lines: 'one JSON object per line', list: 'a JSON list', table: 'a parquet table' };

/** The rows of a dataset file (see loadDatasetFile). */
export function loadDataset(path: string, format?: DatasetFormat, options: LoadDatasetOptions = {}): DatasetRow[] {
  return loadDatasetFile(path, format, options).rows;
}
