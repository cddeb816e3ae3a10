/**
 * Which model a run trains. There is one model family (issue 29): every run trains a Hugging
 * Face folder through hf.ts, either the one `policies.init` names or, with `policies.init` null,
 * the lab's own small model of the shape `policies.model` + `modelOverrides` names, written as
 * such a folder (models/hf/labCache.ts). `openPolicies` builds the run's policies, fresh or from a run
 * checkpoint, after the checks that must come before loading (the folder exists, the run fits the
 * backend's memory).
 *
 * A run checkpoint records its model kind (POLICIES_FILE). Checkpoints of the lab's removed
 * character Transformer ('lab') cannot be read: its architecture (learned positions, GELU MLP)
 * has no counterpart in the family, so its weights do not convert; a resume of such a run is
 * refused here with what to do instead (decision 069).
 *
 * Not here: the HF loader (models/hf). Tests: test/core/train/hfPolicies.test.ts,
 * test/engine/hfRun.test.ts, test/core/models/hf/labCache.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RunConfig } from '../config';
import { labShapeOf } from '../config/labShape';
import { labModelDir } from '../models/hf/labCache';
import { currentBackend } from '../models/backend';
import { readHfConfig } from '../models/hf/config';
import type { HfAdapterConfig } from '../models/hf/model';
import { HfPolicies } from './hf';
import { checkModelFits, hfMemoryPlan } from './memoryCheck';
import { POLICY_MODEL_KINDS, type Policies, type PolicyModelKind } from './types';

/** At the root of a run checkpoint: { modelKind, sharing, policies } (read on a resume). */
export const POLICIES_FILE = 'policies.json';

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

/** The run's model folder (absolute): `policies.init`, or the lab model's folder when it is null. */
export function hfModelDir(config: RunConfig, baseDir: string): string {
  const init = config.policies.init;
  if (!init) return labModelDir(labShapeOf(config), config.seed);
  const dir = path.resolve(baseDir, init);
  if (!fs.existsSync(dir))
    throw new Error(
      `run config: field "policies.init" = "${init}": model folder ${dir} does not exist (moved or deleted?); the run's base model must stay where it was`,
    );
  return dir;
}

export const POLICY_MODELS = {
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
        tapeBudgetBytes: config.update.tapeBudgetMB === null ? undefined : config.update.tapeBudgetMB * 2 ** 20,
        enableThinking: config.workflow.enableThinking,
        resumeDir: o.resumeDir,
      });
    },
  },
} satisfies Record<PolicyModelKind, PolicyKindEntry>;

/** Refuses a resume from a checkpoint of a model kind this version cannot read (see the header). */
export function checkResumeKind(resumeDir: string): void {
  const file = path.join(resumeDir, POLICIES_FILE);
  if (!fs.existsSync(file)) return;
  const kind = (JSON.parse(fs.readFileSync(file, 'utf8')) as { modelKind?: unknown }).modelKind;
  if (kind === 'lab')
    throw new Error(
      `${resumeDir}: this checkpoint is of the lab's former character Transformer (model kind "lab"), which this version no longer has: ` +
        "its weights (learned positions, a GELU MLP) do not convert to the one model family's. The run's records stay readable; " +
        'to go on, start a new run from the same preset (its policy is now a Hugging Face folder of the same size).',
    );
  if (!(POLICY_MODEL_KINDS as readonly unknown[]).includes(kind))
    throw new Error(`${file}: field "modelKind" is ${JSON.stringify(kind)}; valid: ${POLICY_MODEL_KINDS.join(', ')}`);
}

/** The run's policies, fresh or from a run checkpoint (`resumeDir`). */
export function openPolicies(config: RunConfig, o: OpenPoliciesOptions): Policies {
  if (o.resumeDir) checkResumeKind(o.resumeDir);
  return POLICY_MODELS.hf.open(config, o);
}
