/**
 * Run checkpoints: one directory per step (`<runDir>/checkpoints/step-000010/`) holding one
 * sub-directory per policy id in the policies' format (a peft adapter folder, or a transformers
 * folder in float32 for a full fine-tune: policies/hf.ts) plus that policy's optimizer state
 * (`optimizer.safetensors`) and its version, and `policies.json` (the model kind, which a resume
 * checks: policies/registry.ts). Reading one back is the policies' own business (hf.ts, resumeDir).
 *
 * Tests: test/core/train/trainer.test.ts (resume), test/core/train/checkpoints.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { decodeSafetensors, encodeSafetensors } from '../models/safetensors';
import { POLICIES_FILE } from '../policies/registry';
import type { Policies } from '../policies/types';
import type { AdamW } from './optimizer';

const OPTIMIZER_FILE = 'optimizer.safetensors';
export { POLICIES_FILE };

export function checkpointDir(runDir: string, step: number): string {
  return path.join(runDir, 'checkpoints', `step-${String(step).padStart(6, '0')}`);
}

/**
 * Writes every policy in its model kind's format (`Policies.savePolicy`: a peft adapter or a
 * transformers folder), its optimizer state beside it, and POLICIES_FILE
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

/** Restores each policy's optimizer state from a run checkpoint (resume). */
export function restoreOptimizers(dir: string, optimizers: ReadonlyMap<string, AdamW>): void {
  for (const [policyId, opt] of optimizers) {
    const file = path.join(dir, policyId, OPTIMIZER_FILE);
    if (!fs.existsSync(file)) throw new Error(`${file}: missing (needed to resume the optimizer of policy "${policyId}")`);
    opt.load(decodeSafetensors(fs.readFileSync(file), file).tensors, file);
  }
}
