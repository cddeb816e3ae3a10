/**
 * `rollout`: the orchestrator on the math workflow with K = 3 and 64 episodes at once (32 tasks
 * x G = 2), tiny preset, per-role policies with random weights (their outputs are mostly
 * malformed, so episodes follow the invalid-output paths; the orchestration work per event is
 * the same). Prints episodes/s and generated tokens/s; headline `sampler_frac=` is the share of
 * the rollout's wall time spent inside the sampler (goal >= 0.8: orchestration is cheap).
 */
import { getTaskGenerator } from '../src/core/data';
import { CharTokenizer, modelConfig, PolicySet } from '../src/core/models';
import { runRollouts } from '../src/core/rollout/orchestrator';
import { getWorkflow } from '../src/core/workflows';
import { benchBackend, headline } from './lib';

async function main(): Promise<void> {
  await benchBackend();
  const tokenizer = new CharTokenizer();
  const policies = new PolicySet('per-role', modelConfig('tiny'), ['router', 'solver', 'verifier', 'aggregator']);
  const tasks = getTaskGenerator('arith-medium').rows('train', 32);
  const workflow = getWorkflow('math');
  const episodes = (round: number) =>
    tasks.flatMap((task, t) =>
      [0, 1].map((g) => workflow.createEpisode(task, { episodeId: `r${round}/t${t}/g${g}`, config: { solvers: { mode: 'fixed', k: 3 }, maxLoops: 1 } })),
    );
  const ctx = { policies, tokenizer };
  const options = { temperature: 1, topP: 1, maxNewTokens: 32, seed: 1 };
  runRollouts(episodes(0).slice(0, 4), ctx, options); // warm-up (kernel compilation)
  let wall = 0;
  let samplerMs = 0;
  let tokens = 0;
  let count = 0;
  for (let r = 1; r <= 2; r++) {
    const b = runRollouts(episodes(r), ctx, { ...options, seed: r });
    wall += b.wallMs;
    samplerMs += b.samplerMs;
    tokens += b.episodes.reduce((a, e) => a + e.generatedTokens, 0);
    count += b.episodes.length;
  }
  policies.dispose();
  console.log(`${count} episodes in ${(wall / 1000).toFixed(2)} s; sampler ${(samplerMs / 1000).toFixed(2)} s`);
  headline('rollout', {
    episodes_s: (count / wall) * 1000,
    gen_tok_s: (tokens / wall) * 1000,
    sampler_frac: samplerMs / wall,
  });
}

void main();
