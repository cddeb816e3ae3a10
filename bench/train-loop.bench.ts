/**
 * `train-loop`: one training step of the `math-quick` preset at its real sizes (N 8 x G 4, K 2,
 * 24 new tokens, 2 epochs x 2 mini-batches, an evaluation of eval.queries x n per benchmark,
 * printed on the first line (40 x 4 on arith-chain when written): step 0 is an eval step)
 * through the Trainer with a real file-backed store, split by phase from the step's own `time/*`
 * metrics (rollout, old log-probs, update, eval, checkpoint) plus the store write
 * (Trainer.lastStoreTimeMs, the step's one transaction). Starts from random weights when the
 * warm-start checkpoint (resources/warmstart/math-tiny) is absent; says which.
 *
 * Headline: `BENCH train-loop store_frac=<store / (step + store)> step_s=<step incl. store>
 * member_rows_s=<member rows written per second of store time>`. Nothing asserts on time.
 * The row figures are split: the step's own (split 'train', written by the timed transaction,
 * so member_rows_s counts only those) and step 0's evaluation episodes (split 'eval', written
 * ahead of the step by writeEvaluation, outside the store time), printed on a line of their own.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { presetConfig, WARMSTART_DIR } from '../src/core/config';
import { LabStore } from '../src/core/store';
import { Trainer } from '../src/core/train/trainer';
import { benchBackend, headline } from './lib';

async function main(): Promise<void> {
  await benchBackend();
  const root = resolve(__dirname, '..');
  const warm = existsSync(join(root, WARMSTART_DIR, 'math-tiny'));
  const config = presetConfig('math-quick', warm ? {} : { policies: { init: null } });
  console.log(
    `math-quick: ${warm ? 'warm start' : 'random init (no resources/warmstart/math-tiny)'}; ` +
      `N ${config.rollout.tasksPerStep} x G ${config.rollout.groupSize}, eval ${config.eval.queries} queries x n ${config.eval.n}`,
  );

  const dir = mkdtempSync(join(tmpdir(), 'srpo-bench-loop-'));
  const store = LabStore.open(join(dir, 'lab.db'));
  const runId = store.createRun({
    name: 'bench',
    preset: 'math-quick',
    config,
    seed: config.seed,
    workflow: config.workflow.name,
    algorithm: config.objective.algorithm,
  });
  const trainer = new Trainer({ config, runDir: join(dir, 'runs', String(runId)), store, runId, baseDir: root });
  const summary = await trainer.step(0);
  const storeS = trainer.lastStoreTimeMs / 1000;
  trainer.dispose();

  const m = summary.metrics;
  const stepS = summary.wallMs / 1000 + storeS; // time/step ends before the store write
  const rowsOf = (split: 'train' | 'eval') => {
    const q = (sql: string) => store.db.raw.prepare(sql).pluck().get(runId, split) as number;
    return {
      events: q('SELECT count(*) FROM events WHERE run_id = ? AND step = 0 AND split = ?'),
      members: q('SELECT count(*) FROM members m JOIN events e ON e.id = m.event_id WHERE m.run_id = ? AND m.step = 0 AND e.split = ?'),
    };
  };
  const train = rowsOf('train');
  const evalRows = rowsOf('eval');
  store.close();

  const phases: [string, number][] = [
    ['eval', m['time/eval'] ?? 0],
    ['rollout', m['time/rollout'] ?? 0],
    ['old log-probs', m['time/old_logp'] ?? 0],
    ['update', m['time/update'] ?? 0],
    ['checkpoint', m['time/checkpoint'] ?? 0],
    ['store', storeS],
  ];
  const other = stepS - phases.reduce((a, [, s]) => a + s, 0);
  for (const [name, s] of [...phases, ['other', other] as [string, number]]) {
    console.log(`${name.padEnd(14)} ${s.toFixed(3).padStart(8)} s  ${((100 * s) / stepS).toFixed(1).padStart(5)} %`);
  }
  console.log(
    `step           ${stepS.toFixed(3).padStart(8)} s; ${train.events} events, ${train.members} member rows (training); reward ${m['reward/mean']?.toFixed(3)}`,
  );
  console.log(`eval rows      ${evalRows.events} events, ${evalRows.members} member rows (evaluation episodes, written ahead of the step)`);
  headline('train-loop', {
    store_frac: storeS / stepS,
    step_s: stepS,
    member_rows_s: train.members / Math.max(storeS, 1e-9),
    eval_frac: (m['time/eval'] ?? 0) / stepS,
  });
}

void main();
