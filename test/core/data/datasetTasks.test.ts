/**
 * Dataset files as run tasks: a resolved config stores each file's absolute path and content
 * hash; the environment trains on the file's rows (drawn by seed and step) and evaluates every
 * row (or `limit`); a resume whose file changed is refused naming the file; named slots of the
 * *-paper-data presets are refused, each missing one listed, until --set tasks.paths fills them.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MATH_PAPER_EVAL, SEARCH_PAPER_EVAL } from '../../../src/core/config/presets';
import { presetConfig, resolveRunConfig, runConfigPathErrors } from '../../../src/core/config';
import { assertRunDataUnchanged } from '../../../src/core/data';
import { buildEnvironment, tasksForStep } from '../../../src/core/train/environment';

const dir = mkdtempSync(join(tmpdir(), 'srpo-dstasks-'));
const mathFile = join(dir, 'sums.jsonl');
writeFileSync(mathFile, Array.from({ length: 20 }, (_, i) => JSON.stringify({ problem: `${i}+1`, answer: String(i + 1) })).join('\n') + '\n');
const sha = (p: string): string => createHash('sha256').update(readFileSync(p)).digest('hex');

const withData = (extra: Record<string, unknown> = {}) =>
  resolveRunConfig({
    workflow: { name: 'math', options: {} },
    tasks: { train: [{ dataset: mathFile }], eval: [{ dataset: mathFile, name: 'sums-eval', limit: 5 }, 'arith-easy'] },
    ...extra,
  });

describe('dataset entries in tasks.train / tasks.eval', () => {
  it('the resolved config stores the absolute path and the SHA-256 of the file; names default to the file name', () => {
    const rel = relative(process.cwd(), mathFile);
    const c = resolveRunConfig({ tasks: { train: [{ dataset: rel }], eval: [{ dataset: rel }] } });
    expect(c.tasks.train[0]).toEqual({ dataset: mathFile, sha256: sha(mathFile) });
    // A stored config resolves to itself (no new hash, no new path).
    expect(resolveRunConfig(JSON.parse(JSON.stringify(c))).tasks.train[0]).toEqual(c.tasks.train[0]);
  });

  it('train draws from the file by (seed, step); eval takes every row or the limit, beside built-in benchmarks', () => {
    const c = withData({ rollout: { tasksPerStep: 4 } });
    const env = buildEnvironment(c);
    expect(env.trainPool).toHaveLength(20);
    expect(env.evalSets.map((s) => [s.benchmark, s.rows.length])).toEqual([
      ['sums-eval', 5],
      ['arith-easy', c.eval.queries],
    ]);
    const a = tasksForStep(env, c, 3).map((r) => r.id);
    expect(a).toHaveLength(4);
    expect(tasksForStep(buildEnvironment(c), c, 3).map((r) => r.id)).toEqual(a);
    expect(tasksForStep(env, c, 4).map((r) => r.id)).not.toEqual(a);
  });

  it('a missing file is refused at resolution, naming the field', () => {
    expect(() => resolveRunConfig({ tasks: { train: [{ dataset: join(dir, 'nope.jsonl') }], eval: [] } })).toThrow(
      /run config: field "tasks\.train\.0\.dataset": ".*nope\.jsonl" does not exist/,
    );
  });

  it('a resume whose file changed is refused with both hashes; restoring the file lets it run', () => {
    const file = join(dir, 'changing.jsonl');
    const original = '{"problem":"1+1","answer":"2"}\n';
    writeFileSync(file, original);
    const stored = JSON.parse(JSON.stringify(resolveRunConfig({ tasks: { train: [{ dataset: file }], eval: [] } })));
    writeFileSync(file, '{"problem":"1+1","answer":"3"}\n');
    const resumed = resolveRunConfig(stored);
    expect(() => buildEnvironment(resumed)).toThrow(
      /dataset ".*changing\.jsonl" changed since the run was created \(sha256 [0-9a-f]{12}\.\.\. stored, [0-9a-f]{12}\.\.\. now\)/,
    );
    expect(() => assertRunDataUnchanged(resumed)).toThrow(/changing\.jsonl" changed since the run was created/);
    writeFileSync(file, original);
    expect(() => assertRunDataUnchanged(resumed)).not.toThrow();
    expect(buildEnvironment(resumed).trainPool[0].answers).toEqual(['2']);
  });

  it('a malformed line is refused when the environment loads it, naming file and line', () => {
    const file = join(dir, 'broken.jsonl');
    writeFileSync(file, '{"problem":"1+1","answer":"2"}\n{"problem":"2+2"}\n');
    const c = resolveRunConfig({ tasks: { train: [{ dataset: file }], eval: [] } });
    expect(() => buildEnvironment(c)).toThrow(/broken\.jsonl:2: math record: field "answer" = missing/);
  });

  it('a QA file cannot feed the math workflow; the search workflow needs a corpus', () => {
    const qa = join(dir, 'qa.jsonl');
    writeFileSync(qa, '{"question":"who?","answer":"me"}\n');
    expect(() => buildEnvironment(resolveRunConfig({ tasks: { train: [{ dataset: qa }], eval: [] } }))).toThrow(
      /task "qa" is qa, but workflow "math" takes math tasks/,
    );
    expect(() => buildEnvironment(resolveRunConfig({ workflow: { name: 'search' }, tasks: { train: [{ dataset: qa }], eval: [] } }))).toThrow(
      /workflow "search" needs a corpus/,
    );
  });

  it('the gold policy kind cannot train', () => {
    expect(() => buildEnvironment(withData({ policies: { kind: 'gold' } }))).toThrow(/"policies\.kind" = "gold".*cannot be trained/);
    expect(buildEnvironment(withData({ policies: { kind: 'gold' } }), { purpose: 'eval' }).trainPool).toHaveLength(20);
  });
});

describe('the *-paper-data presets', () => {
  it('resolve without files (the UI lists them) but every missing slot is listed before a run', () => {
    const c = presetConfig('math-paper-data');
    const errors = runConfigPathErrors(c);
    expect(errors).toHaveLength(1);
    expect(errors[0].path).toBe('tasks.paths');
    for (const slot of ['train', ...MATH_PAPER_EVAL]) expect(errors[0].message).toContain(`--set tasks.paths.${slot}=PATH`);
    expect(() => buildEnvironment(c)).toThrow(/no file given for "\$train", "\$aime24", "\$aime25", "\$amc23", "\$math500", "\$minerva", "\$olympiadbench"/);
    const s = runConfigPathErrors(presetConfig('search-paper-data'));
    for (const slot of ['train', ...SEARCH_PAPER_EVAL, 'wiki']) expect(s[0].message).toContain(`"$${slot}"`);
  });

  it('--set tasks.paths.NAME fills a slot: path and hash stored, the benchmark named after the slot', () => {
    const paths = Object.fromEntries(['train', ...MATH_PAPER_EVAL].map((s) => [s, mathFile]));
    const c = presetConfig('math-paper-data', { tasks: { paths } });
    expect(runConfigPathErrors(c)).toEqual([]);
    expect(c.tasks.eval.map((e) => (typeof e === 'string' ? e : [e.name, e.dataset, e.sha256]))).toEqual(
      MATH_PAPER_EVAL.map((n) => [n, mathFile, sha(mathFile)]),
    );
    expect(c.eval.n).toBe(16);
    expect(buildEnvironment(c).evalSets.map((s) => s.benchmark)).toEqual([...MATH_PAPER_EVAL]);
  });
});
