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
 * The device is waited on once per call (`readBack`), outside tf.tidy; the outputs travel packed
 * in one tensor (readBack.ts, shared with the trainer).
 */
import * as tf from '@tensorflow/tfjs';
import { prepareBatch } from './batch';
import { batchMetrics } from './batchMetrics';
import { resolveObjectiveConfig, type Grouping, type ObjectiveConfig } from './config';
import { buildObjectiveInputs, disposeObjectiveInputs, type ObjectiveTotals } from './tensors';
import type { EventReport, ObjectiveBatch, ObjectiveReport, PreparedBatch } from './types';
import { packOutputs, unpackOutputs, type PackLayout } from './readBack';
import { getVariant, type VariantOutput } from './variants';

/** Validates the config; an unknown algorithm is reported by the registry with the valid names. */
export function objectiveConfig(config: unknown): ObjectiveConfig {
  const algorithm = (config as { algorithm?: unknown } | undefined)?.algorithm;
  if (algorithm !== undefined) getVariant(String(algorithm));
  return resolveObjectiveConfig(config);
}

/** The advantage grouping a config uses: its own, or its algorithm's default. */
export function groupingOf(config: Pick<ObjectiveConfig, 'algorithm' | 'grouping'>): Grouping {
  return config.grouping ?? getVariant(config.algorithm).defaultGrouping;
}

/** Validates and prepares a plain batch for the configured variant and grouping. */
export function prepareObjectiveBatch(batch: ObjectiveBatch, config: ObjectiveConfig): PreparedBatch {
  return prepareBatch(batch, groupingOf(config), config);
}

export function objectiveForTraining(prepared: PreparedBatch, logpCur: tf.Tensor2D, config: ObjectiveConfig, totals?: ObjectiveTotals): VariantOutput {
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
  const prepared = prepareBatch(batch, groupingOf(cfg), cfg);
  const metrics = batchMetrics(prepared);
  const report: ObjectiveReport = {
    loss: 0,
    grouping: prepared.grouping,
    completeEvents: prepared.events.length,
    droppedEvents: prepared.dropped.length,
    events: prepared.events.map((e) => ({ id: e.id, advantage: e.advantage })),
    metrics,
  };
  if (prepared.events.length === 0) return report; // nothing to optimise: loss 0, no ratios

  const inputs = buildObjectiveInputs(prepared, cfg);
  let layout = {} as PackLayout; // set inside the tidy
  const packed = tf.tidy(() => {
    const out = variant.compute(inputs, cfg);
    const p = packOutputs({ 'loss/policy': out.loss, ...out.metrics }, out.perEvent);
    layout = p.layout;
    return p.packed;
  });
  disposeObjectiveInputs(inputs);
  const { scalars, events } = unpackOutputs(await readBack(packed), layout);

  const { 'loss/policy': loss, ...rest } = scalars;
  report.loss = loss + 0; // -0 -> 0
  if (!Number.isFinite(report.loss)) {
    throw new Error(`objective: the ${cfg.algorithm} loss is not finite (${report.loss}); inputs were validated, so this is a bug`);
  }
  for (const [k, v] of Object.entries(rest)) {
    // ratio/min and ratio/max are undefined when no unit counts (every mask 0): leave them out.
    if (Number.isFinite(v)) metrics[k] = v;
    else if (k !== 'ratio/min' && k !== 'ratio/max') throw new Error(`objective: metric ${k} is not finite (${v})`);
  }
  events?.forEach((o, i) => {
    const ev: EventReport = report.events[i];
    ev.logRatio = o.logRatio;
    ev.ratio = o.ratio;
    ev.clipped = o.clipped ?? false;
  });
  return report;
}

async function readBack(t: tf.Tensor): Promise<Float32Array> {
  try {
    return (await t.data()) as Float32Array; // waits for the device
  } finally {
    t.dispose();
  }
}
