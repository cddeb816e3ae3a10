/**
 * The objective's entry points.
 *
 * - `computeObjective(batch, config)`: plain data in, an ObjectiveReport out, computed through
 *   exactly the tfjs code the trainer differentiates (for tools, tests and the CLI).
 * - `objectiveForTraining(prepared, logpCur, config)`: builds the inputs around differentiable
 *   log-probs and returns the variant's `{ loss, metrics }` tensors (inside tf.grad / tf.tidy);
 *   the trainer (train/update.ts) does the same with `buildObjectiveInputs` + `getVariant`
 *   directly, because it reuses the padded mask for its KL term.
 *
 * The device is waited on once per call (`readBack`), outside tf.tidy.
 */
import * as tf from '@tensorflow/tfjs';
import { prepareBatch } from './batch';
import { batchMetrics } from './batchMetrics';
import { resolveObjectiveConfig, type ObjectiveConfig } from './config';
import { buildObjectiveInputs, disposeObjectiveInputs, type ObjectiveTotals } from './tensors';
import type { EventReport, ObjectiveBatch, ObjectiveReport, PreparedBatch } from './types';
import { getVariant, type VariantOutput } from './variants';

/** Validates the config; an unknown algorithm is reported by the registry with the valid names. */
export function objectiveConfig(config: unknown): ObjectiveConfig {
  const algorithm = (config as { algorithm?: unknown } | undefined)?.algorithm;
  if (algorithm !== undefined) getVariant(String(algorithm));
  return resolveObjectiveConfig(config);
}

/** Validates and prepares a plain batch for the configured variant (advantage scope included). */
export function prepareObjectiveBatch(batch: ObjectiveBatch, config: ObjectiveConfig): PreparedBatch {
  return prepareBatch(batch, getVariant(config.algorithm).advantageScope, config);
}

export function objectiveForTraining(
  prepared: PreparedBatch,
  logpCur: tf.Tensor2D,
  config: ObjectiveConfig,
  totals?: ObjectiveTotals,
): VariantOutput {
  const inputs = buildObjectiveInputs(prepared, config, { logpCur, totals });
  try {
    return getVariant(config.algorithm).compute(inputs, config);
  } finally {
    disposeObjectiveInputs(inputs);
  }
}

export async function computeObjective(batch: ObjectiveBatch, config: unknown = {}): Promise<ObjectiveReport> {
  const cfg = objectiveConfig(config);
  const variant = getVariant(cfg.algorithm);
  const prepared = prepareBatch(batch, variant.advantageScope, cfg);
  const metrics = batchMetrics(prepared, variant.advantageScope);
  const report: ObjectiveReport = {
    loss: 0,
    completeEvents: prepared.events.length,
    droppedEvents: prepared.dropped.length,
    events: prepared.events.map((e) => ({ id: e.id, advantage: e.advantage })),
    metrics,
  };
  if (prepared.events.length === 0) return report; // nothing to optimise: loss 0, no ratios

  const inputs = buildObjectiveInputs(prepared, cfg);
  const keys: string[] = [];
  let hasPerEvent = false;
  const packed = tf.tidy(() => {
    const out = variant.compute(inputs, cfg);
    keys.push(...Object.keys(out.metrics));
    const scalars = tf.stack([out.loss, ...keys.map((k) => out.metrics[k])]);
    const parts: tf.Tensor[] = [scalars];
    if (out.perEvent) {
      hasPerEvent = true;
      const p = out.perEvent;
      parts.push(p.logRatio, p.ratio, p.clippedLow, p.clippedHigh);
    }
    return tf.concat(parts);
  });
  disposeObjectiveInputs(inputs);
  const values = await readBack(packed);

  report.loss = values[0] + 0; // -0 -> 0
  if (!Number.isFinite(report.loss)) {
    throw new Error(`objective: the ${cfg.algorithm} loss is not finite (${report.loss}); inputs were validated, so this is a bug`);
  }
  keys.forEach((k, i) => {
    const v = values[1 + i];
    // ratio/min and ratio/max are undefined when no unit counts (every mask 0): leave them out.
    if (Number.isFinite(v)) metrics[k] = v;
    else if (k !== 'ratio/min' && k !== 'ratio/max') throw new Error(`objective: metric ${k} is not finite (${v})`);
  });
  if (hasPerEvent) {
    const e = prepared.events.length;
    const base = 1 + keys.length;
    report.events.forEach((ev: EventReport, i) => {
      ev.logRatio = values[base + i];
      ev.ratio = values[base + e + i];
      ev.clipped = values[base + 2 * e + i] > 0 ? 'low' : values[base + 3 * e + i] > 0 ? 'high' : false;
    });
  }
  return report;
}

async function readBack(t: tf.Tensor): Promise<Float32Array> {
  try {
    return (await t.data()) as Float32Array; // waits for the device
  } finally {
    t.dispose();
  }
}
