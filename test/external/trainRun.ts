/**
 * Shared by the external example-program tests (mathTeam*.test.ts): a run of a resolved config in
 * an in-memory store, trained step by step to its end through the real Trainer, its log kept;
 * everything opened is closed after each test (`useClosers`).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { RunConfig } from '../../src/core/config';
import { LabStore } from '../../src/core/store';
import { Trainer, type StepSummary } from '../../src/core/train/trainer';

/** Closers registered during a test, run in reverse order after it. */
export function useClosers(): (() => void)[] {
  const closers: (() => void)[] = [];
  afterEach(() =>
    closers
      .splice(0)
      .reverse()
      .forEach((c) => c()),
  );
  return closers;
}

export interface TrainedRun {
  store: LabStore;
  runId: number;
  steps: StepSummary[];
  /** The run's log (the program's output among it). */
  logs: string[];
}

/** Creates run `name` (preset external-math-quick, workflow external) and runs every remaining step. */
export async function trainExternalRun(name: string, config: RunConfig, closers: (() => void)[]): Promise<TrainedRun> {
  const store = LabStore.open(':memory:');
  closers.push(() => store.close());
  const runId = store.createRun({ name, preset: 'external-math-quick', config, seed: config.seed, workflow: 'external', algorithm: 'srpo' });
  const logs: string[] = [];
  const t = new Trainer({ config, runDir: mkdtempSync(join(tmpdir(), `srpo-ext-${name}-`)), store, runId, baseDir: process.cwd(), onLog: (l) => logs.push(l) });
  closers.push(() => t.dispose());
  const steps: StepSummary[] = [];
  for (const s of t.remainingSteps()) steps.push(await t.step(s));
  return { store, runId, steps, logs };
}
