/**
 * One device read-back for an objective's outputs: named scalars (loss, metrics), the per-event
 * tensors of a per-event variant (log-ratio, ratio, clipped low/high, each [E]) and any further
 * flat tensors the caller wants back (the trainer's current log-probs), packed into one 1-D
 * tensor, and the read values unpacked by the same layout. Used by `computeObjective`
 * (objective.ts) and the trainer's micro-batch step (train/update.ts), so the offset arithmetic
 * lives once.
 *
 * Not here: the waiting itself (callers use dataSync or data, where they are allowed to block).
 * Tested through test/core/srpo/*.test.ts (computeObjective) and test/core/train/update.test.ts.
 */
import * as tf from '@tensorflow/tfjs';
import type { VariantOutput } from './variants';

/** One event's set log-ratio, ratio and clip state, as read back. */
export interface EventOutcome {
  logRatio: number;
  ratio: number;
  clipped: 'low' | 'high' | null;
}

/** Where each part sits in the packed vector. */
export interface PackLayout {
  keys: string[];
  /** Events of the per-event part; null when the variant has none. */
  events: number | null;
  /** Length of each extra tensor, in order. */
  extras: number[];
}

export interface Unpacked {
  scalars: Record<string, number>;
  events: EventOutcome[] | null;
  extras: Float32Array[];
}

/** Packs `scalars` (in key order), the per-event tensors and `extras` (flattened) into one [N] tensor. Call inside tf.tidy or variableGrads. */
export function packOutputs(
  scalars: Record<string, tf.Scalar>,
  perEvent: VariantOutput['perEvent'],
  extras: readonly tf.Tensor[] = [],
): { packed: tf.Tensor1D; layout: PackLayout } {
  const keys = Object.keys(scalars);
  const parts: tf.Tensor[] = [tf.stack(keys.map((k) => scalars[k]))]; // [S]
  if (perEvent) parts.push(perEvent.logRatio, perEvent.ratio, perEvent.clippedLow, perEvent.clippedHigh); // 4 x [E]
  for (const x of extras) parts.push(tf.reshape(x, [x.size]));
  const layout: PackLayout = { keys, events: perEvent ? perEvent.logRatio.shape[0] : null, extras: extras.map((x) => x.size) };
  return { packed: tf.concat(parts) as tf.Tensor1D, layout };
}

/** The values of a packed vector (from `packOutputs` with `layout`), by part. */
export function unpackOutputs(values: Float32Array, layout: PackLayout): Unpacked {
  const expected = layout.keys.length + 4 * (layout.events ?? 0) + layout.extras.reduce((a, n) => a + n, 0);
  if (values.length !== expected) throw new Error(`unpackOutputs: read ${values.length} values, the layout holds ${expected}`);
  const scalars: Record<string, number> = {};
  layout.keys.forEach((k, i) => (scalars[k] = values[i]));
  let at = layout.keys.length;
  let events: EventOutcome[] | null = null;
  if (layout.events !== null) {
    const E = layout.events;
    events = [];
    for (let e = 0; e < E; e++) {
      const clipped = values[at + 2 * E + e] > 0 ? 'low' : values[at + 3 * E + e] > 0 ? 'high' : null;
      events.push({ logRatio: values[at + e], ratio: values[at + E + e], clipped });
    }
    at += 4 * E;
  }
  const extras = layout.extras.map((n) => {
    const part = values.subarray(at, at + n);
    at += n;
    return part;
  });
  return { scalars, events, extras };
}
