/**
 * Configuration pieces shared by the workflows: how the cardinality K of the parallel set is
 * chosen (fixed, mixed, or by a trainable router) and the invalid-action penalty.
 */
import { z } from 'zod';
import { schemaError } from '../util/schemaError';

const kValue = z.number().int().min(1).max(16);

export const cardinalitySchema = z
  .discriminatedUnion('mode', [
    z
      .object({
        mode: z.literal('fixed').describe('fixed: always K.'),
        k: kValue.describe('fixed: the set size K. 1..16.'),
      })
      .strict(),
    z
      .object({
        mode: z.literal('mixed').describe('mixed: K drawn per set from `ks` (seeded per episode).'),
        ks: z.array(kValue).min(1).describe('mixed: the values K is drawn from, each 1..16.'),
      })
      .strict(),
    z
      .object({
        mode: z.literal('router').describe('router: a router role picks K <= maxK.'),
        maxK: kValue.describe('router: the largest K the router may pick. 1..16.'),
      })
      .strict(),
  ])
  .describe('How K, the size of the parallel set, is chosen: fixed, mixed or router.');
export type Cardinality = z.output<typeof cardinalitySchema>;

export const invalidPenaltySchema = z
  .number()
  .min(0)
  .max(1)
  .describe('Invalid-action penalty subtracted from the event reward per invalid member. [0, 1], default 0.1.')
  .default(0.1);

export function resolveWith<S extends z.ZodType>(what: string, schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input ?? {});
  if (!parsed.success) throw schemaError(what, parsed.error, input);
  return parsed.data;
}
