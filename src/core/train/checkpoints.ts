/**
 * Run checkpoints: one directory per step (`<runDir>/checkpoints/step-000010/`) holding one
 * sub-directory per policy id in its model kind's format (the lab's: models/checkpoint.ts,
 * safetensors + config + tokenizer; a Hugging Face policy: a peft adapter folder, or a
 * transformers folder in float32 for a full fine-tune: policies/hf.ts) plus that policy's
 * optimizer state (`optimizer.safetensors`) and its version, and `policies.json` (model kind). Also the starting
 * point of a run (`policies.init`): a single model checkpoint (copied into every policy of the
 * set) or a run-checkpoint-shaped directory with one sub-directory per policy id.
 *
 * Tests: test/core/train/trainer.test.ts (resume), test/core/train/checkpoints.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RunConfig } from '../config';
import { CHECKPOINT_FILES, readCheckpoint } from '../models/checkpoint';
import { modelConfig } from '../models/config';
import { PolicySet } from '../models/policySet';
import { decodeSafetensors, encodeSafetensors } from '../models/safetensors';
import { CharTokenizer, ROLES } from '../models/tokenizer';
import { LabPolicies } from '../policies/lab';
import type { Policies } from '../policies/types';
import type { AdamW } from './optimizer';

const OPTIMIZER_FILE = 'optimizer.safetensors';
/** At the root of a run checkpoint: { modelKind, sharing, policies } (policies/registry.ts reads modelKind on a resume). */
export const POLICIES_FILE = 'policies.json';

export function checkpointDir(runDir: string, step: number): string {
  return path.join(runDir, 'checkpoints', `step-${String(step).padStart(6, '0')}`);
}

/** Writes every policy of the lab's own models (weights, version) and its optimizer state; returns the directory. */
export function saveRunCheckpoint(dir: string, policies: PolicySet, tokenizer: CharTokenizer, optimizers: ReadonlyMap<string, AdamW>): string {
  return savePoliciesCheckpoint(dir, new LabPolicies(policies, tokenizer), optimizers);
}

/**
 * Writes every policy in its model kind's format (`Policies.savePolicy`: the lab's checkpoint,
 * or a peft adapter / transformers folder), its optimizer state beside it, and POLICIES_FILE
 * (the model kind a resume reads back); returns the directory.
 */
export function savePoliciesCheckpoint(dir: string, policies: Policies, optimizers: ReadonlyMap<string, AdamW>): string {
  const tmp = `${dir}.partial`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  for (const p of policies.policies()) {
    const sub = path.join(tmp, p.id);
    policies.savePolicy(p.id, sub);
    const opt = optimizers.get(p.id);
    if (opt) fs.writeFileSync(path.join(sub, OPTIMIZER_FILE), encodeSafetensors(opt.state()));
  }
  fs.writeFileSync(
    path.join(tmp, POLICIES_FILE),
    JSON.stringify({ modelKind: policies.modelKind, sharing: policies.sharing, policies: policies.ids() }, null, 2) + '\n',
  );
  // Rename last, so a crash mid-write never leaves a directory that looks complete.
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(tmp, dir);
  return dir;
}

/** Whether `dir` is a single model checkpoint (as opposed to one sub-directory per policy). */
function isModelCheckpoint(dir: string): boolean {
  return fs.existsSync(path.join(dir, CHECKPOINT_FILES.config));
}

/**
 * The policy set a run starts from: random weights of the configured preset, or the weights of
 * `config.policies.init`. Returns the tokenizer of the checkpoint (or a fresh one).
 */
export function initialPolicies(config: RunConfig, baseDir = process.cwd()): { policies: PolicySet; tokenizer: CharTokenizer } {
  const init = config.policies.init;
  if (!init) {
    const mc = modelConfig(config.policies.model, { ...config.policies.modelOverrides, seed: config.seed });
    return { policies: new PolicySet(config.policies.sharing, mc, ROLES), tokenizer: new CharTokenizer() };
  }
  const dir = path.resolve(baseDir, init);
  if (!fs.existsSync(dir)) throw new Error(`run config: field "policies.init" = "${init}": no such checkpoint directory (${dir})`);
  return loadPolicies(dir, config);
}

/** Loads a run checkpoint or a single model checkpoint into a new policy set. */
export function loadPolicies(dir: string, config: RunConfig): { policies: PolicySet; tokenizer: CharTokenizer } {
  if (!fs.existsSync(dir)) throw new Error(`checkpoint directory ${dir} does not exist (moved or deleted?)`);
  const single = isModelCheckpoint(dir);
  const first = single ? readCheckpoint(dir) : null;
  const subdirs = single
    ? []
    : fs
        .readdirSync(dir)
        .filter((n) => fs.statSync(path.join(dir, n)).isDirectory())
        .sort();
  if (!single && subdirs.length === 0) throw new Error(`${dir}: neither a model checkpoint (${CHECKPOINT_FILES.config}) nor a directory of policy checkpoints`);
  const probe = first ?? readCheckpoint(path.join(dir, subdirs[0]));
  // A shared checkpoint can seed every policy of a per-role set (each role starts from it).
  const subFor = (id: string) => (subdirs.includes(id) ? path.join(dir, id) : subdirs.length === 1 ? path.join(dir, subdirs[0]) : null);
  const policies = new PolicySet(config.policies.sharing, probe.config, ROLES);
  try {
    for (const p of policies.policies()) {
      const sub = single ? dir : subFor(p.id);
      if (sub === null) throw new Error(`${dir}: no checkpoint for policy "${p.id}" (found: ${subdirs.join(', ')})`);
      const c = single ? first! : readCheckpoint(sub);
      p.model.assign(c.weights);
      p.version = Number(c.metadata.version ?? 0) || 0;
    }
  } catch (err) {
    policies.dispose();
    throw err;
  }
  return { policies, tokenizer: probe.tokenizer };
}

/** Restores each policy's optimizer state from a run checkpoint (resume). */
export function restoreOptimizers(dir: string, optimizers: ReadonlyMap<string, AdamW>): void {
  for (const [policyId, opt] of optimizers) {
    const file = path.join(dir, policyId, OPTIMIZER_FILE);
    if (!fs.existsSync(file)) throw new Error(`${file}: missing (needed to resume the optimizer of policy "${policyId}")`);
    opt.load(decodeSafetensors(fs.readFileSync(file), file).tensors, file);
  }
}
