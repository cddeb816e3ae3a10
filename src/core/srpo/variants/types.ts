/**
 * What a variant of the objective is: a pure function from the batch tensors to
 * `{ loss, metrics }`, plus the two facts the caller needs before calling it (its default
 * advantage grouping, and whether its ratio is per event so the report can show it per event).
 */
import type * as tf from '@tensorflow/tfjs';
import type { Grouping, ObjectiveConfig } from '../config';
import type { ObjectiveInputs } from '../tensors';

export interface VariantOutput {
  /** Scalar to minimise: minus the objective J. */
  loss: tf.Scalar;
  /** Slash-namespaced diagnostics, scalars (read back once by the caller). */
  metrics: Record<string, tf.Scalar>;
  /** Present when the ratio is per event: clamped set log-ratio, ratio and clip flags, [E]. */
  perEvent?: { logRatio: tf.Tensor1D; ratio: tf.Tensor1D; clippedLow: tf.Tensor1D; clippedHigh: tf.Tensor1D };
}

export interface ObjectiveVariant {
  /** One line for the UI and docs. */
  description: string;
  /** Advantage grouping used when `objective.grouping` is null (groupings/index.ts). */
  defaultGrouping: Grouping;
  /** The math. Must be called inside tf.tidy (or tf.variableGrads) by the caller. */
  compute: (x: ObjectiveInputs, config: ObjectiveConfig) => VariantOutput;
}
