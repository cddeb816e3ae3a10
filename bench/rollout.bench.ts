/**
 * `rollout`: the orchestrator on the math workflow with K = 3 and 64 episodes at once (32 tasks
 * x G = 2), tiny preset, per-role policies (policies/hf.ts, full fine-tuning: one copy of the
 * model per role) over the preset's seeded lab folder (bench/labModel.ts), so random weights
 * (their outputs are mostly malformed, so episodes follow the invalid-output paths; the
 * orchestration work per event is the same). Prints episodes/s and generated tokens/s; headline `sampler_frac=` is the share of
 * the rollout's wall time spent inside the sampler (goal >= 0.8: orchestration is cheap).
 *
 * Runs on wasm, then on the native backend when it starts (bench/backends.ts): the wasm keys
 * keep their names, `native_gen_tok_s` / `native_sampler_frac` follow, and `native_vs_wasm` =
 * wasm ms / native ms per generated token (the two runs need not generate the same tokens;
 * `native_vs_wasm_cpu`: from CPU time). `ROLLOUT_BENCH_TASKS` sets the tasks per round (default
 * 32; a small value only checks that the bench runs).
 */
import { getTaskGenerator } from '../src/core/data';
import { labModelDir } from '../src/core/models/hf/labCache';
import { HfPolicies } from '../src/core/policies/hf';
import { runRollouts } from '../src/core/rollout/orchestrator';
import { getWorkflow } from '../src/core/workflows';
import { nativeKeys, onWasmThenNative } from './backends';
import { labPresetShape } from './labModel';
import { headline } from './lib';

const TASKS = Number(process.env.ROLLOUT_BENCH_TASKS ?? 32);

async function measure(backend: string) {
  const policies = new HfPolicies({
    dir: labModelDir(labPresetShape('tiny'), 1234),
    sharing: 'per-role',
    adapter: null,
    seed: 1,
    reference: false,
    recompute: false,
    enableThinking: null,
  });
  const tasks = getTaskGenerator('arith-medium').rows('train', TASKS);
  const workflow = getWorkflow('math');
  const episodes = (round: number) =>
    tasks.flatMap((task, t) =>
      [0, 1].map((g) => workflow.createEpisode(task, { episodeId: `r${round}/t${t}/g${g}`, config: { solvers: { mode: 'fixed', k: 3 }, maxLoops: 1 } })),
    );
  const ctx = { policies };
  const options = { temperature: 1, topP: 1, maxNewTokens: 32, seed: 1 };
  runRollouts(episodes(0).slice(0, 4), ctx, options); // warm-up (kernel compilation)
  let wall = 0;
  let samplerMs = 0;
  let tokens = 0;
  let count = 0;
  const c = process.cpuUsage();
  for (let r = 1; r <= 2; r++) {
    const b = runRollouts(episodes(r), ctx, { ...options, seed: r });
    wall += b.wallMs;
    samplerMs += b.samplerMs;
    tokens += b.episodes.reduce((a, e) => a + e.generatedTokens, 0);
    count += b.episodes.length;
  }
  const d = process.cpuUsage(c);
  const cpuMs = (d.user + d.system) / 1e3;
  policies.dispose();
  console.log(
    `${backend}: ${count} episodes, ${tokens} tokens in ${(wall / 1000).toFixed(2)} s (cpu ${(cpuMs / 1000).toFixed(2)} s); sampler ${(samplerMs / 1000).toFixed(2)} s`,
  );
  return {
    keys: { episodes_s: (count / wall) * 1000, gen_tok_s: (tokens / wall) * 1000, sampler_frac: samplerMs / wall },
    msPerToken: wall / tokens,
    cpuPerToken: cpuMs / tokens,
  };
}

async function main(): Promise<void> {
  const { wasm, native } = await onWasmThenNative(measure);
  headline('rollout', {
    ...wasm.keys,
    ...(native ? { native_gen_tok_s: native.keys.gen_tok_s, native_sampler_frac: native.keys.sampler_frac } : {}),
    ...nativeKeys(native && { wasm: wasm.msPerToken, native: native.msPerToken }, native && { wasm: wasm.cpuPerToken, native: native.cpuPerToken }),
  });
}

void main();
