/**
 * The run commands of `srpo-lab` as a user runs them, in-process through runCli (engines are
 * real forked processes): train a tiny run with --config and --set, Ctrl-C and resume, runs,
 * show, eval of a checkpoint, export as JSON and CSV, and the errors a user sees. Plus the
 * installed executable (the tsx shim) once.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/commands';
import type { CliIO } from '../../src/cli/io';
import { evaluationTable } from '../../src/cli/show';
import { NodeForkLauncher } from '../../src/core/host/launcher';
import { LabStore } from '../../src/core/store';
import { TINY } from '../engine/helpers';
import { presetConfig } from '../../src/core/config';

/** The runs here are math-quick runs; they evaluate the preset's benchmarks. */
const EVAL_BENCHMARKS = presetConfig('math-quick').tasks.eval.length;

interface Result {
  code: number;
  out: string;
  err: string;
}

/** Runs a command line; `onLine` sees each output line as it comes (and may press Ctrl-C). */
async function cli(argv: string[], onLine?: (line: string, interrupt: () => void) => void): Promise<Result> {
  const out: string[] = [];
  const err: string[] = [];
  let handler: (() => void) | null = null;
  const io: CliIO = {
    out: (l) => {
      out.push(l);
      onLine?.(l, () => handler?.());
    },
    tty: null,
    launcher: new NodeForkLauncher({ stdio: 'pipe' }),
    onInterrupt: (h) => {
      handler = h;
      return () => (handler = null);
    },
  };
  const code = await runCli(argv, io, (l) => err.push(l));
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const dir = mkdtempSync(join(tmpdir(), 'srpo-cli-'));
const db = join(dir, 'lab.db');
const tinyFile = join(dir, 'tiny.json');

describe('srpo-lab run commands', () => {
  let trained: Result;
  let interrupted: Result;
  let resumed: Result;

  beforeAll(async () => {
    writeFileSync(tinyFile, JSON.stringify({ ...TINY, policies: { init: null } }));
    // The model shape comes in through --set as JSON, the rest from the file.
    trained = await cli([
      'train',
      '--preset',
      'math-quick',
      '--config',
      tinyFile,
      '--db',
      db,
      '--set',
      'steps=3',
      '--set',
      'checkpointEvery=1',
      '--set',
      `policies.modelOverrides=${JSON.stringify(TINY.policies.modelOverrides)}`,
    ]);
    let pressed = false;
    interrupted = await cli(
      [
        'train',
        '--preset',
        'math-quick',
        '--config',
        tinyFile,
        '--db',
        db,
        '--set',
        'steps=4',
        '--set',
        'seed=7',
        '--set',
        'checkpointEvery=1',
        '--set',
        `policies.modelOverrides=${JSON.stringify(TINY.policies.modelOverrides)}`,
      ],
      (line, interrupt) => {
        if (!pressed && /^step 1\/4/.test(line)) {
          pressed = true;
          interrupt(); // Ctrl-C
        }
      },
    );
    resumed = await cli(['resume', '2', '--db', db]);
  }, 120_000);

  it('train: creates the run, shows progress and the final evaluation', () => {
    expect(trained.err).toBe('');
    expect(trained.code).toBe(0);
    expect(trained.out).toMatch(/^run 1 "math-quick-s1": 3 steps of math\/srpo/);
    expect(trained.out).toMatch(/engine ready: backend wasm, 3 steps to go/);
    expect(trained.out).toMatch(/step 1\/3  reward -?\d\.\d{3}  eval \d\.\d{3}  loss/);
    expect(trained.out).toMatch(/step 3\/3 .*\[checkpoint\]/);
    expect(trained.out).toMatch(/final eval \(after 3 steps\): macro avg \d\.\d{3}/);
    expect(trained.out).toMatch(/run 1 completed: 3 training steps and the final evaluation/);
    const store = LabStore.open(db);
    const config = store.getRun(1)!.config as { steps: number; policies: { modelOverrides: unknown; init: unknown } };
    expect(config.steps).toBe(3);
    expect(config.policies.modelOverrides).toEqual(TINY.policies.modelOverrides);
    expect(config.policies.init).toBeNull();
    store.close();
  });

  it('Ctrl-C stops the engine cleanly and says how to resume; resume finishes the run', () => {
    expect(interrupted.code).toBe(0);
    expect(interrupted.out).toMatch(/stopping: the engine finishes or abandons the step in progress/);
    expect(interrupted.out).toMatch(
      new RegExp(
        `run 2 stopped \\(\\d steps committed\\); resume with: npm run lab -- resume 2 --db ${db.replace(/[.]/g, '\\.')} \\(from the checkpoint of step \\d\\)`,
      ),
    );
    expect(resumed.code).toBe(0);
    expect(resumed.out).toMatch(/^resuming run 2 "math-quick-s7" \(stopped\) from the checkpoint of step \d/);
    expect(resumed.out).toMatch(/engine ready: backend wasm, resuming at step \d/);
    expect(resumed.out).toMatch(/run 2 completed/);
    const store = LabStore.open(db);
    expect(store.committedSteps(2)).toEqual([0, 1, 2, 3, 4]);
    store.close();
  });

  it('runs: one row per run with status, objective, backend, steps and best eval', async () => {
    const r = await cli(['runs', '--db', db]);
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[0]).toMatch(/^id\s+name\s+status\s+preset\s+workflow\s+objective\s+backend\s+steps\s+best eval\s+started$/);
    // steps: updates committed / planned (src/shared/stepConvention.ts): a completed S-step run reads S/S.
    expect(lines[2]).toMatch(/^ 2  math-quick-s7  completed  math-quick  math\s+srpo\s+wasm\s+4\/4\s+\d\.\d{3}  \d{4}-\d\d-\d\d \d\d:\d\d$/);
    expect(lines[3]).toMatch(/^ 1  math-quick-s1  completed .* 3\/3 /);
  });

  it('show: config summary, status, last metrics and the evaluations table', async () => {
    const r = await cli(['show', '1', '--db', db]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^run 1 "math-quick-s1"  completed/);
    expect(r.out).toMatch(/workflow\s+math \{"solvers":\{"mode":"fixed","k":2\},"maxLoops":1,/);
    expect(r.out).toMatch(/rollout\s+N 2 tasks x G 2/);
    expect(r.out).toMatch(/progress\s+3\/3 steps \(updates committed and the final evaluation\)/);
    // Steps are updates done (src/shared/stepConvention.ts): checkpoints 1-3, the last update's reward at step 3.
    expect(r.out).toMatch(/checkpoints steps 1, 2, 3 \(the updates each holds; eval --checkpoint N and export-model --step N take these\)/);
    expect(r.out).toMatch(/latest metrics \(step: the update, or the evaluation after that many updates\):\n\s+reward\/mean\s+\S+  \(step 3\)\n/);
    expect(r.out).toMatch(
      /summary:\n\s+ended by\s+its step count \(3 steps done\)\n\s+final eval\s+Avg@2 \d\.\d{3}, Pass@2 \d\.\d{3} at step 3 \(after 3 updates\)/,
    );
    expect(r.out).toMatch(/eval\/macro\/avg\s+\S+  \(step 3\)/);
    expect(r.out).toMatch(/evaluations \(step s: after s updates; step 3: final \(after 3 updates\)\):\n\s+step\s+benchmark\s+n\s+queries\s+avg@n\s+pass@n/);
    expect(r.out.match(/^\s+\d\s+arith-[a-z]+\s/gm)).toHaveLength(3 * EVAL_BENCHMARKS); // steps 0, 2 (eval.every 2) and 3 (final)
  });

  it('eval: checkpoint N (after N updates) gives the numbers the run recorded at step N', async () => {
    const r = await cli(['eval', '1', '--checkpoint', '2', '--db', db]);
    expect(r.err).toBe('');
    expect(r.out).toMatch(/^run 1, checkpoint of step 2 .*2 queries x n 2/);
    const store = LabStore.open(db);
    const recorded = store.evaluations(1).filter((e) => e.step === 2); // the evaluation after 2 updates, labelled step 2 by both
    store.close();
    expect(recorded.length).toBeGreaterThan(0);
    for (const line of evaluationTable(recorded).slice(2)) expect(r.out).toContain(line);
    const missing = await cli(['eval', '1', '--checkpoint', '9', '--db', db]);
    expect(missing.err).toMatch(/run 1 has no checkpoint at step 9 \(--checkpoint\); checkpoints at steps 1, 2, 3/);
  });

  it('export: JSON with run, metrics and evaluations; CSV with one row per (run, step, key, value, wall time)', async () => {
    const j = await cli(['export', '1', '--format', 'json', '--db', db]);
    const data = JSON.parse(j.out);
    expect(data.run).toMatchObject({ id: 1, name: 'math-quick-s1', status: 'completed', lastStep: 3 });
    // Steps are updates done: training metrics of updates 1-3, evaluations after 0, 2 and 3 updates; both end at 3.
    expect(data.metrics['reward/mean'].map((p: { step: number }) => p.step)).toEqual([1, 2, 3]);
    expect(data.metrics['eval/macro/avg'].map((p: { step: number }) => p.step)).toEqual([0, 2, 3]);
    expect(data.evaluations).toHaveLength(3 * EVAL_BENCHMARKS);

    const c = await cli(['export', '1', '--format', 'csv', '--db', db]);
    const rows = c.out.split('\n');
    expect(rows[0]).toBe('run,step,key,value,wall_time');
    const points = Object.values(data.metrics as Record<string, unknown[]>).reduce((n, s) => n + s.length, 0);
    expect(rows).toHaveLength(points + 1);
    const reward = rows.filter((l) => l.split(',')[2] === 'reward/mean');
    expect(reward.map((l) => Number(l.split(',')[3]))).toEqual(data.metrics['reward/mean'].map((p: { value: number }) => p.value));
    expect((await cli(['export', '1', '--format', 'xml', '--db', db])).err).toMatch(/--format "xml" is not a format; valid: json, csv/);
  });

  it('says what is wrong: bad --set values, unknown presets, runs and options', async () => {
    const bad = await cli(['train', '--preset', 'math-quick', '--db', db, '--set', 'rollout.groupSize=0']);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/srpo-lab train: run config: field "rollout\.groupSize" = 0: must be at least 1/);
    const wrongType = await cli(['train', '--preset', 'math-quick', '--db', db, '--set', 'objective.algorithm=ppo']);
    expect(wrongType.err).toMatch(/field "objective\.algorithm" = "ppo": must be one of "srpo"/);
    const preset = await cli(['train', '--preset', 'math-huge', '--db', db]);
    expect(preset.code).toBe(1);
    expect(preset.err).toMatch(/unknown preset "math-huge"; valid names: math-quick, search-quick, math-paper/);
    const json = await cli(['train', '--preset', 'math-quick', '--db', db, '--set', 'tasks.train=[arith-easy']);
    expect(json.code).toBe(2);
    expect(json.err).toMatch(/--set tasks\.train: the value looks like JSON but does not parse/);
    expect((await cli(['train', '--db', db])).err).toMatch(/train needs --preset NAME or --config FILE; presets: math-quick/);
    expect((await cli(['show', '42', '--db', db])).err).toMatch(/no run 42 in .*lab\.db; runs: 2, 1/);
    expect((await cli(['runs', '--db', join(dir, 'none.db')])).err).toMatch(/no lab database at .*none\.db/);
    expect((await cli(['resume', '1', '--db', db])).err).toMatch(/run 1 is already completed/);
    expect((await cli(['runs', '--bogus'])).err).toMatch(/unknown option --bogus for "runs"; valid: --db/);
    const store = LabStore.open(db);
    expect(store.listRuns()).toHaveLength(2); // no run was created by a failed command
    store.close();
  });

  it("warmstart: writes a checkpoint policies.init can point at; relative paths are the user's", async () => {
    const out = join(dir, 'warm');
    const r = await cli(['warmstart', '--preset', 'math-quick', '--out', out, '--epochs', '1', '--episodes', '3']);
    expect(r.err).toBe('');
    expect(r.out).toMatch(/shared epoch 1: loss \d/);
    expect(r.out).toContain(`use it with --set policies.init=${out}`);
    expect(existsSync(join(out, 'model.safetensors'))).toBe(true); // a model folder of the one family
    expect(existsSync(join(out, 'tokenizer.json'))).toBe(true);
    expect((await cli(['warmstart', '--preset', 'math-quick'])).err).toMatch(/warmstart needs --out DIR/);
    const { configFromArgs } = await import('../../src/cli/train');
    const { parseArgs } = await import('../../src/cli/args');
    const parsed = parseArgs(['train', '--preset', 'math-quick', '--set', 'policies.init=runs/warm'], { options: ['preset'], flags: [] });
    expect(configFromArgs(parsed).config.policies.init).toBe(resolve('runs/warm'));
    expect(configFromArgs(parseArgs(['train', '--preset', 'math-quick'], { options: ['preset'], flags: [] })).config.policies.init).toBe(
      'resources/warmstart/math-tiny',
    );
  });

  it('the srpo-lab executable (package bin) runs through its tsx shim', () => {
    const bin = resolve(__dirname, '../../src/cli/srpo-lab.cjs');
    const r = spawnSync(process.execPath, [bin, 'runs', '--db', db], { encoding: 'utf8', cwd: tmpdir() });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/math-quick-s7\s+completed/);
    const help = spawnSync(process.execPath, [bin, 'nope'], { encoding: 'utf8' });
    expect(help.status).toBe(2);
    expect(help.stderr).toMatch(/unknown command "nope"; valid: train, resume, runs, show, eval, export, report, warmstart, objective/);
  });
});
