/**
 * Loaders for the dataset formats the communities publish (see ../shared/data/README.md):
 * MATH500 / AIME / AMC (`problem`, `answer`, AMC's answer a float), GSM8K (`question`, answer
 * after `#### `), NQ-open (`question`, `answer` list), FlashRAG / Search-R1 (`question`,
 * `golden_answers`), one-answer QA (`question`, `answer` string: hotpotqa_500, bamboogle) and
 * HotpotQA's distractor JSON list. Each format is one entry in a typed registry with a zod
 * schema; all become `DatasetRow`s.
 *
 * A malformed line is an error naming the file and the line; nothing is half-imported: every
 * line is parsed and validated before any row is returned. The format is detected from the
 * first record when not given. Node-only (reads files). Not here: corpora (corpus.ts).
 * Tested by test/core/data/datasets.test.ts on every file in ../shared/data.
 */
import { readFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { z } from 'zod';
import { formatSchemaError } from '../util/schemaError';
import type { DatasetRow } from './types';

export const DATASET_FORMATS = ['math', 'gsm8k', 'nq', 'flashrag', 'qa', 'hotpot'] as const;
export type DatasetFormat = (typeof DATASET_FORMATS)[number];

const idField = z.union([z.string(), z.number()]).optional();
const text = z.string().min(1);

interface FormatSpec {
  description: string;
  /** The whole file is one JSON list (true) or one JSON object per line (false). */
  jsonList: boolean;
  schema: z.ZodType<Record<string, unknown>>;
  /** Build the row; `fallbackId` is `<benchmark>-<line or index>`. */
  toRow(raw: Record<string, unknown>, benchmark: string, fallbackId: string): DatasetRow;
}

/** Split a record into the fields the row uses and everything else (kept as meta). */
function rest(raw: Record<string, unknown>, used: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(raw).filter(([k]) => !used.includes(k)));
}

function pickId(raw: Record<string, unknown>, fallback: string): string {
  for (const k of ['id', '_id', 'unique_id', 'idx']) {
    const v = raw[k];
    if (typeof v === 'string' || typeof v === 'number') return String(v);
  }
  return fallback;
}

/** `27.0` -> `27`, `1e21` stays as written by String(). */
function numberText(v: string | number): string {
  return typeof v === 'number' ? String(v) : v.trim();
}

export const FORMATS = {
  math: {
    description: 'MATH500 / AIME / AMC: {problem, answer (string or number)}',
    jsonList: false,
    schema: z.looseObject({ problem: text, answer: z.union([text, z.number()]), id: idField }),
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
    jsonList: false,
    schema: z.looseObject({ question: text, answer: z.string().regex(/####\s*\S/, 'no "#### <answer>" at the end') }),
    toRow: (raw, benchmark, fallbackId) => {
      const full = String(raw.answer);
      const final = full.slice(full.lastIndexOf('####') + 4).trim().replace(/,/g, '');
      return { id: pickId(raw, fallbackId), question: String(raw.question), answers: [final], benchmark, meta: { ...rest(raw, ['question', 'answer']), solution: full } };
    },
  },
  nq: {
    description: 'NQ-open: {question, answer: [aliases]}',
    jsonList: false,
    schema: z.looseObject({ question: text, answer: z.array(text).min(1) }),
    toRow: (raw, benchmark, fallbackId) => ({
      id: pickId(raw, fallbackId), question: String(raw.question), answers: (raw.answer as string[]).slice(), benchmark, meta: rest(raw, ['question', 'answer']),
    }),
  },
  flashrag: {
    description: 'FlashRAG / Search-R1: {id, question, golden_answers: [aliases]}',
    jsonList: false,
    schema: z.looseObject({ question: text, golden_answers: z.array(text).min(1), id: idField }),
    toRow: (raw, benchmark, fallbackId) => ({
      id: pickId(raw, fallbackId), question: String(raw.question), answers: (raw.golden_answers as string[]).slice(), benchmark, meta: rest(raw, ['question', 'golden_answers']),
    }),
  },
  qa: {
    description: 'One-answer QA (hotpotqa_500, bamboogle): {question, answer: string}',
    jsonList: false,
    schema: z.looseObject({ question: text, answer: text }),
    toRow: (raw, benchmark, fallbackId) => ({
      id: pickId(raw, fallbackId), question: String(raw.question), answers: [String(raw.answer)], benchmark, meta: rest(raw, ['question', 'answer']),
    }),
  },
  hotpot: {
    description: 'HotpotQA distractor JSON list: [{_id, question, answer, supporting_facts, context}]',
    jsonList: true,
    schema: z.looseObject({
      _id: z.string().min(1),
      question: text,
      answer: text,
      supporting_facts: z.array(z.tuple([z.string(), z.number().int()])),
      context: z.array(z.tuple([z.string(), z.array(z.string())])),
    }),
    toRow: (raw, benchmark, fallbackId) => {
      const facts = raw.supporting_facts as [string, number][];
      return {
        id: pickId(raw, fallbackId),
        question: String(raw.question),
        answers: [String(raw.answer)],
        benchmark,
        meta: { ...rest(raw, ['_id', 'question', 'answer']), supportingTitles: [...new Set(facts.map((f) => f[0]))] },
      };
    },
  },
} satisfies Record<DatasetFormat, FormatSpec>;

export function getFormat(name: string): FormatSpec {
  if (!Object.hasOwn(FORMATS, name)) {
    throw new Error(`unknown dataset format "${name}"; valid formats: ${DATASET_FORMATS.join(', ')}`);
  }
  return FORMATS[name as DatasetFormat];
}

/** Guess the format of a record (the first one of a file). */
export function detectFormat(first: unknown, jsonList: boolean): DatasetFormat | null {
  if (first === null || typeof first !== 'object' || Array.isArray(first)) return null;
  const r = first as Record<string, unknown>;
  if (jsonList && 'supporting_facts' in r && 'context' in r) return 'hotpot';
  if ('golden_answers' in r) return 'flashrag';
  if ('problem' in r) return 'math';
  if ('question' in r && Array.isArray(r.answer)) return 'nq';
  if ('question' in r && typeof r.answer === 'string') return /####\s*\S+\s*$/.test(r.answer) ? 'gsm8k' : 'qa';
  return null;
}

export interface LoadDatasetOptions {
  /** Benchmark name for the rows; default the file name without extension. */
  benchmark?: string;
}

/**
 * Load a dataset file into normalised rows. Throws `Error("<file>:<line>: ...")` on the first
 * malformed record (for a JSON list, `<file>: item <i>: ...`), before returning anything.
 */
export function loadDataset(path: string, format?: DatasetFormat, options: LoadDatasetOptions = {}): DatasetRow[] {
  const content = readFileSync(path, 'utf8');
  const benchmark = options.benchmark ?? basename(path, extname(path));
  const isList = content.trimStart().startsWith('[');
  const records: { where: string; raw: unknown; fallbackId: string }[] = [];
  if (isList) {
    let list: unknown;
    try {
      list = JSON.parse(content);
    } catch (e) {
      throw new Error(`${path}: invalid JSON: ${(e as Error).message}`);
    }
    if (!Array.isArray(list)) throw new Error(`${path}: expected a JSON list`);
    list.forEach((raw, i) => records.push({ where: `${path}: item ${i}`, raw, fallbackId: `${benchmark}-${i}` }));
  } else {
    const lines = content.split('\n');
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch (e) {
        throw new Error(`${path}:${i + 1}: invalid JSON: ${(e as Error).message}`);
      }
      records.push({ where: `${path}:${i + 1}`, raw, fallbackId: `${benchmark}-${i + 1}` });
    });
  }
  if (records.length === 0) throw new Error(`${path}: no records`);
  const fmtName = format ?? detectFormat(records[0].raw, isList);
  if (fmtName === null) {
    throw new Error(`${records[0].where}: cannot detect the dataset format; pass one of: ${DATASET_FORMATS.join(', ')}`);
  }
  const spec = getFormat(fmtName);
  if (spec.jsonList !== isList) {
    throw new Error(`${path}: format "${fmtName}" expects ${spec.jsonList ? 'a JSON list' : 'one JSON object per line'}`);
  }
  const rows: DatasetRow[] = [];
  const seen = new Set<string>();
  for (const rec of records) {
    const parsed = spec.schema.safeParse(rec.raw);
    if (!parsed.success) throw new Error(`${rec.where}: ${formatSchemaError(`${fmtName} record`, parsed.error, rec.raw)}`);
    const row = spec.toRow(parsed.data, benchmark, rec.fallbackId);
    if (seen.has(row.id)) throw new Error(`${rec.where}: duplicate id "${row.id}"`);
    seen.add(row.id);
    rows.push(row);
  }
  return rows;
}
