/**
 * A Hugging Face decoder (models/hf) as `Policies` (types.ts). One base model in memory whatever
 * the number of roles:
 * - LoRA (`policies.adapter` set): every policy is one named adapter over the frozen base
 *   (shared: one adapter 'shared'; per-role: one per role), initialised as peft does (B = 0, so
 *   step 0 is the base exactly); the KL reference is the base with adapters off (no copy).
 * - full fine-tuning (`policies.adapter` null), shared: the base itself is trained; the KL
 *   reference is a second, frozen copy.
 * - full fine-tuning, per-role: the base is loaded once, frozen (it is the KL reference), and each
 *   policy trains its own copy of every weight, cloned from it in memory (or, on resume, read from
 *   its checkpoint). That is one model copy plus AdamW state per role: registry.ts refuses it
 *   before loading when memoryCheck.ts says it does not fit, pointing to LoRA.
 * Each mode is built by its own function (buildLora, buildPerRoleFull, buildSharedFull in the
 * typed registry HF_TRAINING_MODES at the end of this file); the rest of the class only asks which
 * model and adapter a policy runs on.
 * LoRA dropout (`policies.adapter.dropout` > 0) acts in the update's gradient pass only (`score`
 * with the update's noise; models/hf/loraDropout.ts).
 * Prompts are chat messages (workflows/chatPrompts.ts) rendered by the model's chat template,
 * with `enable_thinking` from the run config; sampling stops at generation_config's stop ids;
 * what is scored and trained are the sampled ids themselves, never re-tokenised text. The
 * member's role goes to the template as `lab_role` (the lab's own character folders put their
 * role marker from it, models/hf/labFolder.ts; other templates do not read it).
 *
 * Checkpoints (`savePolicy`): an adapter is a peft folder (adapter_config.json +
 * adapter_model.safetensors, float32, peft's names: models/hf/saveAdapter.ts), so a checkpoint
 * opens in peft as it is; a full fine-tune is a transformers model folder in float32
 * (models/hf/saveModel.ts: config, weights, tokenizer files), exact for a resume and loadable by
 * transformers. Each beside `policy.json` (id, version); the trainer adds the optimizer state.
 *
 * Not here: which kind a run uses and building from a run config (registry.ts), the memory check
 * (memoryCheck.ts). Tests: test/core/train/hfPolicies.test.ts, hfDropout.test.ts, hfPerRoleFull.test.ts,
 * test/engine/hfRun.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { readGenerationConfig, readHfConfig } from '../models/hf/config';
import { LAB_ROLE_VARIABLE } from '../models/hf/labFolder';
import { scoreHf, scoreHfData } from '../models/hf/logprobs';
import { readLoraAdapter } from '../models/hf/loraFiles';
import { plannedPassBytes, scoreChunkRows } from '../models/hf/memory';
import { checkpointLayout, HfModel, type HfAdapterConfig } from '../models/hf/model';
import { openTensorSource } from '../models/hf/safetensorsFile';
import { sampleHf } from '../models/hf/sampler';
import { saveLoraAdapter } from '../models/hf/saveAdapter';
import { saveMergedModel } from '../models/hf/saveModel';
import { checkTokenizerFitsModel, HfTokenizer } from '../models/hf/tokenizer';
import type { HfGenerationConfig, HfModelConfig, TensorSource } from '../models/hf/types';
import { expectedWeights } from '../models/hf/weights';
import { POLICY_SET_LAYOUTS, type PolicySetKind } from '../models/sharing';
import { mixSeed } from '../models/random';
import { ROLES, type Role } from '../models/vocab';
import { chatMessages } from '../workflows/chatPrompts';
import type { InstructionName } from '../workflows/prompts';
import {
  chunks,
  topPairs,
  type CompletionRow,
  type GradientTape,
  type Policies,
  type PolicyRef,
  type PromptRequest,
  type SampleSettings,
  type SampledCompletion,
  type ScoreWith,
  type TrainingNoise,
} from './types';

/** Beside each saved policy: its id and version. */
export const POLICY_FILE = 'policy.json';

export interface HfPoliciesOptions {
  /** The base model folder (policies.init). */
  dir: string;
  sharing: PolicySetKind;
  /** LoRA settings; null: full fine-tuning. */
  adapter: HfAdapterConfig | null;
  seed: number;
  /** Keep a KL reference (kl.coef > 0). */
  reference: boolean;
  /** Per-layer activation recomputation in training. */
  recompute: boolean;
  /** Tape bytes a gradient pass may keep before it runs in row blocks (`update.tapeBudgetMB`; 0: never); default the backend's. */
  tapeBudgetBytes?: number;
  /** Qwen3's `enable_thinking` (null: the template's default). */
  enableThinking: boolean | null;
  /** A run checkpoint to resume from (`<dir>/<policyId>/`). */
  resumeDir?: string;
}

/** The files of a model folder that are not weights, read and checked first (a bad folder fails before any weight is read). */
export function readHfFiles(dir: string): { config: HfModelConfig; generation: HfGenerationConfig; tokenizer: HfTokenizer } {
  if (!fs.existsSync(dir)) throw new Error(`model folder ${dir} does not exist (moved or deleted?)`);
  const config = readHfConfig(dir);
  const generation = readGenerationConfig(dir, config);
  const tokenizer = HfTokenizer.fromFolder(dir);
  checkTokenizerFitsModel(tokenizer, config, dir);
  return { config, generation, tokenizer };
}

/** A model's weights as a TensorSource in the checkpoint's own layout (what saveMergedModel reads), from memory. */
export function memorySource(model: HfModel, origin: string): TensorSource {
  const specs = new Map(expectedWeights(model.config).map((w) => [w.name, w]));
  return {
    origin,
    names: () => [...specs.keys()],
    get: (name) => {
      const spec = specs.get(name);
      const v = model.params.get(name);
      if (!spec || !v) return undefined;
      return {
        name,
        dtype: 'F32',
        shape: [...spec.shape],
        file: origin,
        read: () => checkpointLayout(name, model.config, v.dataSync() as Float32Array, v.shape), // waits for the device
      };
    },
  };
}

function readPolicyFile(dir: string, policyId: string): number {
  const file = path.join(dir, POLICY_FILE);
  if (!fs.existsSync(file)) throw new Error(`${file}: missing (needed to resume policy "${policyId}")`);
  const json = JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: unknown };
  const version = Number(json.version);
  if (!Number.isInteger(version) || version < 0) throw new Error(`${file}: field "version" must be an integer >= 0`);
  return version;
}

/**
 * A member's prompt as a chat model reads it: the role's system instructions, then the state as
 * the user turn, through the model's own chat template with the generation prompt. Training
 * (HfPolicies.promptIds) and `eval --model` (train/evaluate.ts hfRunner) both render with it.
 */
export function hfPromptIds(tokenizer: HfTokenizer, instruction: InstructionName, prompt: string, enableThinking?: boolean, role?: Role): number[] {
  // `lab_role`: read by the lab's own character folders' template (models/hf/labFolder.ts); other templates never name it.
  const extra = role ? { [LAB_ROLE_VARIABLE]: role } : undefined;
  return tokenizer.applyChatTemplate(chatMessages(instruction, prompt), { addGenerationPrompt: true, enableThinking, extra }).ids;
}

export class HfPolicies implements Policies {
  readonly modelKind = 'hf' as const;
  readonly sharing: PolicySetKind;
  readonly padId = 0;
  readonly config: HfModelConfig;
  readonly generation: HfGenerationConfig;
  readonly tokenizer: HfTokenizer;
  /** The base: frozen under LoRA and per-role full fine-tuning, trained under shared full fine-tuning. */
  readonly model: HfModel;
  /** Shared full fine-tuning's frozen KL reference (a second load of the folder). */
  private readonly refModel: HfModel | null;
  /** Per-role full fine-tuning: each policy's own trainable copy of the model, by policy id. */
  private readonly copies: Map<string, HfModel>;
  private readonly byId = new Map<string, PolicyRef>();
  private readonly byRole = new Map<Role, PolicyRef>();
  private readonly names = new Map<string, ReadonlyMap<string, tf.Variable>>();

  constructor(private readonly options: HfPoliciesOptions) {
    const { dir, sharing, adapter } = options;
    if (!Object.hasOwn(POLICY_SET_LAYOUTS, sharing)) throw new Error(`unknown policy sharing "${sharing}"`);
    const layout = POLICY_SET_LAYOUTS[sharing].policies(ROLES);
    this.sharing = sharing;
    const files = readHfFiles(dir);
    this.config = files.config;
    this.generation = files.generation;
    this.tokenizer = files.tokenizer;
    const resume = options.resumeDir;
    const build: HfBuild = {
      options,
      config: this.config,
      layout,
      validVocab: this.tokenizer.vocabSize,
      load: (from, trainable, recompute) =>
        loadWeights(from, this.config, { trainable, validVocab: this.tokenizer.vocabSize, recompute, tapeBudgetBytes: options.tapeBudgetBytes }),
      checkpointOf: (id, what) => {
        const sub = path.join(resume!, id);
        if (!fs.existsSync(sub)) throw new Error(`${resume}: no ${what} for policy "${id}" (needed to resume)`);
        return sub;
      },
    };
    const mode: HfTrainingMode = adapter ? 'lora' : layout.length > 1 ? 'perRoleFull' : 'sharedFull';
    const built = HF_TRAINING_MODES[mode](build);
    this.model = built.model;
    this.refModel = built.refModel;
    this.copies = built.copies;
    for (const { id, roles, version, trainable } of built.policies) {
      this.names.set(id, trainable);
      const p: PolicyRef = { id, roles, version };
      this.byId.set(id, p);
      for (const r of roles) this.byRole.set(r, p);
    }
  }

  get hasReference(): boolean {
    return this.options.reference;
  }

  /** The adapter a policy runs with (its id), or undefined under full fine-tuning (the model's weights are the policy). */
  private adapterOf(policyId: string): string | undefined {
    this.get(policyId);
    return this.options.adapter ? policyId : undefined;
  }

  /** The model a policy runs on: its own copy (per-role full fine-tuning), else the one base. */
  private modelOf(policyId: string): HfModel {
    this.get(policyId);
    return this.copies.get(policyId) ?? this.model;
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }

  policies(): PolicyRef[] {
    return [...this.byId.values()];
  }

  get(policyId: string): PolicyRef {
    const p = this.byId.get(policyId);
    if (!p) throw new Error(`Hugging Face policies (${this.sharing}): no policy "${policyId}"; ids: ${this.ids().join(', ')}`);
    return p;
  }

  policyFor(role: Role): PolicyRef {
    const p = this.byRole.get(role);
    if (!p) throw new Error(`Hugging Face policies (${this.sharing}): no policy plays role "${role}"`);
    return p;
  }

  bumpVersion(policyId: string): number {
    return ++this.get(policyId).version;
  }

  promptIds(policyId: string, request: PromptRequest, maxNewTokens: number): number[] {
    this.get(policyId);
    const ids = hfPromptIds(this.tokenizer, request.instruction, request.prompt, this.options.enableThinking ?? undefined, request.role);
    if (ids.length + maxNewTokens > this.config.maxPositions) {
      throw new Error(
        `a ${request.role} prompt of ${ids.length} tokens + rollout.maxNewTokens ${maxNewTokens} exceeds the model's max_position_embeddings ${this.config.maxPositions}`,
      );
    }
    return ids;
  }

  sample(policyId: string, prompts: number[][], s: SampleSettings): SampledCompletion[] {
    const rows = sampleHf(this.modelOf(policyId), prompts, {
      adapter: this.adapterOf(policyId),
      maxNewTokens: s.maxNewTokens,
      temperature: s.temperature,
      topP: s.topP,
      stopIds: this.generation.stopIds,
      seed: s.seed,
      padId: this.padId,
      decode: s.decode,
      topLogprobs: s.topLogprobs,
    });
    return rows.map(({ top, ...row }) => (top ? { ...row, top: topPairs(top) } : row));
  }

  decode(ids: readonly number[]): string {
    return this.tokenizer.decode([...ids], { skipSpecialTokens: true });
  }

  /**
   * The update's current log-probs. With `noise` and lora_dropout p > 0 this forward drops the
   * adapters' inputs (peft + TRL in train mode), while the old log-probs (`scoreData`: the
   * sampler's policy, no dropout, as the rollouts were drawn), the KL reference and evaluation
   * never do. The PPO ratio exp(log pi_cur - log pi_old) is therefore that of the dropped-out
   * learner against the behaviour policy: at the first mini-batch it is not exactly 1 but
   * fluctuates around it by the dropout noise, which the clip bounds like any other deviation.
   * TRL computes old log-probs in train mode (another dropout draw) or reuses the new ones
   * detached; we keep them equal to what sampled the tokens, so the importance weight stays
   * the correction to the behaviour policy and resume needs no stored masks.
   */
  score(policyId: string, rows: readonly CompletionRow[], minCompletionLength: number, noise?: TrainingNoise): tf.Tensor2D {
    const p = this.options.adapter?.dropout ?? 0;
    const dropout = noise && p > 0 ? { p, seed: noise.seed, rowKeys: noise.rowKeys } : undefined;
    const s = scoreHf(this.modelOf(policyId), rows, { adapter: this.adapterOf(policyId), padId: this.padId, minCompletionLength, dropout });
    s.mask.dispose();
    return s.logp; // [B, T] nats
  }

  gradientTape(policyId: string): GradientTape {
    const model = this.modelOf(policyId);
    const budgetBytes = model.tapeBudgetBytes;
    return { budgetBytes, passBytes: (rows, seqLen) => plannedPassBytes(model.config, seqLen, rows, budgetBytes, model.tapeProfile) };
  }

  scoreData(policyId: string, rows: readonly CompletionRow[], which: ScoreWith): { logp: number[][]; entropy: number[][] } {
    if (which === 'reference' && !this.options.reference) throw new Error('HfPolicies.scoreData: no KL reference (the run has kl.coef = 0)');
    // The reference: the base with adapters off, the frozen base of per-role copies, or the frozen second load of a shared full fine-tune.
    const model = which === 'reference' ? (this.refModel ?? this.model) : this.modelOf(policyId);
    const adapter = which === 'reference' ? (this.options.adapter ? null : undefined) : this.adapterOf(policyId);
    const logp: number[][] = [];
    const entropy: number[][] = [];
    const longest = rows.reduce((m, r) => Math.max(m, r.prompt.length + r.completion.length), 1);
    for (const part of chunks(rows, scoreChunkRows(this.config, longest))) {
      const s = scoreHfData(model, part, { adapter, padId: this.padId, entropy: true });
      part.forEach((r, j) => {
        logp.push(s.logp[j].slice(0, r.completion.length));
        entropy.push(s.entropy![j].slice(0, r.completion.length));
      });
    }
    return { logp, entropy };
  }

  trainable(policyId: string): ReadonlyMap<string, tf.Variable> {
    const vars = this.names.get(policyId);
    if (!vars) throw new Error(`Hugging Face policies: no policy "${policyId}"`);
    return vars;
  }

  savePolicy(policyId: string, dir: string): void {
    const p = this.get(policyId);
    const a = this.options.adapter;
    if (a) {
      saveLoraAdapter(dir, {
        config: { r: a.r, alpha: a.alpha, rslora: a.rslora, dropout: a.dropout, targetModules: a.targetModules, baseModel: this.options.dir },
        pairs: this.model.readAdapter(policyId),
        baseModel: this.options.dir,
      });
    } else {
      saveMergedModel(dir, {
        sourceDir: this.options.dir,
        config: this.config,
        source: memorySource(this.modelOf(policyId), `policy "${policyId}" in memory`),
        dtype: 'F32',
      });
    }
    fs.writeFileSync(path.join(dir, POLICY_FILE), JSON.stringify({ policyId: p.id, version: p.version, kind: a ? 'lora' : 'full' }, null, 2) + '\n');
  }

  describe(): string {
    const c = this.config;
    const a = this.options.adapter;
    const how = a
      ? `LoRA r ${a.r}, alpha ${a.alpha}${a.rslora ? ' (rsLoRA)' : ''}${a.dropout > 0 ? `, dropout ${a.dropout} in training` : ''} on ${a.targetModules.join(', ')}: ${this.ids().length} adapter(s) (${this.sharing}) over one frozen base`
      : this.copies.size > 0
        ? `full fine-tuning per role: ${this.copies.size} trainable copies of every weight beside one frozen base`
        : 'full fine-tuning (every weight trained)';
    return `Hugging Face ${c.architecture} from ${this.options.dir}: ${c.numLayers} layers, hidden ${c.hiddenSize}, ${c.numHeads} heads (kv ${c.numKvHeads}), vocab ${c.vocabSize}, max positions ${c.maxPositions}; ${how}`;
  }

  dispose(): void {
    this.model.dispose();
    this.refModel?.dispose();
    for (const c of this.copies.values()) c.dispose();
    this.copies.clear();
  }
}

function loadWeights(
  dir: string,
  config: HfModelConfig,
  o: { trainable: boolean | 'lora'; validVocab: number; recompute: boolean; tapeBudgetBytes?: number },
): HfModel {
  const source = openTensorSource(dir);
  try {
    return HfModel.fromSource(config, source, o);
  } finally {
    source.close?.();
  }
}

/** The three ways HfPolicies holds its models (see the header). */
type HfTrainingMode = 'lora' | 'perRoleFull' | 'sharedFull';

/** What building any mode needs: the options, the config, the policies' layout, a weights loader and the resume folders. */
interface HfBuild {
  options: HfPoliciesOptions;
  config: HfModelConfig;
  layout: readonly { id: string; roles: Role[] }[];
  /** Real tokens (the tokenizer's size): the sampler never picks a head row beyond it. */
  validVocab: number;
  load(from: string, trainable: boolean | 'lora', recompute: boolean): HfModel;
  /** `<resumeDir>/<id>`, or an error naming `what` is missing. */
  checkpointOf(id: string, what: string): string;
}

/** The models a mode built, and each policy with its version and trainable variables (by names the same in every process). */
interface HfBuilt {
  model: HfModel;
  refModel: HfModel | null;
  copies: Map<string, HfModel>;
  policies: { id: string; roles: Role[]; version: number; trainable: ReadonlyMap<string, tf.Variable> }[];
}

/** Runs `fill` on a fresh HfBuilt; on an error every model built so far is disposed (nothing half-loaded). */
function guarded(built: HfBuilt, fill: (built: HfBuilt) => void): HfBuilt {
  try {
    fill(built);
    return built;
  } catch (err) {
    built.model.dispose();
    built.refModel?.dispose();
    for (const c of built.copies.values()) c.dispose();
    throw err;
  }
}

/** LoRA: one frozen base, one named adapter per policy (its checkpoint on resume, else peft's initialisation). */
function buildLora(b: HfBuild): HfBuilt {
  const { options } = b;
  const adapter = options.adapter!;
  const model = b.load(options.dir, 'lora', options.recompute);
  return guarded({ model, refModel: null, copies: new Map(), policies: [] }, (built) =>
    b.layout.forEach(({ id, roles }, i) => {
      let version = 0;
      if (options.resumeDir) {
        const sub = b.checkpointOf(id, 'adapter');
        model.loadAdapter(id, readLoraAdapter(sub, b.config).pairs);
        version = readPolicyFile(sub, id);
      } else {
        model.addAdapter(id, adapter, mixSeed(options.seed, 0x10a, i));
      }
      // `<target>.lora_A|B`: the same in every process
      const trainable = new Map(model.adapterVariables(id).map((v) => [v.name.slice(v.name.lastIndexOf('/') + 1), v]));
      built.policies.push({ id, roles, version, trainable });
    }),
  );
}

/** Per-role full fine-tuning: the base frozen (the KL reference), each policy its own trainable copy. */
function buildPerRoleFull(b: HfBuild): HfBuilt {
  const { options } = b;
  const model = b.load(options.dir, false, options.recompute);
  return guarded({ model, refModel: null, copies: new Map(), policies: [] }, (built) =>
    b.layout.forEach(({ id, roles }) => {
      // The role's own copy: its checkpoint on resume, else a clone of the frozen base (read back from memory, not from disk).
      const sub = options.resumeDir ? b.checkpointOf(id, 'model folder') : null;
      const copy = sub
        ? b.load(sub, true, options.recompute)
        : HfModel.fromSource(b.config, memorySource(model, `the base of policy "${id}" in memory`), {
            trainable: true,
            validVocab: b.validVocab,
            recompute: options.recompute,
            tapeBudgetBytes: options.tapeBudgetBytes,
          });
      built.copies.set(id, copy);
      built.policies.push({ id, roles, version: sub ? readPolicyFile(sub, id) : 0, trainable: copy.params });
    }),
  );
}

/** Shared full fine-tuning: the base itself trained (its own saved weights on resume), a second frozen load as the KL reference. */
function buildSharedFull(b: HfBuild): HfBuilt {
  const { options, layout } = b;
  const resume = options.resumeDir;
  const model = b.load(resume ? b.checkpointOf(layout[0].id, 'checkpoint folder') : options.dir, true, options.recompute);
  return guarded({ model, refModel: null, copies: new Map(), policies: [] }, (built) => {
    built.refModel = options.reference ? b.load(options.dir, false, false) : null;
    for (const { id, roles } of layout) {
      const version = resume ? readPolicyFile(path.join(resume, id), id) : 0;
      built.policies.push({ id, roles, version, trainable: model.params });
    }
  });
}

const HF_TRAINING_MODES = { lora: buildLora, perRoleFull: buildPerRoleFull, sharedFull: buildSharedFull } satisfies Record<
  HfTrainingMode,
  (b: HfBuild) => HfBuilt
>;
