/**
 * The SRPO objective library: public surface. See docs/ARCHITECTURE.md, "The objective library"
 * (the formulas and the decisions) for what each piece computes.
 */
export { computeObjective, groupingOf, objectiveConfig, objectiveForTraining, prepareObjectiveBatch } from './objective';
export { batchMetrics } from './batchMetrics';
export { referenceObjective, type ReferenceReport } from './reference';
export { ALGORITHMS, GROUPINGS, REDUCTIONS, SET_NORMS, LOG_RATIO_CLAMP, resolveObjectiveConfig, objectiveConfigSchema } from './config';
export type { Algorithm, Grouping, ObjectiveConfig, ObjectiveConfigInput, Reduction, SetNorm } from './config';
export { VARIANTS, getVariant } from './variants';
export type { ObjectiveVariant, VariantOutput } from './variants';
export { groupAdvantages, pooledAdvantages, sampleStd, type AdvantageOptions } from './advantages';
export { GROUPING_REGISTRY, getGrouping, type AdvantageGrouping } from './groupings';
export { buildObjectiveInputs, disposeObjectiveInputs, objectiveTotals } from './tensors';
export { SURROGATE_METRIC_COMBINE, type MetricCombine } from './surrogate';
export type { ObjectiveInputs, ObjectiveTotals } from './tensors';
export type * from './types';
