/**
 * The lab's own models as `Policies` (types.ts): a PolicySet of character-level Transformers
 * (models/policySet.ts), the CharTokenizer, and, with a KL penalty, a second frozen PolicySet as
 * the reference. Prompts are `<bos>`, the role marker when the set is shared, then the prompt
 * text, cut to the context (head kept, most recent tail); sampling, scoring and checkpoints are
 * the lab's own (models/sampler.ts, models/logprobs.ts, models/checkpoint.ts). Behaviour is
 * exactly what the trainer did before model kinds existed.
 *
 * Not here: building the sets from a run config (train/checkpoints.ts `initialPolicies`).
 * Tests: test/core/train/trainer.test.ts, test/core/rollout/orchestrator.test.ts, test/engine/*.
 */
import type * as tf from '@tensorflow/tfjs';
import { saveCheckpoint } from '../models/checkpoint';
import { scoreCompletions, scoreCompletionsData } from '../models/logprobs';
import type { PolicySet, Policy } from '../models/policySet';
import { sample } from '../models/sampler';
import type { CharTokenizer, Role } from '../models/tokenizer';
import { chunks, type CompletionRow, type Policies, type PromptRequest, type SampleSettings, type SampledCompletion, type ScoreWith, topPairs } from './types';

/** Rows scored at once without a tape (bounded memory). */
const SCORE_CHUNK = 64;

/** Token ids of a member prompt, cut to fit `budget` tokens: `<bos>`, the optional role marker, the most recent tail of the text. */
export function encodePrompt(tok: CharTokenizer, text: string, role: Role, marker: boolean, budget: number): number[] {
  const head = [tok.bosId, ...(marker ? [tok.roleId(role)] : [])];
  const body = tok.encode(text, { special: false });
  const room = Math.max(0, budget - head.length);
  return [...head, ...body.slice(Math.max(0, body.length - room))];
}

export class LabPolicies implements Policies {
  readonly modelKind = 'lab' as const;
  readonly sharing: PolicySet['kind'];
  readonly padId: number;

  constructor(
    readonly set: PolicySet,
    readonly tokenizer: CharTokenizer,
    private readonly reference: PolicySet | null = null,
  ) {
    this.sharing = set.kind;
    this.padId = tokenizer.padId;
  }

  get hasReference(): boolean {
    return this.reference !== null;
  }

  ids(): string[] {
    return this.set.ids();
  }

  policies(): Policy[] {
    return this.set.policies();
  }

  get(policyId: string): Policy {
    return this.set.get(policyId);
  }

  policyFor(role: Role): Policy {
    return this.set.policyFor(role);
  }

  bumpVersion(policyId: string): number {
    return this.set.bumpVersion(policyId);
  }

  promptIds(policyId: string, request: PromptRequest, maxNewTokens: number): number[] {
    const budget = this.set.get(policyId).model.config.contextLength - maxNewTokens;
    return encodePrompt(this.tokenizer, request.prompt, request.role, this.set.roleMarkerInPrompt, budget);
  }

  sample(policyId: string, prompts: number[][], s: SampleSettings): SampledCompletion[] {
    const rows = sample(this.set.get(policyId).model, prompts, {
      maxNewTokens: s.maxNewTokens,
      temperature: s.temperature,
      topP: s.topP,
      tokenizer: this.tokenizer,
      seed: s.seed,
      padId: this.padId,
      decode: s.decode,
      topLogprobs: s.topLogprobs,
    });
    return rows.map((row) => ({
      ids: row.tokens.slice(0, row.length),
      logp: row.logp.slice(0, row.length),
      stopReason: row.stopReason,
      ...(row.top ? { top: topPairs(row.top) } : {}),
    }));
  }

  decode(ids: readonly number[]): string {
    return this.tokenizer.decode([...ids], { skipSpecial: true });
  }

  score(policyId: string, rows: readonly CompletionRow[], minCompletionLength: number): tf.Tensor2D {
    const s = scoreCompletions(this.set.get(policyId).model, rows, { padId: this.padId, minCompletionLength });
    s.entropy.dispose();
    s.mask.dispose();
    return s.logp; // [B, T] nats
  }

  scoreData(policyId: string, rows: readonly CompletionRow[], which: ScoreWith): { logp: number[][]; entropy: number[][] } {
    const set = which === 'current' ? this.set : this.reference;
    if (!set) throw new Error('LabPolicies.scoreData: no KL reference (the run has kl.coef = 0)');
    const model = set.get(policyId).model;
    const logp: number[][] = [];
    const entropy: number[][] = [];
    for (const part of chunks(rows, SCORE_CHUNK)) {
      const s = scoreCompletionsData(model, part, { padId: this.padId });
      part.forEach((r, j) => {
        logp.push(s.logp[j].slice(0, r.completion.length));
        entropy.push(s.entropy[j].slice(0, r.completion.length));
      });
    }
    return { logp, entropy };
  }

  describe(): string {
    const c = this.set.policies()[0].model.config;
    return `the lab's own model: d${c.dModel} x ${c.nLayers} layers, ${c.nHeads} heads, context ${c.contextLength}; ${this.set.ids().length} policy(ies) (${this.sharing})`;
  }

  trainable(policyId: string): ReadonlyMap<string, tf.Variable> {
    return this.set.get(policyId).model.params;
  }

  savePolicy(policyId: string, dir: string): void {
    const p = this.set.get(policyId);
    saveCheckpoint(dir, p.model, this.tokenizer, { policyId: p.id, version: String(p.version) });
  }

  dispose(): void {
    this.set.dispose();
    this.reference?.dispose();
  }
}
