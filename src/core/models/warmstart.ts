/**
 * Warm start: supervised fine-tuning of a policy set on demonstrations, cross-entropy on
 * completion tokens only (prompt tokens are context, not targets), Adam, reporting loss and
 * token accuracy per epoch and policy. Demonstrations are JSONL lines `{ role, prompt,
 * completion }`; a bad line is an Error naming file and line.
 *
 * Prompt layout: `<bos>` [`<role>` when the set is shared] prompt text; completion: text `<eos>`.
 * A shared set trains its one model on every row; a per-role set trains each role's model on
 * that role's rows only. Not here: RL updates (the SRPO trainer), checkpoints (checkpoint.ts).
 * Tests: test/core/models/warmstart.test.ts (parsing errors; tiny-run smoke test: loss finite
 * and falling, every parameter moved, no tensor leaked).
 */
import * as fs from 'node:fs';
import * as tf from '@tensorflow/tfjs';
import { z } from 'zod';
import { parseJsonl } from '../data/jsonl';
import { scoreCompletions, type ScoredPair } from './logprobs';
import type { PolicySet } from './policySet';
import { mixSeed, mulberry32, permutation } from './random';
import { ROLES, type CharTokenizer, type Role } from './tokenizer';
import type { Transformer } from './transformer';

export interface Demonstration {
  role: Role;
  prompt: string;
  completion: string;
}

const demonstrationSchema = z.object({ role: z.enum(ROLES), prompt: z.string(), completion: z.string().min(1) }).strict();

/** Parses JSONL text (data/jsonl.ts: blank lines skipped); `file` names the source in errors (`file:line: ...`). */
export function parseDemonstrations(text: string, file: string): Demonstration[] {
  return parseJsonl(text, file).map(({ raw, line }) => {
    const parsed = demonstrationSchema.safeParse(raw);
    if (!parsed.success) {
      const why = parsed.error.issues.map((is) => `${is.path.join('.') || '(line)'}: ${is.message}`).join('; ');
      throw new Error(`${file}:${line}: not a demonstration { role, prompt, completion } (${why})`);
    }
    return parsed.data;
  });
}

/** Reads a JSONL file of demonstrations (Node). */
export function loadDemonstrations(file: string): Demonstration[] {
  return parseDemonstrations(fs.readFileSync(file, 'utf8'), file);
}

/** Token ids of a demonstration for a set whose prompts do or do not carry the role marker. */
export function encodeDemonstration(tok: CharTokenizer, d: Demonstration, roleMarker: boolean): ScoredPair {
  return {
    prompt: [tok.bosId, ...(roleMarker ? [tok.roleId(d.role)] : []), ...tok.encode(d.prompt)],
    completion: [...tok.encode(d.completion), tok.eosId],
  };
}

export interface WarmStartOptions {
  epochs: number;
  /** Rows per Adam step. */
  batchSize: number;
  /** Adam learning rate, e.g. 1e-3 for tiny models. */
  learningRate: number;
  /** Shuffling seed. */
  seed: number;
  /** Called after each epoch of each policy. */
  onEpoch?: (report: EpochReport) => void;
}

export interface EpochReport {
  policyId: string;
  epoch: number;
  /** Mean cross-entropy per completion token, nats. */
  loss: number;
  /** Fraction of completion tokens that are the model's argmax. */
  accuracy: number;
  tokens: number;
}

/**
 * Trains every policy of the set on its rows; bumps each trained policy's version once per
 * epoch. Rows longer than the context are an error naming the row. Returns the epoch reports.
 */
export function warmStart(set: PolicySet, tok: CharTokenizer, demos: readonly Demonstration[], options: WarmStartOptions): EpochReport[] {
  const reports: EpochReport[] = [];
  for (const policy of set.policies()) {
    const rows = demos.filter((d) => policy.roles.includes(d.role));
    if (rows.length === 0) continue;
    const pairs = rows.map((d) => encodeDemonstration(tok, d, set.roleMarkerInPrompt));
    const ctx = policy.model.config.contextLength;
    pairs.forEach((p, i) => {
      if (p.prompt.length + p.completion.length - 1 > ctx)
        throw new Error(`warm start: row ${i} of role ${rows[i].role} needs ${p.prompt.length + p.completion.length - 1} positions, contextLength is ${ctx}`);
    });
    const optimizer = tf.train.adam(options.learningRate);
    const vars = policy.model.variables();
    try {
      for (let epoch = 0; epoch < options.epochs; epoch++) {
        const order = permutation(pairs.length, mulberry32(mixSeed(options.seed, epoch)));
        let lossSum = 0;
        let correct = 0;
        let tokens = 0;
        for (const batch of contextBatches(
          order.map((i) => pairs[i]),
          options.batchSize,
          ctx,
        )) {
          const r = trainStep(policy.model, batch, optimizer, vars);
          lossSum += r.lossSum;
          correct += r.correct;
          tokens += r.tokens;
        }
        policy.version++;
        const report = { policyId: policy.id, epoch, loss: lossSum / Math.max(1, tokens), accuracy: correct / Math.max(1, tokens), tokens };
        reports.push(report);
        options.onEpoch?.(report);
      }
    } finally {
      optimizer.dispose();
    }
  }
  return reports;
}

/**
 * Consecutive batches of at most `size` rows whose padded length fits the context: the scorer
 * lays every row out as (longest prompt) + (longest completion) - 1 columns, so two rows that
 * each fit may not fit together; such a row starts the next batch.
 */
export function contextBatches(pairs: readonly ScoredPair[], size: number, contextLength: number): ScoredPair[][] {
  const out: ScoredPair[][] = [];
  let cur: ScoredPair[] = [];
  let maxPrompt = 0;
  let maxCompletion = 0;
  for (const p of pairs) {
    const mp = Math.max(maxPrompt, p.prompt.length);
    const mc = Math.max(maxCompletion, p.completion.length);
    if (cur.length > 0 && (cur.length >= size || mp + mc - 1 > contextLength)) {
      out.push(cur);
      cur = [];
      maxPrompt = 0;
      maxCompletion = 0;
    }
    cur.push(p);
    maxPrompt = Math.max(maxPrompt, p.prompt.length);
    maxCompletion = Math.max(maxCompletion, p.completion.length);
  }
  if (cur.length) out.push(cur);
  return out;
}

/**
 * One Adam step on a batch: mean cross-entropy over its completion tokens. One read-back (loss
 * sum, correct and token counts). Exported for the training-step benchmarks and leak tests.
 */
export function trainStep(
  model: Transformer,
  batch: readonly ScoredPair[],
  optimizer: tf.Optimizer,
  vars: tf.Variable[] = model.variables(),
): { lossSum: number; correct: number; tokens: number } {
  let stats: tf.Tensor1D | null = null;
  const { value, grads } = tf.variableGrads(() => {
    const s = scoreCompletions(model, batch);
    const tokens = tf.maximum(tf.sum(s.mask), 1);
    const nll = tf.neg(tf.sum(s.logp)); // nats
    stats = tf.keep(tf.stack([nll, tf.sum(s.correct), tf.sum(s.mask)]) as tf.Tensor1D);
    return tf.div(nll, tokens) as tf.Scalar;
  }, vars);
  optimizer.applyGradients(grads);
  const out = (stats as unknown as tf.Tensor1D).dataSync(); // waits for the device
  tf.dispose([value, stats as unknown as tf.Tensor, ...Object.values(grads)]);
  return { lossSum: out[0], correct: out[1], tokens: out[2] };
}
