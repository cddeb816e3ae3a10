/**
 * `srpo-lab suite`: experiment suites (src/core/suites), a matrix of runs rows x seeds stored in
 * the lab database, queued and resumable.
 *
 *   suite run FILE | --preset A[,B...] --seeds 1,2,3 [--vary key=v1,v2[;key2=...]] [--set k=v ...]
 *             [--baseline LABEL] [--name NAME] [--parallel N]     create the suite and run it
 *   suite resume ID [--parallel N]     finish a suite after Ctrl-C or a crash (completed runs are
 *                                      not redone, interrupted ones resume from their checkpoint)
 *   suite show ID [--baseline LABEL] [--format text|md|csv]       the paper's tables
 *   suite list                                                     the suites and their progress
 *
 * One line per finished run while it runs. Not here: the queue (the lab host's one scheduler,
 * src/core/host/runControl.ts, driven by host/suiteRun.ts with --parallel as its engine limit),
 * the spec and the tables (src/core/suites, src/shared/suites.ts). Tests: test/cli/suite.test.ts.
 */
import { readFileSync } from 'node:fs';
import { resolveSuiteSpec, expandSuite, type SuiteSpecInput } from '../core/suites/spec';
import { runSuite } from '../core/host/suiteRun';
import { suiteDetail, suiteSummaries } from '../core/suites/tableData';
import { createSuite } from '../core/store/suites';
import { suiteSectionMarkdown, suiteTableCsv, suiteTableRows } from '../shared/report';
import type { SuiteDetail } from '../shared/suites';
import { parseValue, type ParsedArgs } from './args';
import type { CliIO } from './io';
import { openLab, openLabForReading } from './lab';

export const SUITE_OPTIONS = ['db', 'preset', 'seeds', 'vary', 'parallel', 'baseline', 'name', 'format'];

const list = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

function seedsOf(v: string | undefined): number[] {
  const seeds = list(v).map(Number);
  if (!seeds.length || seeds.some((s) => !Number.isInteger(s) || s < 0)) throw new Error(`--seeds expects integers like 1,2,3, got ${v ?? 'nothing'}`);
  return seeds;
}

/** `key=v1,v2;key2=a,b` -> vary entries; values parsed like --set values. */
function varyOf(v: string | undefined): { key: string; values: unknown[] }[] {
  if (!v) return [];
  return v.split(';').map((part) => {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new Error(`--vary expects key=v1,v2, got ${part}`);
    const key = part.slice(0, eq).trim();
    return { key, values: list(part.slice(eq + 1)).map((x) => parseValue(key, x)) };
  });
}

/** The suite spec of `suite run`'s arguments: a file, or presets x seeds; flags override the file. */
export function suiteSpecFromArgs(args: ParsedArgs): SuiteSpecInput {
  const file = args.positionals[1];
  let spec: Record<string, unknown> = {};
  if (file) {
    try {
      spec = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    } catch (err) {
      throw new Error(`suite file ${file}: ${(err as Error).message}`);
    }
  } else if (!args.options.preset) throw new Error('suite run needs a suite FILE or --preset NAME[,NAME...] with --seeds 1,2,3');
  if (args.options.preset) spec.rows = list(args.options.preset).map((preset) => ({ preset }));
  if (args.options.seeds) spec.seeds = seedsOf(args.options.seeds);
  if (args.options.vary) spec.vary = varyOf(args.options.vary);
  if (args.options.baseline) spec.baseline = args.options.baseline;
  if (args.options.name) spec.name = args.options.name;
  if (Object.keys(args.sets).length) spec.sets = { ...(spec.sets as object | undefined), ...args.sets };
  return spec as SuiteSpecInput;
}

function idArg(args: ParsedArgs): number {
  const v = args.positionals[1];
  const id = Number(v);
  if (!Number.isInteger(id) || id < 1) throw new Error(`suite ${args.positionals[0]} expects a suite id (see srpo-lab suite list), got ${v ?? 'nothing'}`);
  return id;
}

function parallelOf(args: ParsedArgs): number {
  const n = Number(args.options.parallel ?? 1);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new Error(`--parallel expects an integer 1..64, got ${args.options.parallel}`);
  return n;
}

/** Aligned plain-text tables for a terminal. */
function textTables(d: SuiteDetail): string {
  const parts = [`suite ${d.id} "${d.name}": ${d.rows.length} rows x ${d.seeds.length} seeds, ${d.counts.completed ?? 0} of ${d.total} runs completed`];
  for (const t of suiteTableRows(d.table)) {
    const widths = t.head.map((h, i) => Math.max(h.length, ...t.rows.map((r) => r[i].length)));
    const line = (cells: string[]) =>
      cells
        .map((c, i) => c.padEnd(widths[i]))
        .join('  ')
        .trimEnd();
    parts.push('', t.title, line(t.head), ...t.rows.map(line));
  }
  return parts.join('\n');
}

const SHOW_FORMATS = {
  text: textTables,
  md: suiteSectionMarkdown,
  csv: (d) => suiteTableCsv(d.table).trimEnd(),
} satisfies Record<string, (d: SuiteDetail) => string>;

const SUBCOMMANDS = {
  async run(args, out, io) {
    const spec = resolveSuiteSpec(suiteSpecFromArgs(args));
    const cells = expandSuite(spec); // every config validated before anything is stored
    const { store, dbPath } = openLab(args, true, out);
    try {
      const suiteId = createSuite(store.db, { name: spec.name || 'suite', spec, cells: cells.map((c) => ({ label: c.label, seed: c.seed })) });
      await runSuite(suiteId, { store, dbPath, launcher: io.launcher, parallel: parallelOf(args), out, onInterrupt: io.onInterrupt });
    } finally {
      store.close();
    }
  },
  async resume(args, out, io) {
    const { store, dbPath } = openLab(args, false, out);
    try {
      await runSuite(idArg(args), { store, dbPath, launcher: io.launcher, parallel: parallelOf(args), out, onInterrupt: io.onInterrupt });
    } finally {
      store.close();
    }
  },
  async show(args, out) {
    const { store, dbPath } = openLabForReading(args);
    try {
      const id = idArg(args);
      const detail = suiteDetail(store, id, { baseline: args.options.baseline });
      if (!detail) throw new Error(`no suite ${id} in ${dbPath}`);
      const format = args.options.format ?? 'text';
      if (!Object.hasOwn(SHOW_FORMATS, format)) throw new Error(`--format expects ${Object.keys(SHOW_FORMATS).join(', ')}, got ${format}`);
      out(SHOW_FORMATS[format as keyof typeof SHOW_FORMATS](detail));
    } finally {
      store.close();
    }
  },
  async list(args, out) {
    const { store } = openLabForReading(args);
    try {
      const suites = suiteSummaries(store);
      if (!suites.length) return out('no suites yet (srpo-lab suite run ...)');
      for (const s of suites) {
        const counts = Object.entries(s.counts)
          .map(([k, v]) => `${v} ${k}`)
          .join(', ');
        out(`${String(s.id).padStart(3)}  ${s.name}  ${s.rows.length} rows x ${s.seeds.length} seeds  (${counts})  baseline "${s.baseline}"`);
      }
    } finally {
      store.close();
    }
  },
} satisfies Record<string, (args: ParsedArgs, out: (line: string) => void, io: CliIO) => Promise<void>>;

export async function suiteCommand(args: ParsedArgs, out: (line: string) => void, io: CliIO): Promise<void> {
  const sub = args.positionals[0];
  if (!sub || !Object.hasOwn(SUBCOMMANDS, sub)) throw new Error(`suite expects one of ${Object.keys(SUBCOMMANDS).join(', ')}, got ${sub ?? 'nothing'}`);
  await SUBCOMMANDS[sub as keyof typeof SUBCOMMANDS](args, out, io);
}
