/**
 * Which model a run trains, as a typed registry keyed by model kind: the lab's own Transformer
 * (lab.ts) or a Hugging Face folder (hf.ts). The kind follows the run config: `policies.adapter`
 * set, or `policies.init` naming a Hugging Face folder (a config.json with `model_type`), is
 * 'hf'; anything else 'lab'. A resume reads the kind its checkpoint recorded (POLICIES_FILE).
 * `openPolicies` builds the run's policies, fresh or from a run checkpoint, after the checks that
 * must come before loading (the model folder exists, the run fits the backend's memory).
 *
 * Not here: the lab's checkpoint reading (labInit.ts), the HF loader (models/hf).
 * Tests: test/core/train/hfPolicies.test.ts, test/engine/hfRun.test.ts, test/core/train/trainer.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isHfModelFolder, type RunConfig } from '../config';
import { currentBackend } from '../models/backend';
import { readHfConfig } from '../models/hf/config';
import type { HfAdapterConfig } from '../models/hf/model';
import { HfPolicies } from './hf';
import { LabPolicies } from './lab';
import { initialPolicies, loadPolicies, POLICIES_FILE } from './labInit';
import { checkModelFits, hfMemoryPlan } from './memoryCheck';
import { POLICY_MODEL_KINDS, type Policies, type PolicyModelKind } from './types';

export interface OpenPoliciesOptions {
  /** Where a relative policies.init resolves. */
  baseDir: string;
  /** A run checkpoint to resume from. */
  resumeDir?: string;
  /** Build the KL reference when kl.coef > 0 (default true; evaluation needs none). */
  withReference?: boolean;
}

const wantsReference = (config: RunConfig, o: OpenPoliciesOptions): boolean => config.kl.coef > 0 && (o.withReference ?? true);

interface PolicyKindEntry {
  description: string;
  open(config: RunConfig, o: OpenPoliciesOptions): Policies;
}

/** The LoRA settings of the run config as the model takes them (null: full fine-tuning). */
export function adapterSettings(config: RunConfig): HfAdapterConfig | null {
  const a = config.policies.adapter;
  return a ? { r: a.r, alpha: a.alpha, rslora: a.rslora, targetModules: [...a.targetModules], dropout: a.dropout } : null;
}

/** The run's Hugging Face folder (absolute), or an error saying how to give one. */
export function hfModelDir(config: RunConfig, baseDir: string): string {
  const init = config.policies.init;
  if (!init) {
    throw new Error(
      'run config: field "policies.init": this run trains a Hugging Face model and needs its folder: --set policies.init=PATH (config.json, tokenizer.json and the safetensors weights)',
    );
  }
  const dir = path.resolve(baseDir, init);
  if (!fs.existsSync(dir))
    throw new Error(
      `run config: field "policies.init" = "${init}": model folder ${dir} does not exist (moved or deleted?); the run's base model must stay where it was`,
    );
  return dir;
}

export const POLICY_MODELS = {
  lab: {
    description: "the lab's own character-level Transformer (random, warm-started, or a run checkpoint)",
    open: (config, o) => {
      const start = o.resumeDir ? loadPolicies(o.resumeDir, config) : initialPolicies(config, o.baseDir);
      try {
        // The KL reference is the run's starting policy, frozen (a second copy).
        const reference = wantsReference(config, o) ? initialPolicies(config, o.baseDir).policies : null;
        return new LabPolicies(start.policies, start.tokenizer, reference);
      } catch (err) {
        start.policies.dispose();
        throw err;
      }
    },
  },
  hf: {
    description: 'a Hugging Face model folder (Qwen3, Qwen2/2.5, Llama 3): LoRA adapters over one frozen base, or full fine-tuning',
    open: (config, o) => {
      const dir = hfModelDir(config, o.baseDir);
      const adapter = adapterSettings(config);
      const hfConfig = readHfConfig(dir);
      const backend = currentBackend()?.name;
      if (backend) {
        const lora = adapter ? { r: adapter.r, targetModules: adapter.targetModules } : null;
        checkModelFits(dir, hfConfig, hfMemoryPlan({ sharing: config.policies.sharing, lora, reference: wantsReference(config, o) }), backend);
      }
      return new HfPolicies({
        dir,
        sharing: config.policies.sharing,
        adapter,
        seed: config.seed,
        reference: wantsReference(config, o),
        recompute: config.update.recompute,
        tapeBudgetBytes: config.update.tapeBudgetMB * 2 ** 20,
        enableThinking: config.workflow.enableThinking,
        resumeDir: o.resumeDir,
      });
    },
  },
} satisfies Record<PolicyModelKind, PolicyKindEntry>;

/** The model kind of a run (see the header). */
export function modelKindOf(config: RunConfig, baseDir: string, resumeDir?: string): PolicyModelKind {
  if (resumeDir) {
    const file = path.join(resumeDir, POLICIES_FILE);
    if (fs.existsSync(file)) {
      const kind = (JSON.parse(fs.readFileSync(file, 'utf8')) as { modelKind?: unknown }).modelKind;
      if (!(POLICY_MODEL_KINDS as readonly unknown[]).includes(kind))
        throw new Error(`${file}: field "modelKind" is ${JSON.stringify(kind)}; valid: ${POLICY_MODEL_KINDS.join(', ')}`);
      return kind as PolicyModelKind;
    }
  }
  if (config.policies.adapter) return 'hf';
  const init = config.policies.init;
  return init && isHfModelFolder(path.resolve(baseDir, init)) ? 'hf' : 'lab';
}

export function openPolicies(config: RunConfig, o: OpenPoliciesOptions): Policies {
  return POLICY_MODELS[modelKindOf(config, o.baseDir, o.resumeDir)].open(config, o);
}
