/**
 * `srpo-lab eval` on data files as a user runs it (in-process through runCli): `--data ...
 * --policy gold` prints the paper's table with the macro row and, with --json, a last line of
 * the documented shape; --corpus indexes a corpus file beside the database (once); a preset's
 * missing dataset slots are listed; --model runs the tiny random qwen3 fixture; a missing model
 * folder, an unknown policy and a missing --workflow are clear errors. Files written here, so it runs without ../shared/data; one case on the real
 * MATH500 / AIME'24 files when present (the issue's own command line).
 */
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { tinyQwenFolder } from '../core/train/hfFixture';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/commands';
import type { CliIO } from '../../src/cli/io';
import { NodeForkLauncher } from '../../src/core/host/launcher';
import { HAS_SHARED_DATA, sharedPath } from '../core/data/sharedData';

async function cli(argv: string[]): Promise<{ code: number; lines: string[]; err: string }> {
  const lines: string[] = [];
  const err: string[] = [];
  const io: CliIO = { out: (l) => lines.push(l), tty: null, launcher: new NodeForkLauncher({ stdio: 'pipe' }), onInterrupt: () => () => undefined };
  const code = await runCli(argv, io, (l) => err.push(l));
  return { code, lines, err: err.join('\n') };
}

const dir = mkdtempSync(join(tmpdir(), 'srpo-evaldata-'));
const db = join(dir, 'lab.db');
const file = (name: string, rows: unknown[]): string => {
  const p = join(dir, name);
  writeFileSync(p, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return p;
};
const sums = file(
  'sums.jsonl',
  Array.from({ length: 6 }, (_, i) => ({ problem: `${i}+${i}`, answer: String(2 * i) })),
);
const fracs = file('fracs.jsonl', [
  { problem: 'half of 3/2', answer: '\\frac{3}{4}' },
  { problem: 'pairs', answer: '(1, 2)' },
]);
const qa = file('qa.jsonl', [
  { question: 'Where was Zarvo Quill born?', answer: ['Tellmar'] },
  { question: 'Which country is Tellmar in?', answer: ['Orvania'] },
]);
const corpus = file('corpus.jsonl', [
  { id: '1', contents: '"Tellmar"\nTellmar is a city in Orvania.' },
  { id: '2', contents: '"Zarvo Quill"\nZarvo Quill was born in Tellmar.' },
]);

describe('srpo-lab eval --data', () => {
  it('--policy gold: a table row per file, the macro row, and the --json last line', async () => {
    const r = await cli(['eval', '--data', `${sums},${fracs}`, '--workflow', 'math', '--policy', 'gold', '--json', '--db', db]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.lines[0]).toMatch(/^the gold policy .*workflow math; n 1/);
    const header = r.lines.find((l) => l.startsWith('benchmark'))!;
    expect(header.split(/\s+/)).toEqual(['benchmark', 'queries', 'avg@1', '%', 'pass@1', '%', 'tokens/q', 'calls/q', 'tools/q', 'U_tok', 'p50', 'ms']);
    expect(
      r.lines
        .find((l) => l.startsWith('sums'))!
        .split(/\s+/)
        .slice(0, 4),
    ).toEqual(['sums', '6', '100.0', '100.0']);
    expect(
      r.lines
        .find((l) => l.startsWith('macro'))!
        .split(/\s+/)
        .slice(0, 4),
    ).toEqual(['macro', '8', '100.0', '100.0']);
    expect(JSON.parse(r.lines[r.lines.length - 1])).toEqual({
      benchmarks: [
        { name: 'sums', queries: 6, avg: 1, pass: 1 },
        { name: 'fracs', queries: 2, avg: 1, pass: 1 },
      ],
      macro: { avg: 1, pass: 1 },
    });
  });

  it('--n and --limit: n samples of the first rows', async () => {
    const r = await cli(['eval', '--data', sums, '--workflow', 'single', '--policy', 'gold', '--n', '3', '--limit', '4', '--json', '--db', db]);
    expect(r.err).toBe('');
    expect(r.lines[0]).toMatch(/workflow single; n 3/);
    expect(JSON.parse(r.lines[r.lines.length - 1]).benchmarks[0]).toEqual({ name: 'sums', queries: 4, avg: 1, pass: 1 });
  });

  it('--corpus: the search workflow over a corpus file, indexed once beside the database', async () => {
    const first = await cli(['eval', '--data', qa, '--workflow', 'search', '--corpus', corpus, '--policy', 'gold', '--json', '--db', db]);
    expect(first.err).toBe('');
    expect(first.lines.some((l) => /^indexing corpus: 2 passages, 100\.0%/.test(l))).toBe(true);
    expect(JSON.parse(first.lines[first.lines.length - 1]).macro).toEqual({ avg: 1, pass: 1 });
    expect(readdirSync(`${db}.corpora`)).toHaveLength(1);
    const second = await cli(['eval', '--data', qa, '--workflow', 'search', '--corpus', corpus, '--policy', 'gold', '--db', db]);
    expect(second.lines.some((l) => l.startsWith('indexing corpus'))).toBe(false);
  });

  it('a preset with its dataset slots: missing ones listed; filled, the preset runs with the gold policy', async () => {
    const missing = await cli(['eval', '--preset', 'math-paper-data', '--set', `tasks.paths.aime24=${sums}`, '--policy', 'gold', '--db', db]);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/no file given for "\$train", "\$aime25", "\$amc23", "\$math500", "\$minerva", "\$olympiadbench"/);
    const sets = ['train', 'aime24', 'aime25', 'amc23', 'math500', 'minerva', 'olympiadbench'].flatMap((s) => ['--set', `tasks.paths.${s}=${sums}`]);
    const ok = await cli(['eval', '--preset', 'math-paper-data', ...sets, '--set', 'policies.kind=gold', '--json', '--db', db]);
    expect(ok.err).toBe('');
    expect(JSON.parse(ok.lines[ok.lines.length - 1]).benchmarks.map((b: { name: string }) => b.name)).toEqual([
      'aime24',
      'aime25',
      'amc23',
      'math500',
      'minerva',
      'olympiadbench',
    ]);
  });

  it('--model DIR: a Hugging Face model folder plays the roles (tiny random qwen3 fixture: a table, tokens counted)', async () => {
    // A copy with 4096 positions: the prompt carries the role's system turn, as in training.
    const model = tinyQwenFolder();
    const r = await cli([
      'eval',
      '--data',
      sums,
      '--workflow',
      'single',
      '--model',
      model,
      '--limit',
      '2',
      '--n',
      '2',
      '--set',
      'rollout.maxNewTokens=6',
      '--json',
      '--db',
      db,
    ]);
    expect(r.err).toBe('');
    expect(r.lines.find((l) => l.startsWith('model '))).toMatch(/qwen3-tiny \(qwen3\); backend \w+; max 6 new tokens/);
    const row = r.lines.find((l) => l.startsWith('sums'))!.split(/\s+/);
    expect(Number(row[4])).toBeGreaterThan(0); // tokens/q: the model generated
    expect(Number(row[4])).toBeLessThanOrEqual(6);
    const json = JSON.parse(r.lines[r.lines.length - 1]);
    expect(json.benchmarks[0]).toMatchObject({ name: 'sums', queries: 2 });
    expect(json.benchmarks[0].avg).toBeGreaterThanOrEqual(0);
  });

  it('errors a user sees', async () => {
    expect((await cli(['eval', '--data', sums, '--workflow', 'math', '--model', join(dir, 'm'), '--db', db])).err).toMatch(
      /model folder .*[/\\]m does not exist/,
    );
    expect((await cli(['eval', '--data', sums, '--workflow', 'math', '--policy', 'oracle', '--db', db])).err).toMatch(
      /--policy "oracle" is not a scripted policy; valid: gold/,
    );
    expect((await cli(['eval', '--data', sums, '--policy', 'gold', '--db', db])).err).toMatch(/eval --data needs --workflow math\|search\|single/);
    expect((await cli(['eval', '--data', sums, '--workflow', 'math', '--db', db])).err).toMatch(
      /eval needs exactly one of --policy gold, --run N, --model DIR/,
    );
    expect((await cli(['eval', '--data', qa, '--workflow', 'math', '--policy', 'gold', '--db', db])).err).toMatch(
      /task "qa" is qa, but workflow "math" takes math tasks/,
    );
    expect((await cli(['eval', '--data', join(dir, 'none.jsonl'), '--workflow', 'math', '--policy', 'gold', '--db', db])).err).toMatch(
      /--data: ".*none\.jsonl" does not exist/,
    );
    expect(existsSync(db)).toBe(false); // --policy gold never creates a lab database
  });

  it.skipIf(!HAS_SHARED_DATA)("the issue's command on MATH500 and AIME'24 (../shared/data)", async () => {
    const r = await cli([
      'eval',
      '--data',
      `${sharedPath('math/math500.jsonl')},${sharedPath('math/aime24.jsonl')}`,
      '--workflow',
      'math',
      '--policy',
      'gold',
      '--json',
      '--db',
      resolve(dir, 'x.db'),
    ]);
    expect(r.err).toBe('');
    expect(JSON.parse(r.lines[r.lines.length - 1])).toEqual({
      benchmarks: [
        { name: 'math500', queries: 500, avg: 1, pass: 1 },
        { name: 'aime24', queries: 30, avg: 1, pass: 1 },
      ],
      macro: { avg: 1, pass: 1 },
    });
  });
});
