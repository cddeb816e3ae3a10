/**
 * The policy abstraction the training step runs on, whatever the model: the trainer, the rollout
 * orchestrator, stepData, update and evaluate talk to a `Policies` object (sample, score, the
 * trainable variables, versions, prompt encoding, checkpoints) and never to a model class. One
 * implementation today (registry.ts): a Hugging Face decoder with LoRA adapters or full
 * fine-tuning (hf.ts), which also runs the lab's own small models (models/hf/labFolder.ts); the interface
 * stays so that the training step never depends on how weights are kept.
 *
 * What a policy is stays as SRPO.md defines it: an id ('shared' or a role), the roles it plays
 * and a version bumped after every update of its weights. How its weights exist is the
 * implementation's business (hf.ts: one adapter per policy over ONE frozen base in memory, or one
 * copy per policy; the KL reference is the base with adapters off, or a frozen copy).
 *
 * Not here: the optimizer (train/optimizer.ts; keyed by `trainable()`'s names), the objective.
 * Tests: test/core/train/hfPolicies.test.ts, test/engine/hfRun.test.ts, and every trainer test.
 */
import type * as tf from '@tensorflow/tfjs';
import type { PolicySetKind } from '../models/sharing';
import type { Role } from '../models/vocab';
import type { InstructionName } from '../workflows/prompts';

/** Model kinds the trainer can run on (registry.ts); a run checkpoint records its kind. */
export const POLICY_MODEL_KINDS = ['hf'] as const;
export type PolicyModelKind = (typeof POLICY_MODEL_KINDS)[number];

/** One policy of a set: what rollouts record and the trainer bumps. */
export interface PolicyRef {
  /** 'shared', or the role name for per-role sets. */
  readonly id: string;
  /** Roles this policy plays. */
  readonly roles: readonly Role[];
  /** Incremented after every update of its weights; 0 at creation. */
  version: number;
}

/** Per generated token, its alternatives as pairs (the samplers give them as parallel arrays). */
export function topPairs(top: readonly { ids: number[]; logp: number[] }[]): { id: number; logp: number }[][] {
  return top.map((t) => t.ids.map((id, j) => ({ id, logp: t.logp[j] })));
}

/** A teacher-forced row: the ids the policy read and the ids it generated. */
export interface CompletionRow {
  prompt: number[];
  completion: number[];
}

/** One sampled completion: generated ids (stop id included), behaviour log-probs (nats). */
export interface SampledCompletion {
  ids: number[];
  logp: number[];
  stopReason: string;
  /**
   * With SampleSettings.topLogprobs > 0: per generated id, the most probable real ids of the same
   * un-tempered log-softmax as `logp`, descending (the endpoint's top_logprobs; never recorded).
   */
  top?: { id: number; logp: number }[][];
}

/** What the sampler produced for one member, beside the workflow's record of it (the rollout orchestrator's and the external endpoint's). */
export interface SampledMember {
  policyId: string;
  policyVersion: number;
  /** Token ids the policy read (after any truncation). */
  promptTokens: number[];
  /** Generated token ids (end token included when sampled). */
  outputTokens: number[];
  /** Behaviour log-prob of each generated token (nats). */
  logp: number[];
  stopReason: string;
}

export interface SampleSettings {
  maxNewTokens: number;
  temperature: number;
  topP: number;
  seed: number;
  decode?: 'kv' | 'full';
  /** List this many most probable alternatives per generated token in `SampledCompletion.top`; 0 or absent: none. */
  topLogprobs?: number;
}

/** What a member asks the policy for (workflows/types.ts MemberRequest, the fields a prompt needs). */
export interface PromptRequest {
  role: Role;
  instruction: InstructionName;
  /** The state the role sees, ending with its short instruction (workflows/prompts.ts). */
  prompt: string;
}

/**
 * The training-only randomness of one gradient pass (LoRA dropout, models/hf/loraDropout.ts),
 * given by the update alone: a seed from (run seed, step, epoch) and one key per scored row (the
 * member it is), so a row draws the same noise however the mini-batch is split (train/update.ts).
 */
export interface TrainingNoise {
  seed: number;
  rowKeys: readonly number[];
}

/** Which weights score: the policy as it is now, or the KL reference (the run's frozen start). */
export type ScoreWith = 'current' | 'reference';

export interface Policies {
  readonly modelKind: PolicyModelKind;
  readonly sharing: PolicySetKind;
  /** Id written in padding columns. */
  readonly padId: number;
  ids(): string[];
  policies(): PolicyRef[];
  get(policyId: string): PolicyRef;
  /** The policy that plays a role. */
  policyFor(role: Role): PolicyRef;
  /** After an update of a policy's weights; returns the new version. */
  bumpVersion(policyId: string): number;
  /** Token ids a member's prompt becomes for the policy that plays its role (what is recorded and scored). */
  promptIds(policyId: string, request: PromptRequest, maxNewTokens: number): number[];
  /** One batched sampling call with one policy. */
  sample(policyId: string, prompts: number[][], settings: SampleSettings): SampledCompletion[];
  /** Generated ids as text for the workflow's parsers (special tokens dropped). */
  decode(ids: readonly number[]): string;
  /**
   * Current log-probs [B, T] (T >= minCompletionLength, 0 past each row's end), differentiable:
   * called under the update's gradient tape. The caller owns the tensor. `noise`: the update's
   * training-time randomness (dropout); without it the forward is the deterministic one.
   */
  score(policyId: string, rows: readonly CompletionRow[], minCompletionLength: number, noise?: TrainingNoise): tf.Tensor2D;
  /**
   * What a gradient pass of `score` with this policy may keep for its backward: the tape budget
   * (bytes, `update.tapeBudgetMB` or the backend's default; 0: unbounded) and the estimated tape
   * of a pass over `rows` rows of `seqLen` tokens (prompt + completion). The update packs its
   * micro-batches to fit (train/update.ts); a pass over the budget still runs, in row blocks.
   */
  gradientTape(policyId: string): GradientTape;
  /** Plain log-probs and entropies (nats), no tape; 'reference' needs `hasReference`. */
  scoreData(policyId: string, rows: readonly CompletionRow[], which: ScoreWith): { logp: number[][]; entropy: number[][] };
  /** Whether a KL reference exists (it is built only when the run's KL coefficient is > 0). */
  readonly hasReference: boolean;
  /** A policy's trainable variables, keyed by names that are the same in every process (optimizer state keys). */
  trainable(policyId: string): ReadonlyMap<string, tf.Variable>;
  /** Writes one policy's weights into `dir` (created) in this kind's checkpoint format; reads back from the device. */
  savePolicy(policyId: string, dir: string): void;
  /** Numbers for the step's metrics (e.g. backend memory), slash-namespaced. */
  metrics?(): Record<string, number>;
  /** One line saying what model the run trains (the engine logs it: the shape the folder decided). */
  describe(): string;
  dispose(): void;
}

/** A policy's tape budget and the estimate a gradient pass is compared with (`Policies.gradientTape`). */
export interface GradientTape {
  /** Bytes one gradient pass may keep for its backward; 0: unbounded. */
  budgetBytes: number;
  /**
   * Estimated tape bytes of a pass over `rows` rows of `seqLen` tokens, as the scorer would run it
   * in one block (with per-layer recomputation where not one row fits without).
   */
  passBytes(rows: number, seqLen: number): number;
}

/** Rows of a batch in chunks of at most `size` (bounded memory when scoring without a tape). */
export function chunks<T>(rows: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}
