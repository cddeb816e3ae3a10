/**
 * Configuration pieces shared by the workflows: how the cardinality K of the parallel set is
 * chosen (fixed, mixed, or by a trainable router) and the invalid-action penalty.
 */
import { z } from 'zod';
import { formatSchemaError } from '../util/schemaError';

const kValue = z.number().int().min(1).max(16);

/** fixed: always K; mixed: K drawn per set from `ks` (seeded per episode); router: a router role picks K <= maxK. */
export const cardinalitySchema = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('fixed'), k: kValue }).strict(),
  z.object({ mode: z.literal('mixed'), ks: z.array(kValue).min(1) }).strict(),
  z.object({ mode: z.literal('router'), maxK: kValue }).strict(),
]);
export type Cardinality = z.output<typeof cardinalitySchema>;

/** Invalid-action penalty subtracted from the event reward per invalid member. [0, 1], default 0.1. */
export const invalidPenaltySchema = z.number().min(0).max(1).default(0.1);

export function resolveWith<S extends z.ZodType>(what: string, schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input ?? {});
  if (!parsed.success) throw new Error(formatSchemaError(what, parsed.error, input));
  return parsed.data;
}
