/**
 * A run whose dataset or corpus file changed since it was created is refused at the resume
 * request, before an engine starts: `srpo-lab resume` (src/cli/train.ts) and the LabService's
 * resumeRun (src/core/host/labService.ts) both name the file and never call the launcher;
 * restoring the file lets the same request reach the launcher. Also `srpo-lab show`'s config
 * summary prints dataset task entries by benchmark name and path (it printed `[object Object]`).
 * Engines here are fakes: the check under test happens before any engine exists.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/commands';
import type { CliIO } from '../../src/cli/io';
import { configSummary } from '../../src/cli/show';
import { mergeConfig, presetInput, resolveRunConfig, type RunConfig } from '../../src/core/config';
import { createRun } from '../../src/core/host/runs';
import { LabService } from '../../src/core/host/labService';
import { EngineHandleBase, type EngineLaunchRequest } from '../../src/core/host/launcher';
import type { HostMessage } from '../../src/core/host/messages';
import { LabStore } from '../../src/core/store';
import type { LabApiError } from '../../src/shared/api';

const ORIGINAL = Array.from({ length: 6 }, (_, i) => JSON.stringify({ problem: `${i}+2`, answer: String(i + 2) })).join('\n') + '\n';
const CHANGED = ORIGINAL.replace('"answer":"2"', '"answer":"7"');

/** A lab database holding one stopped run whose train and eval tasks come from `data`. */
function labWithDataRun(): { dir: string; db: string; data: string; runId: number; config: RunConfig } {
  const dir = mkdtempSync(join(tmpdir(), 'srpo-resume-data-'));
  const data = join(dir, 'sums.jsonl');
  writeFileSync(data, ORIGINAL);
  const config = resolveRunConfig(
    mergeConfig(presetInput('math-quick'), { tasks: { train: [{ dataset: data }], eval: [{ dataset: data, name: 'sums', limit: 3 }] } }),
  );
  const db = join(dir, 'lab.db');
  const store = LabStore.open(db);
  const runId = createRun(store, { config, preset: 'math-quick' });
  store.updateRun(runId, { status: 'stopped', startedAt: Date.now(), endedAt: Date.now() });
  store.close();
  return { dir, db, data, runId, config };
}

/** A launcher that records each request and starts nothing (the launch then fails, saying so). */
class RecordingLauncher {
  readonly requests: EngineLaunchRequest[] = [];
  launch(request: EngineLaunchRequest): never {
    this.requests.push(request);
    throw new Error('test launcher: no engine');
  }
}

describe('srpo-lab resume with a changed data file', () => {
  it('is refused naming the file, before the launcher is called; restored, the resume reaches the launcher', async () => {
    const { db, data, runId } = labWithDataRun();
    const launcher = new RecordingLauncher();
    const resume = async (): Promise<{ code: number; err: string }> => {
      const err: string[] = [];
      const io: CliIO = { out: () => {}, tty: null, launcher, onInterrupt: () => () => {} };
      const code = await runCli(['resume', String(runId), '--db', db], io, (l) => err.push(l));
      return { code, err: err.join('\n') };
    };

    writeFileSync(data, CHANGED);
    const refused = await resume();
    expect(refused.code).not.toBe(0);
    expect(refused.err).toContain(`dataset "${data}" changed since the run was created`);
    expect(launcher.requests).toHaveLength(0);

    writeFileSync(data, ORIGINAL);
    const allowed = await resume();
    expect(allowed.err).toContain('test launcher: no engine'); // got past the check, to the launch
    expect(launcher.requests.map((r) => r.runId)).toEqual([runId]);
  });
});

/** An engine that completes as soon as it is launched. */
class CompletingEngine extends EngineHandleBase {
  readonly pid = undefined;
  send(_m: HostMessage): void {}
  kill(): void {
    this.exit(null, 'SIGKILL');
  }
}

describe('LabService resumeRun with a changed data file', () => {
  const services: LabService[] = [];
  afterEach(async () => {
    for (const s of services.splice(0)) await s.close();
  });

  it('is refused as a conflict naming the file, with no engine launched; restored, an engine starts', async () => {
    const { db, data, runId } = labWithDataRun();
    const launched: EngineLaunchRequest[] = [];
    const service = new LabService({
      dbPath: db,
      launcher: {
        launch: (request) => {
          launched.push(request);
          const e = new CompletingEngine();
          setTimeout(() => e.kill(), 0);
          return e;
        },
      },
    });
    services.push(service);

    writeFileSync(data, CHANGED);
    let refusal: LabApiError | null = null;
    try {
      await service.call('resumeRun', { runId });
    } catch (err) {
      refusal = err as LabApiError;
    }
    expect(refusal?.code).toBe('conflict');
    expect(refusal?.message).toContain(`dataset "${data}" changed since the run was created`);
    expect(launched).toHaveLength(0);

    writeFileSync(data, ORIGINAL);
    await service.call('resumeRun', { runId });
    expect(launched.map((r) => r.runId)).toEqual([runId]);
  });
});

describe('srpo-lab show: dataset task entries', () => {
  it('are printed by benchmark name and path, generators by name', () => {
    const { data, config } = labWithDataRun();
    const withGenerator = { ...config, tasks: { ...config.tasks, eval: [...config.tasks.eval, 'arith-easy'] } } as RunConfig;
    const line = configSummary(withGenerator).find((l) => l.trimStart().startsWith('tasks'));
    expect(line).toBe(`  tasks      train sums (${data}); eval sums (${data}, limit 3), arith-easy`);
    expect(configSummary(config).join('\n')).not.toContain('[object Object]');
  });
});
