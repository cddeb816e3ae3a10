/**
 * The objective's configuration: one typed, described, validated object (zod), with the
 * defaults of the foundation issue. `resolveObjectiveConfig` is the only way in; it turns a
 * partial, untrusted object into a complete one or throws an error naming the field, the value
 * and what is allowed.
 *
 * Not here: the variants themselves (variants/), the run configuration (src/core/config, later).
 */
import { z } from 'zod';
import { formatSchemaError } from '../util/schemaError';

/** Names of the objective variants; the registry in variants/index.ts has one entry per name. */
export const ALGORITHMS = ['srpo', 'grpo_token', 'grpo_seq', 'gspo', 'drmas'] as const;
export type Algorithm = (typeof ALGORITHMS)[number];

/**
 * How rewards are pooled into advantages (groupings/index.ts): per comparable event (SRPO), per
 * trajectory of one prompt (GRPO) or per (prompt, agent) over every invocation (Dr. MAS).
 */
export const GROUPINGS = ['event', 'trajectory', 'agent'] as const;
export type Grouping = (typeof GROUPINGS)[number];

/** Set normalisation c(K) of SRPO's set log-ratio (SRPO.md, point 1). */
export const SET_NORMS = ['sqrt', 'mean', 'none'] as const;
export type SetNorm = (typeof SET_NORMS)[number];

/** How SRPO averages its per-event surrogates over a mini-batch (SRPO.md, point 4). */
export const REDUCTIONS = ['event', 'token', 'member'] as const;
export type Reduction = (typeof REDUCTIONS)[number];

/** The log-ratio clamp applied before `exp` (verl's value), in nats. Not configurable. */
export const LOG_RATIO_CLAMP = 20;

export const objectiveConfigSchema = z
  .object({
    algorithm: z.enum(ALGORITHMS).describe('Objective variant from the registry: srpo | grpo_token | grpo_seq | gspo | drmas.').default('srpo'),
    // The description sits inside .nullable() so it stays on the enum branch of the JSON schema.
    grouping: z
      .enum(GROUPINGS)
      .describe(
        'Advantage grouping: event (SRPO: comparable events of one prompt), trajectory (GRPO: one outcome per ' +
          'trajectory over the G of one prompt) or agent (Dr. MAS: per prompt and agent, every invocation). ' +
          "null: the algorithm's own (srpo: event; grpo_token, grpo_seq, gspo: trajectory; drmas: agent).",
      )
      .nullable()
      .default(null),
    setNorm: z.enum(SET_NORMS).describe('SRPO only. c(K) = 1/sqrt(K) (SRPO), 1/K (mean ablation) or 1 (sum ablation, "none").').default('sqrt'),
    reduction: z
      .enum(REDUCTIONS)
      .describe(
        'SRPO only. Mini-batch average weighting every event once (event), by its masked token ' +
          "count (token, the paper's diagnostic) or by its K (member).",
      )
      .default('event'),
    lengthNorm: z
      .boolean()
      .describe(
        'SRPO only. Divide each member log-ratio by its length n_{e,j} before the set reduction ' +
          '(beyond the paper: its section 6 reports a length dependence). Default off.',
      )
      .default(false),
    clipLow: z.number().min(0).lt(1).describe('Lower clip range eps_low: ratios below 1 - clipLow stop pulling when A < 0. [0, 1), 0.2 typical.').default(0.2),
    clipHigh: z
      .number()
      .gt(0)
      .max(10)
      .describe(
        'Upper clip range eps_high: ratios above 1 + clipHigh stop pulling when A > 0. (0, 10], 0.2 ' +
          'typical (DAPO uses 0.28; GSPO about 3e-4 on length-normalised ratios).',
      )
      .default(0.2),
    // The description sits inside .nullable() so it stays on the number branch of the JSON schema.
    dualClip: z
      .number()
      .gt(1)
      .describe('Dual clip constant c for negative advantages, max(psi, c * A); null disables it. > 1, verl uses 3.')
      .nullable()
      .default(null),
    advEps: z.number().gt(0).max(1).describe('eps in A = (R - mean) / (std + eps). > 0, default 1e-6.').default(1e-6),
    scaleByStd: z.boolean().describe('Divide centred rewards by the group std (GRPO); false gives R - mean (Dr. GRPO style).').default(true),
    stdFloor: z.number().min(0).max(1).describe('Floor on the group std before dividing (SRPO.md point 5); 0 disables. [0, 1], e.g. 0.05.').default(0),
  })
  .strict();

/** A complete, validated objective configuration. */
export type ObjectiveConfig = z.output<typeof objectiveConfigSchema>;
/** What callers may pass: every field optional. */
export type ObjectiveConfigInput = z.input<typeof objectiveConfigSchema>;

/** Fill defaults and validate; throws `Error("objective config: field ... ")` on bad input. */
export function resolveObjectiveConfig(input: unknown = {}): ObjectiveConfig {
  const parsed = objectiveConfigSchema.safeParse(input ?? {});
  if (!parsed.success) throw new Error(formatSchemaError('objective config', parsed.error, input));
  return parsed.data;
}
