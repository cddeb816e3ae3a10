/**
 * The engine-to-push relay (src/core/host/pushRelay.ts): a step message becomes a 'progress' push
 * (its key metrics, NaN as null) and a 'points' push holding every metric point the step wrote,
 * read back with ONE store read for all keys (LabStore.metricsAtStep), not a read per key; an
 * evaluation message gives its points only; a status message reaches the run's state and the
 * subscribers. The batched read is checked against the slow per-key reads it replaced. Also
 * PushHub: a throwing subscriber does not keep the push from the others.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LabService } from '../../../src/core/host/labService';
import type { EngineLaunchRequest } from '../../../src/core/host/launcher';
import type { EngineMessage } from '../../../src/core/host/messages';
import { PushHub, relayEngineMessage, stepPointsPush, type RelayTarget } from '../../../src/core/host/pushRelay';
import { LabStore } from '../../../src/core/store';
import type { LabPush, SeriesPoint } from '../../../src/shared/api';
import { FakeEngine } from './fakeEngine';

const stores: LabStore[] = [];
const services: LabService[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
  for (const s of stores.splice(0)) s.close();
});

/** A run with `loss` at every step, `eval/acc` every third step (NaN at step 3), `rare` at step 4 only; a second run's rows beside it. */
function seeded(store: LabStore): number {
  const run = () => store.createRun({ name: 'r', config: {}, seed: 1, workflow: 'math', algorithm: 'srpo' });
  const runId = run();
  const other = run();
  for (let step = 0; step < 8; step++) {
    const metrics: Record<string, number> = { loss: 1 / (step + 1), 'clip/frac_high': step % 2 };
    if (step % 3 === 0) metrics['eval/acc'] = step === 3 ? NaN : step / 10;
    if (step === 4) metrics.rare = 42;
    store.writeStep(runId, { step, wallTime: 1000 + step, metrics, episodes: [], tokens: false });
    store.writeStep(other, { step, wallTime: 5000 + step, metrics: { loss: -step, 'other/only': step }, episodes: [], tokens: false });
  }
  return runId;
}

/**
 * The reference: the per-key reads the relay used to make (every key, then each key's point at
 * the step), the point's step in steps (updates done): a training key of record s is step s + 1,
 * an evaluation's step s.
 */
function slowPoints(store: LabStore, runId: number, step: number): Record<string, SeriesPoint> {
  const out: Record<string, SeriesPoint> = {};
  for (const k of store.metricKeys(runId)) {
    const p = store.metricSeries(runId, k, { fromStep: step, toStep: step })[0];
    if (p) out[k] = { step: k.startsWith('eval/') ? p.step : p.step + 1, value: Number.isFinite(p.value) ? p.value : null, wallTime: p.wallTime };
  }
  return out;
}

describe('step points: one read for every key', () => {
  it('equals the per-key reads at every step (sparse keys, NaN, another run beside it)', () => {
    const store = LabStore.open(':memory:');
    stores.push(store);
    const runId = seeded(store);
    for (let step = 0; step < 9; step++) expect(stepPointsPush(store, runId, step).points).toEqual(slowPoints(store, runId, step));
    // Not vacuous: the steps differ in their keys, a NaN is null, step 8 has nothing.
    expect(Object.keys(stepPointsPush(store, runId, 4).points).sort()).toEqual(['clip/frac_high', 'loss', 'rare']);
    expect(stepPointsPush(store, runId, 3).points['eval/acc']).toEqual({ step: 3, value: null, wallTime: 1003 });
    expect(stepPointsPush(store, runId, 8).points).toEqual({});
    // Steps are updates done: record 4's training point is update 5; an evaluation stays at its record.
    expect(stepPointsPush(store, runId, 4).points.loss).toEqual({ step: 5, value: 1 / 5, wallTime: 1004 });
    expect(stepPointsPush(store, runId, 6).points['eval/acc'].step).toBe(6);
    // The eval-only final record's training keys belong to no update: left out.
    expect(Object.keys(stepPointsPush(store, runId, 6, true).points)).toEqual(['eval/acc']);
  });

  it('a step message is one metricsAtStep read and no per-key read', () => {
    const store = LabStore.open(':memory:');
    stores.push(store);
    const runId = seeded(store);
    const atStep = vi.spyOn(store, 'metricsAtStep');
    const perKey = vi.spyOn(store, 'metricSeries');
    const keys = vi.spyOn(store, 'metricKeys');
    const pushes: LabPush[] = [];
    const statuses: string[] = [];
    const to: RelayTarget = { store, runId, push: (p) => pushes.push(p), onStatus: (s) => statuses.push(s) };
    const step = (s: number): EngineMessage => ({
      type: 'step',
      step: s,
      final: false,
      totalSteps: 8,
      metrics: { loss: 1 / (s + 1), 'kl/approx': NaN },
      wallMs: 12,
      checkpoint: null,
    });
    for (let s = 0; s < 6; s++) relayEngineMessage(step(s), to);
    expect(atStep).toHaveBeenCalledTimes(6);
    expect(perKey).not.toHaveBeenCalled();
    expect(keys).not.toHaveBeenCalled();
    expect(pushes.map((p) => p.type)).toEqual(Array.from({ length: 6 }, () => ['progress', 'points']).flat());
    expect(pushes[8]).toEqual({ type: 'progress', runId, step: 4, totalSteps: 8, final: false, wallMs: 12, metrics: { loss: 0.2, 'kl/approx': null } });
    expect(pushes[9]).toEqual({ type: 'points', runId, step: 4, points: slowPoints(store, runId, 4) });

    pushes.length = 0;
    relayEngineMessage({ type: 'evaluation', step: 6 }, to);
    expect(pushes).toEqual([{ type: 'points', runId, step: 6, points: slowPoints(store, runId, 6) }]);
    relayEngineMessage({ type: 'status', status: 'paused' }, to);
    expect(statuses).toEqual(['paused']);
    expect(pushes.at(-1)).toEqual({ type: 'status', runId, status: 'paused', error: null });
  });

  it('a failed read gives an empty points push, not a throw (the next fetch catches up)', () => {
    const store = LabStore.open(':memory:');
    stores.push(store);
    const runId = seeded(store);
    vi.spyOn(store, 'metricsAtStep').mockImplementation(() => {
      throw new Error('database is locked');
    });
    expect(stepPointsPush(store, runId, 2)).toEqual({ type: 'points', runId, step: 2, points: {} });
  });
});

describe('through the LabService', () => {
  class TalkingEngine extends FakeEngine {
    say(m: EngineMessage): void {
      this.receive(m);
    }
  }

  it("an engine's step reaches subscribers as progress + points, and pause/resume follow its status", async () => {
    const engines: TalkingEngine[] = [];
    const launcher = {
      launch: (r: EngineLaunchRequest): TalkingEngine => {
        engines.push(new TalkingEngine(r, service));
        return engines[engines.length - 1];
      },
    };
    const service: LabService = new LabService({ dbPath: join(mkdtempSync(join(tmpdir(), 'srpo-relay-')), 'lab.db'), launcher, maxEngines: 1 });
    services.push(service);
    const pushes: LabPush[] = [];
    service.subscribe((p) => pushes.push(p));
    const { runId } = await service.call('createRun', { preset: 'math-quick', config: {}, start: true });
    service.store.writeStep(runId, { step: 0, wallTime: 77, metrics: { 'reward/mean': 0.5, 'loss/total': NaN }, episodes: [], tokens: false });
    const atStep = vi.spyOn(service.store, 'metricsAtStep');
    engines[0].say({ type: 'step', step: 0, final: false, totalSteps: 3, metrics: { 'reward/mean': 0.5 }, wallMs: 5, checkpoint: null });
    expect(atStep).toHaveBeenCalledTimes(1);
    expect(pushes.filter((p) => p.type === 'points')).toEqual([
      {
        type: 'points',
        runId,
        step: 0, // the store record; its points are update 1 (steps are updates done)
        points: { 'reward/mean': { step: 1, value: 0.5, wallTime: 77 }, 'loss/total': { step: 1, value: null, wallTime: 77 } },
      },
    ]);
    // The engine says it paused: resume is accepted (it would be refused as "already running" otherwise).
    engines[0].say({ type: 'status', status: 'paused' });
    await expect(service.call('resumeRun', { runId })).resolves.toEqual({ ok: true });
    await expect(service.call('resumeRun', { runId })).rejects.toThrow(/already running/);
    engines[0].complete(); // else close() waits out its stop timeout
  });
});

describe('PushHub', () => {
  it('a throwing subscriber does not keep the push from the others; a disposed one gets nothing more', () => {
    const hub = new PushHub();
    const got: LabPush[] = [];
    hub.subscribe(() => {
      throw new Error('broken socket');
    });
    const dispose = hub.subscribe((p) => got.push(p));
    hub.push({ type: 'runs' });
    dispose();
    hub.push({ type: 'hello' });
    expect(got).toEqual([{ type: 'runs' }]);
  });
});
