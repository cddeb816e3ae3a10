/**
 * Crash survival: a child process writes big steps in a loop and is killed with SIGKILL mid-run.
 * Reopening shows every step it reported committed, each complete, nothing of the step it was
 * writing, and an intact database. Done twice on the same file (the second writer starts on the
 * recovered database). The child is fixtures/crashWriter.ts, run with `node --import tsx`.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LabStore } from '../../../src/core/store';
import { CRASH_SHAPE, makeStep, stepCounts } from './fixtures/makeStep';
import { integrity, rowCounts, tempDbPath } from './helpers';

const WRITER = join(__dirname, 'fixtures', 'crashWriter.ts');

/** Starts the writer, waits until it reported `minSteps` commits plus a random delay, kills it. */
function writeThenKill(path: string, minSteps: number): Promise<{ runId: number; lastReported: number; signal: string | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WRITER, path], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let killing = false;
    child.stderr.on('data', (d: Buffer) => (err += d));
    child.stdout.on('data', (d: Buffer) => {
      out += d;
      const committed = [...out.matchAll(/committed (\d+)/g)];
      if (!killing && committed.length >= minSteps) {
        killing = true;
        setTimeout(() => child.kill('SIGKILL'), Math.random() * 30);
      }
    });
    child.on('error', reject);
    child.on('exit', (_code, signal) => {
      if (!killing) return reject(new Error(`writer exited before being killed: ${err}`));
      const run = /run (\d+)/.exec(out);
      const committed = [...out.matchAll(/committed (\d+)/g)].map((m) => Number(m[1]));
      resolve({ runId: Number(run![1]), lastReported: Math.max(...committed), signal });
    });
  });
}

function expectCompleteSteps(s: LabStore, runId: number, lastReported: number): void {
  const steps = s.committedSteps(runId);
  const last = steps[steps.length - 1];
  // Everything reported is there; at most one more step committed before its line was printed.
  expect(last).toBeGreaterThanOrEqual(lastReported);
  expect(last).toBeLessThanOrEqual(lastReported + 1);
  expect(steps).toEqual(Array.from({ length: last + 1 }, (_, i) => i));
  expect(s.getRun(runId)!.lastStep).toBe(last);
  const outputLen = s.db.raw.prepare('SELECT sum(output_len) FROM members WHERE run_id = ? AND step = ?').pluck();
  for (const step of steps) {
    const rec = makeStep(step, CRASH_SHAPE);
    expect(rowCounts(s.db, runId, step)).toEqual({
      steps: 1,
      ...stepCounts(rec),
      evaluations: rec.evaluations?.length ?? 0,
      checkpoints: rec.checkpoint ? 1 : 0,
    });
    const tokens = rec.episodes.flatMap((e) => e.events.flatMap((ev) => ev.members.map((m) => m.outputTokens.length)));
    expect(outputLen.get(runId, step)).toBe(tokens.reduce((a, b) => a + b, 0));
  }
  // Nothing at all of the step that was being written.
  expect(Object.values(rowCounts(s.db, runId, last + 1)).every((n) => n === 0)).toBe(true);
}

describe('crash survival', () => {
  it('keeps every committed step complete after SIGKILL mid-run, twice', async () => {
    const path = tempDbPath('crash.db');
    for (const minSteps of [8, 5]) {
      const { runId, lastReported, signal } = await writeThenKill(path, minSteps);
      expect(signal).toBe('SIGKILL');
      const s = LabStore.open(path);
      expect(integrity(s.db)).toBe('ok');
      expectCompleteSteps(s, runId, lastReported);
      // The host's view: the run was left 'created' by the writer; an interrupted run keeps its steps.
      expect(s.markInterrupted(runId, 'engine killed (SIGKILL)')).toBe(true);
      expect(s.committedSteps(runId).length).toBeGreaterThanOrEqual(lastReported + 1);
      s.close();
    }
  });
});
