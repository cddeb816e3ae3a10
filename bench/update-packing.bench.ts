/**
 * `update-packing`: the policy update (src/core/train/update.ts `runUpdate`) over a mini-batch
 * whose one pass would exceed the tape budget, three ways side by side in one process, alternated:
 * - `micro`: as the update runs it, micro-batches of whole events packed to fit the budget
 *   (train/miniBatches.ts `tapeFits`, decision 074), one forward and backward each;
 * - `blocked`: one pass for the mini-batch, which the scorer then runs in row blocks, each re-run
 *   in the backward (models/hf/logprobs.ts; how the update ran before 074: the same policies with
 *   the packing's budget hidden from the update);
 * - `unbounded`: one pass with no budget (`update.tapeBudgetMB` 0), the memory it takes unbounded.
 * The shape is issue 29's `small` one: the small preset's seeded lab folder (d256 x 6 layers, full
 * fine-tuning of every weight), 16 events of 2 members, prompts of 64 and completions of 64
 * characters (32 rows of 128 tokens), the backend's default budget. Headline:
 * `micro_vs_blocked` = blocked ms / micro ms (> 1: the packing is faster),
 * `micro_vs_unbounded` = unbounded ms / micro ms, `_cpu` forms from this process's CPU time, and
 * `passes_micro` / `passes_blocked` (the update's `update/passes`). Nothing asserts on time.
 */
import * as tf from '@tensorflow/tfjs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mergeConfig, presetInput, resolveRunConfig } from '../src/core/config';
import { initBackend } from '../src/core/models/backend';
import { mulberry32 } from '../src/core/models/random';
import type { HfPolicies } from '../src/core/policies/hf';
import { openPolicies } from '../src/core/policies/registry';
import type { Policies } from '../src/core/policies/types';
import { objectiveConfig, prepareObjectiveBatch, type ObjectiveBatch } from '../src/core/srpo';
import { AdamW } from '../src/core/train/optimizer';
import { runUpdate, type MemberSample } from '../src/core/train/update';
import { randomCharRows } from './labModel';
import { headline, median } from './lib';

const EVENTS = 16;
const K = 2;
const PROMPT = 64;
const COMPLETION = 64;
const RUNS = Number(process.env.UPDATE_PACKING_RUNS ?? 3);

/** A step's worth of events: random prompts and completions, old log-probs from the policy itself, rewards that differ within groups. */
function syntheticStep(policies: Policies) {
  const rand = mulberry32(5);
  const samples: MemberSample[] = [];
  const batch: ObjectiveBatch = { events: [], members: [] };
  const prompts = randomCharRows(EVENTS, PROMPT, rand);
  const outputs = randomCharRows(EVENTS * K, COMPLETION, rand);
  for (let e = 0; e < EVENTS; e++) {
    batch.events.push({ id: `e${e}`, group: `t${e % 4}/solver`, reward: rand(), expectedK: K });
    for (let j = 0; j < K; j++) {
      samples.push({ policyId: 'shared', promptTokens: prompts[e], outputTokens: outputs[e * K + j] });
      batch.members.push({ event: `e${e}`, role: 'solver', logpCur: [], logpOld: [], mask: [] });
    }
  }
  const scored = policies.scoreData(
    'shared',
    samples.map((s) => ({ prompt: s.promptTokens, completion: s.outputTokens })),
    'current',
  );
  batch.members.forEach((m, i) => Object.assign(m, { logpCur: scored.logp[i], logpOld: scored.logp[i], mask: scored.logp[i].map(() => 1) }));
  return { samples, batch };
}

async function main(): Promise<void> {
  const backend = await initBackend({ requested: (process.env.SRPO_LAB_BACKEND as 'wasm') || 'wasm' });
  const input = mergeConfig(presetInput('math-quick'), {
    policies: { init: null, model: 'small', adapter: null, sharing: 'shared' },
    update: { epochs: 1, miniBatches: 1, microBatchRows: 0, tapeBudgetMB: null },
    optimizer: { lr: 1e-5 },
    backend: backend.name,
  });
  input.policies = { ...(input.policies as Record<string, unknown>), modelOverrides: {} }; // the small preset as it is (a merge keeps math-quick's overrides)
  const config = resolveRunConfig(input);
  const policies = openPolicies(config, { baseDir: mkdtempSync(join(tmpdir(), 'srpo-update-packing-')) }) as HfPolicies;
  const budget = policies.model.tapeBudgetBytes;
  const step = syntheticStep(policies);
  const objective = objectiveConfig({});
  const prepared = prepareObjectiveBatch(step.batch, objective);
  const optimizers = new Map(policies.policies().map((p) => [p.id, new AdamW(policies.trainable(p.id), config.optimizer)]));
  // The same policies with the budget hidden from the update's packing (the scorer still keeps it).
  const unpacked: Policies = Object.assign(Object.create(policies) as Policies, {
    gradientTape: (id: string) => ({ ...policies.gradientTape(id), budgetBytes: 0 }),
  });
  const passes: Record<string, number> = {};
  const variants: Record<string, () => void> = {
    micro: () => {
      policies.model.tapeBudgetBytes = budget;
      passes.micro = runUpdate(prepared, step.samples, objective, { policies, optimizers, config, padId: policies.padId, seed: 1 }).metrics['update/passes'];
    },
    blocked: () => {
      policies.model.tapeBudgetBytes = budget;
      passes.blocked = runUpdate(prepared, step.samples, objective, { policies: unpacked, optimizers, config, padId: policies.padId, seed: 1 }).metrics[
        'update/passes'
      ];
    },
    unbounded: () => {
      policies.model.tapeBudgetBytes = 0;
      runUpdate(prepared, step.samples, objective, { policies, optimizers, config, padId: policies.padId, seed: 1 });
    },
  };
  const times: Record<string, { ms: number[]; cpu: number[] }> = {};
  for (const fn of Object.values(variants)) fn(); // warm-up, untimed
  for (let i = 0; i < RUNS; i++) {
    for (const [name, fn] of Object.entries(variants)) {
      const c = process.cpuUsage();
      const t0 = performance.now();
      fn();
      const d = process.cpuUsage(c);
      const t = (times[name] ??= { ms: [], cpu: [] });
      t.ms.push(performance.now() - t0);
      t.cpu.push((d.user + d.system) / 1e3);
    }
  }
  const med = Object.fromEntries(Object.entries(times).map(([n, t]) => [n, { ms: median(t.ms), cpu: median(t.cpu) }]));
  console.log(
    `${backend.name}: small preset, ${EVENTS * K} rows of ${PROMPT + COMPLETION} tokens, budget ${budget / 2 ** 20} MB; ` +
      Object.entries(med)
        .map(([n, t]) => `${n} ${t.ms.toFixed(0)} ms (cpu ${t.cpu.toFixed(0)})`)
        .join(', '),
  );
  for (const o of optimizers.values()) o.dispose();
  policies.dispose();
  console.log(`tensors left: ${tf.memory().numTensors}`);
  headline('update-packing', {
    micro_vs_blocked: med.blocked.ms / med.micro.ms,
    micro_vs_blocked_cpu: med.blocked.cpu / med.micro.cpu,
    micro_vs_unbounded: med.unbounded.ms / med.micro.ms,
    micro_vs_unbounded_cpu: med.unbounded.cpu / med.micro.cpu,
    passes_micro: passes.micro,
    passes_blocked: passes.blocked,
  });
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
