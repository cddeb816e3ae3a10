/**
 * `external`: what training through an agent program costs against the built-in workflow it
 * mirrors. One Trainer runs `math-quick` (the built-in math workflow, lockstep orchestrator) and
 * one runs `external-math-quick` (examples/agents/math_team.mjs with the official openai client,
 * through the endpoint), same model, warm start, batch (N 8 x G 4, K 2) and seed; no evaluation.
 * Steps alternate between the two (a warm-up step each, then `STEPS` timed ones) so load on the
 * shared machine hits both alike; the figure is the median step time of the external run over
 * the built-in's. The rollouts differ in content (the program's calls are batched by arrival, the
 * built-in's by lockstep round), so per-step work is alike, not equal: the sampler-call counts
 * and rows per call are printed beside it.
 *
 * Headline: `BENCH external external_vs_builtin=<ratio> rollout_ratio=<ratio> builtin_step_s= external_step_s=`
 * (issue 28's goal: external_vs_builtin <= 1.3).
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { presetConfig, WARMSTART_DIR } from '../src/core/config';
import { Trainer } from '../src/core/train/trainer';
import { benchBackend, headline, median } from './lib';

const STEPS = Number(process.env.BENCH_EXTERNAL_STEPS ?? 3);

async function main(): Promise<void> {
  await benchBackend();
  const root = resolve(__dirname, '..');
  const warm = existsSync(join(root, WARMSTART_DIR, 'math-tiny'));
  const common = { steps: STEPS + 1, eval: { every: 0 }, checkpointEvery: 0, ...(warm ? {} : { policies: { init: null } }) };
  const builtin = new Trainer({ config: presetConfig('math-quick', common), runDir: mkdtempSync(join(tmpdir(), 'srpo-bench-ext-')), baseDir: root });
  const external = new Trainer({ config: presetConfig('external-math-quick', common), runDir: mkdtempSync(join(tmpdir(), 'srpo-bench-ext-')), baseDir: root });
  console.log(`math-quick vs external-math-quick: ${warm ? 'warm start' : 'random init'}; N 8 x G 4, K 2; ${STEPS} timed steps each after a warm-up`);
  const times = { builtin: [] as number[], external: [] as number[], builtinRollout: [] as number[], externalRollout: [] as number[] };
  try {
    for (let s = 0; s <= STEPS; s++) {
      const b = await builtin.step(s);
      const e = await external.step(s);
      if (s === 0) continue;
      times.builtin.push(b.metrics['time/step']);
      times.external.push(e.metrics['time/step']);
      times.builtinRollout.push(b.metrics['time/rollout']);
      times.externalRollout.push(e.metrics['time/rollout']);
      console.log(
        `step ${s}: builtin ${b.metrics['time/step'].toFixed(2)} s (rollout ${b.metrics['time/rollout'].toFixed(2)} s), ` +
          `external ${e.metrics['time/step'].toFixed(2)} s (rollout ${e.metrics['time/rollout'].toFixed(2)} s, ` +
          `${e.metrics['external/sampler_calls']} sampler calls of ${e.metrics['external/rows_per_sampler_call'].toFixed(1)} rows, ` +
          `request latency ${e.metrics['external/request_latency_ms'].toFixed(0)} ms, failed ${e.metrics['external/failed_episodes']})`,
      );
    }
  } finally {
    builtin.dispose();
    external.dispose();
  }
  const bs = median(times.builtin);
  const es = median(times.external);
  headline('external', {
    external_vs_builtin: (es / bs).toFixed(2),
    rollout_ratio: (median(times.externalRollout) / median(times.builtinRollout)).toFixed(2),
    builtin_step_s: bs.toFixed(2),
    external_step_s: es.toFixed(2),
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
