/**
 * Shared by the training, rollout and endpoint tests: the lab's own small character model as a
 * Hugging Face folder (models/hf/labFolder.ts: Llama-style config, character tokenizer, the plain
 * chat template `<bos><role>` + user text), written once per (shape, seed) and process into a
 * temporary folder, and HfPolicies over it (full fine-tuning unless an adapter is given), the one
 * model family every run trains since issue 29.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeLabFolder, type LabShape } from '../../../src/core/models/hf/labFolder';
import type { HfAdapterConfig } from '../../../src/core/models/hf/model';
import type { PolicySetKind } from '../../../src/core/models/sharing';
import { HfPolicies } from '../../../src/core/policies/hf';

/** A d32 x 1 layer lab shape: fast on the CPU backends, still every part of the model. */
export const TINY_LAB: LabShape = { dModel: 32, nLayers: 1, nHeads: 2, contextLength: 128, normEps: 1e-5, initStd: 0.02 };

/** The run-config overrides of the same shape (`policies.modelOverrides`), for openPolicies / presetConfig. */
export const TINY_LAB_OVERRIDES = { dModel: 32, nLayers: 1, nHeads: 2, contextLength: 128 } as const;

const folders = new Map<string, string>();

/** A seeded lab folder of TINY_LAB with `shape`'s changes (written on the first call, reused after). */
export function tinyLabFolder(shape: Partial<LabShape> = {}, seed = 1): string {
  const full = { ...TINY_LAB, ...shape };
  const key = JSON.stringify({ full, seed });
  let dir = folders.get(key);
  if (!dir) {
    dir = writeLabFolder(join(mkdtempSync(join(tmpdir(), 'srpo-lab-test-')), 'lab'), full, { seed }).dir;
    folders.set(key, dir);
  }
  return dir;
}

export interface LabPoliciesOptions {
  sharing?: PolicySetKind;
  /** Seed of the folder's weights and of any adapters. */
  seed?: number;
  shape?: Partial<LabShape>;
  /** LoRA settings; null (default): full fine-tuning. */
  adapter?: HfAdapterConfig | null;
  /** Keep a KL reference. */
  reference?: boolean;
}

/** HfPolicies over a tiny lab folder; the caller disposes them. */
export function labPolicies(o: LabPoliciesOptions = {}): HfPolicies {
  const seed = o.seed ?? 1;
  return new HfPolicies({
    dir: tinyLabFolder(o.shape, seed),
    sharing: o.sharing ?? 'shared',
    adapter: o.adapter ?? null,
    seed,
    reference: o.reference ?? false,
    recompute: false,
    enableThinking: null,
  });
}
