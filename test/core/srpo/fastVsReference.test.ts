/**
 * The tfjs fast path (float32, the code the trainer differentiates) against the float64
 * reference on seeded random batches: K 1..5, lengths 1..64, partial masks, ratios in every clip
 * regime, incomplete events, every variant, grouping and option. The advantages of each grouping
 * are computed by both with separate loops and agree to 1e-12.
 *
 * Tolerance (float32 against float64): |fast - ref| <= 1e-4 * max(1, |ref|) for the loss, the
 * set log-ratios, the ratios and the ratio/KL diagnostics; clip flags and counts exactly.
 */
import { describe, expect, it } from 'vitest';
import {
  ALGORITHMS,
  GROUPINGS,
  REDUCTIONS,
  objectiveConfig,
  prepareObjectiveBatch,
  SET_NORMS,
  computeObjective,
  referenceObjective,
  type ObjectiveConfigInput,
} from '../../../src/core/srpo';
import { randomBatch } from './randomBatch';

const TOL = 1e-4;
function close(fast: number, ref: number, what: string): void {
  expect(Math.abs(fast - ref), `${what}: fast ${fast} vs reference ${ref}`).toBeLessThanOrEqual(TOL * Math.max(1, Math.abs(ref)));
}

const configs: ObjectiveConfigInput[] = [
  ...ALGORITHMS.map((algorithm) => ({ algorithm })),
  ...SET_NORMS.flatMap((setNorm) => REDUCTIONS.map((reduction) => ({ algorithm: 'srpo' as const, setNorm, reduction }))),
  { algorithm: 'srpo', lengthNorm: true },
  { algorithm: 'srpo', dualClip: 3, clipLow: 0.1, clipHigh: 0.28 },
  { algorithm: 'grpo_token', dualClip: 3, scaleByStd: false },
  { algorithm: 'gspo', clipLow: 3e-4, clipHigh: 4e-4 },
  { algorithm: 'drmas', stdFloor: 0.1 },
  // Every grouping with every loss family (ablations), std scaling on and off.
  ...GROUPINGS.flatMap((grouping) => [
    { algorithm: 'srpo' as const, grouping },
    { algorithm: 'grpo_token' as const, grouping, scaleByStd: false },
    { algorithm: 'grpo_seq' as const, grouping },
  ]),
];

describe('fast path equals the float64 reference', () => {
  for (const config of configs) {
    it(`on random batches: ${JSON.stringify(config)}`, async () => {
      for (let seed = 1; seed <= 6; seed++) {
        const batch = randomBatch(seed * 7919, { incomplete: true, scales: [0.001, 0.01, 0.05, 0.3, 2, 40] });
        const fast = await computeObjective(batch, config);
        const ref = referenceObjective(batch, config);
        close(fast.loss, ref.loss, `seed ${seed} loss`);
        expect(fast.events.map((e) => e.id)).toEqual(ref.events.map((e) => e.id));
        fast.events.forEach((e, i) => {
          const r = ref.events[i];
          close(e.advantage, r.advantage, `seed ${seed} event ${e.id} advantage`); // both float64, separate loops
          expect(e.clipped).toBe(r.clipped);
          if (r.logRatio !== undefined) {
            close(e.logRatio!, r.logRatio, `seed ${seed} event ${e.id} logRatio`);
            close(e.ratio!, r.ratio!, `seed ${seed} event ${e.id} ratio`);
          }
        });
        const members = prepareObjectiveBatch(batch, objectiveConfig(config)).members.map((m) => m.advantage);
        expect(members.length).toBe(ref.memberAdvantages.length);
        members.forEach((a, j) => expect(Math.abs(a - ref.memberAdvantages[j]), `seed ${seed} member ${j}`).toBeLessThan(1e-12));
        for (const k of ['clip/frac_low', 'clip/frac_high', 'clip/frac', 'ratio/clamped', 'clip/frac_dual']) {
          if (k in ref.metrics) expect(fast.metrics[k], k).toBeCloseTo(ref.metrics[k], 6);
        }
        for (const k of ['ratio/mean', 'ratio/min', 'ratio/max', 'ratio/log_abs_mean', 'kl/approx']) {
          close(fast.metrics[k], ref.metrics[k], `seed ${seed} ${k}`);
        }
      }
    });
  }

  it('exercises every regime across those seeds (low, high, clamp, dropped)', async () => {
    let low = 0;
    let high = 0;
    let clamped = 0;
    let dropped = 0;
    for (let seed = 1; seed <= 6; seed++) {
      const batch = randomBatch(seed * 7919, { incomplete: true, scales: [0.001, 0.01, 0.05, 0.3, 2, 40] });
      const r = await computeObjective(batch, {});
      low += r.events.filter((e) => e.clipped === 'low').length;
      high += r.events.filter((e) => e.clipped === 'high').length;
      clamped += r.metrics['ratio/clamped'];
      dropped += r.droppedEvents;
    }
    expect(low).toBeGreaterThan(0);
    expect(high).toBeGreaterThan(0);
    expect(clamped).toBeGreaterThan(0);
    expect(dropped).toBeGreaterThan(0);
  });

  it('returns loss 0 and no ratios for a batch whose every event is incomplete', async () => {
    const batch = randomBatch(5, { events: 3 });
    batch.members = [];
    const r = await computeObjective(batch);
    expect(r).toMatchObject({ loss: 0, completeEvents: 0, droppedEvents: 3 });
    expect(r.metrics['events/dropped']).toBe(3);
  });
});
