/**
 * The lab model kind's starting policies: random weights of the configured preset, or the weights
 * of a checkpoint (`policies.init`, or a run checkpoint on resume): a single model checkpoint
 * (copied into every policy of the set) or a run-checkpoint-shaped directory with one
 * sub-directory per policy id. Also POLICIES_FILE, the file at a run checkpoint's root that names
 * its model kind (written by train/checkpoints.ts, read by registry.ts on a resume).
 *
 * Here, below train/, so that policies/registry.ts need not import train/ (a package cycle the
 * layer rule refuses). Not here: saving checkpoints and optimizer state (train/checkpoints.ts).
 * Tests: test/core/train/trainer.test.ts (resume), test/core/train/warmstart.test.ts, evaluate.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RunConfig } from '../config';
import { CHECKPOINT_FILES, readCheckpoint } from '../models/checkpoint';
import { modelConfig } from '../models/config';
import { PolicySet } from '../models/policySet';
import { CharTokenizer, ROLES } from '../models/tokenizer';

/** At the root of a run checkpoint: { modelKind, sharing, policies } (policies/registry.ts reads modelKind on a resume). */
export const POLICIES_FILE = 'policies.json';

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
