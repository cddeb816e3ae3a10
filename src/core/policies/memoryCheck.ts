/**
 * The memory check a Hugging Face run passes before a byte of weights is read: what the run
 * keeps resident (models/hf/memory.ts `estimateHfMemory`: the base weights, each trainable
 * policy's weights, AdamW moments and gradients; a second base for a shared full fine-tune's KL
 * reference; per-role full fine-tuning's one full copy per role beside the frozen base) against
 * the memory of the backend it runs on. Refused with the figures and what to
 * change, instead of an out-of-memory crash minutes into loading.
 *
 * Activations are not counted (they depend on the batch and are split by update.microBatchRows;
 * `srpo-lab model info` prints them): the check is a floor, not a promise.
 *
 * Not here: the estimate's formulas (memory.ts). Tests: test/core/train/hfPolicies.test.ts,
 * test/core/train/hfPerRoleFull.test.ts (per-role full fine-tuning refused or allowed),
 * test/engine/hfRun.test.ts (a run refused this way ends failed with the reason).
 */
import { execFileSync } from 'node:child_process';
import * as os from 'node:os';
import type { BackendName } from '../models/backend';
import { estimateHfMemory } from '../models/hf/memory';
import type { HfModelConfig } from '../models/hf/types';
import { POLICY_SET_LAYOUTS, type PolicySetKind } from '../models/sharing';
import { ROLES } from '../models/vocab';

/** Overrides the backend's figure (bytes): a GPU shared with others, or a test. */
export const MEMORY_ENV = 'SRPO_LAB_MEMORY_BYTES';

/** wasm32 addresses at most 4 GiB, whatever the machine has. */
const WASM_HEAP_BYTES = 4 * 1024 ** 3;

/** Total memory of the first NVIDIA GPU (nvidia-smi), or null when it cannot be asked. */
function gpuMemoryBytes(): number | null {
  try {
    const out = execFileSync('nvidia-smi', ['--query-gpu=memory.total', '--format=csv,noheader,nounits'], { encoding: 'utf8', timeout: 5000 });
    const mib = Number(out.trim().split('\n')[0]);
    return Number.isFinite(mib) && mib > 0 ? mib * 1024 * 1024 : null;
  } catch {
    return null;
  }
}

/** Memory each backend can hold tensors in (null: unknown, no check). */
export const BACKEND_MEMORY = {
  'node-gpu': gpuMemoryBytes,
  node: () => os.totalmem(),
  wasm: () => Math.min(WASM_HEAP_BYTES, os.totalmem()),
  cpu: () => os.totalmem(),
} satisfies Record<BackendName, () => number | null>;

export interface MemoryPlan {
  /** Trainable policies (adapters, full copies, or the one trained base). */
  policies: number;
  lora: { r: number; targetModules: readonly string[] } | null;
  /** A shared full fine-tune with a KL penalty keeps a second, frozen base. */
  referenceCopy: boolean;
  /** Per-role full fine-tuning: each policy trains its own copy of every weight beside the frozen base. */
  ownCopies?: boolean;
}

/** What a Hugging Face run keeps resident, from its policy settings (policies/hf.ts builds exactly this). */
export function hfMemoryPlan(o: { sharing: PolicySetKind; lora: MemoryPlan['lora']; reference: boolean }): MemoryPlan {
  const policies = POLICY_SET_LAYOUTS[o.sharing].policies(ROLES).length; // one adapter or copy per role, as the lab's per-role sets
  const ownCopies = !o.lora && policies > 1;
  return { policies, lora: o.lora, referenceCopy: !o.lora && !ownCopies && o.reference, ownCopies };
}

/** Bytes the run keeps resident, by part. */
export function residentBytes(config: HfModelConfig, plan: MemoryPlan): { base: number; trainable: number; total: number } {
  const est = estimateHfMemory(config, plan.lora ? { loraR: plan.lora.r, targetModules: plan.lora.targetModules } : {});
  const base = est.weightBytes * (plan.referenceCopy ? 2 : 1);
  // Per trainable policy: its own weights (an adapter, or a per-role full copy; a shared full fine-tune's are the base), two AdamW moments, one gradient.
  const own = plan.lora ? est.trainableParameters * 4 : plan.ownCopies ? est.weightBytes : 0;
  const perPolicy = own + est.optimizerBytes + est.trainableParameters * 4;
  const trainable = perPolicy * plan.policies;
  return { base, trainable, total: base + trainable };
}

const gb = (b: number) => `${(b / 1e9).toFixed(2)} GB`;

/** Throws, naming the model folder and the figures, when the run cannot fit the backend's memory. */
export function checkModelFits(dir: string, config: HfModelConfig, plan: MemoryPlan, backend: BackendName, env: NodeJS.ProcessEnv = process.env): void {
  const override = env[MEMORY_ENV]?.trim();
  const available = override ? Number(override) : BACKEND_MEMORY[backend]();
  if (override && !(Number.isFinite(available) && (available as number) > 0)) throw new Error(`${MEMORY_ENV}="${override}" is not a positive number of bytes`);
  if (available === null) return;
  const need = residentBytes(config, plan);
  if (need.total <= available) return;
  const how = plan.lora
    ? 'a smaller model, a lower policies.adapter.r, fewer targetModules, or policies.sharing shared'
    : plan.ownCopies
      ? 'policies.adapter.kind=lora (one frozen base, one small adapter per role), or policies.sharing shared'
      : 'policies.adapter.kind=lora (one frozen base, small adapters)';
  const what = plan.lora ? 'adapter(s)' : plan.ownCopies ? 'per-role full copies of the model (per-role full fine-tuning)' : 'full copy';
  throw new Error(
    `model ${dir} does not fit the ${backend} backend's memory: it needs at least ${gb(need.total)} resident (base ${gb(need.base)}, ` +
      `trainable weights + AdamW + gradients ${gb(need.trainable)} for ${plan.policies} ${what}), ` +
      `the backend has ${gb(available)}${override ? ` (${MEMORY_ENV})` : ''}; activations come on top (srpo-lab model info). Try ${how}`,
  );
}
