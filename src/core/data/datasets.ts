/**
 * Loads a dataset file in any of the published formats (the registry: datasetFormats.ts): JSONL,
 * a JSON list or a parquet table, the format detected from the first record when not given.
 * All records become `DatasetRow`s, and the multi-hop formats also give the passages of their
 * own small corpus.
 *
 * A malformed line is an error naming the file and the line; nothing is half-imported: every
 * record is parsed and validated before any row is returned. Node-only (reads files). Not here:
 * the formats themselves (datasetFormats.ts), corpora (corpus.ts), parquet decoding (parquet.ts).
 * Tested by test/core/data/datasets.test.ts (every file in ../shared/data) and formats.test.ts.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { schemaProblems } from '../util/schemaError';
import { DATASET_FORMATS, detectFormat, getFormat, type DatasetDomain, type DatasetFormat, type DatasetLayout, type Raw } from './datasetFormats';
import { jsonSyntaxText, parseJsonl } from './jsonl';
import { isParquetMagic, readParquetRows } from './parquet';
import type { DatasetRow, Passage } from './types';
import { readUtf8File } from './utf8';

export { DATASET_FORMATS, FORMATS, detectFormat, getFormat, type DatasetDomain, type DatasetFormat, type DatasetLayout } from './datasetFormats';

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

interface SourceRecord {
  where: string;
  raw: unknown;
  fallbackId: string;
}

function readRecords(path: string, benchmark: string): { layout: DatasetLayout; records: SourceRecord[] } {
  if (extname(path).toLowerCase() === '.parquet' || isParquetMagic(fileHead(path))) {
    const rows = readParquetRows(path);
    return { layout: 'table', records: rows.map((raw, i) => ({ where: `${path}: row ${i}`, raw: plain(raw), fallbackId: `${benchmark}-${i}` })) };
  }
  const content = readUtf8File(path); // invalid UTF-8 refused naming the line, never turned into U+FFFD
  if (content.trimStart().startsWith('[')) {
    let list: unknown;
    try {
      list = JSON.parse(content);
    } catch (e) {
      throw new Error(`${path}: invalid JSON: ${jsonSyntaxText(e, content)}`);
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
  const seen = new Map<string, string>(); // id -> where it first appeared
  const passages = new Map<string, Passage>();
  let domain: DatasetDomain | null = null;
  for (const rec of records) {
    const parsed = spec.schema.safeParse(rec.raw);
    if (!parsed.success) throw new Error(`${rec.where}: ${recordProblemText(`${fmtName} record`, parsed.error, rec.raw)}`);
    let row: DatasetRow;
    try {
      row = spec.toRow(parsed.data, benchmark, rec.fallbackId);
    } catch (err) {
      throw new Error(`${rec.where}: ${fmtName} record: ${(err as Error).message}`);
    }
    if (row.answers.length === 0) throw new Error(`${rec.where}: ${fmtName} record: no gold answer`);
    const first = seen.get(row.id);
    if (first !== undefined) throw new Error(`${rec.where}: duplicate id (the same as ${first})`);
    const d = typeof spec.domain === 'function' ? spec.domain(parsed.data) : spec.domain;
    if (domain !== null && d !== domain) throw new Error(`${rec.where}: a ${d} record in a file whose first record is ${domain}; one file holds one domain`);
    domain = d;
    seen.set(row.id, rec.where);
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

/**
 * A record's schema problems as `field "PATH" = missing: ...` / `field "PATH": must be ...`: the
 * field and what it must be, never the value the file holds (formatSchemaError quotes values,
 * right for a config a person typed, not for a file's contents).
 */
function recordProblemText(what: string, error: Parameters<typeof schemaProblems>[0], raw: unknown): string {
  const lines = schemaProblems(error, raw).map(({ path, message, value, unknown }) =>
    unknown ? `unknown field "${path}"` : `field "${path || '(record)'}"${value === undefined ? ' = missing' : ''}: ${message}`,
  );
  return `${what}: ${lines.join('; ')}`;
}

const LAYOUT_TEXT: Record<DatasetLayout, string> = { lines: 'one JSON object per line', list: 'a JSON list', table: 'a parquet table' };

/** The rows of a dataset file (see loadDatasetFile). */
export function loadDataset(path: string, format?: DatasetFormat, options: LoadDatasetOptions = {}): DatasetRow[] {
  return loadDatasetFile(path, format, options).rows;
}
