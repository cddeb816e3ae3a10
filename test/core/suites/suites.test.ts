/**
 * Experiment suites without training: the spec (rows x seeds, vary, labels, baseline), the
 * `suites` tables, and the runner's queue with engines that finish, crash or stop on request
 * (a fake launcher: the real engines are exercised by the CLI smoke suite in docs/RESULTS.md).
 * What a user would notice: at most N engines at once, one line per run, a resumed suite redoes
 * no completed run and resumes the interrupted ones, a deleted run is created again.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EngineHandleBase, type EngineLaunchRequest } from '../../../src/core/host/launcher';
import type { HostMessage } from '../../../src/core/host/messages';
import { LabStore, SCHEMA_VERSION } from '../../../src/core/store';
import { createSuite, getSuite, listSuites, suiteCells } from '../../../src/core/store/suites';
import { queuedRunIds } from '../../../src/core/host/runQueries';
import { launchRun } from '../../../src/core/host/runs';
import { runSuite } from '../../../src/core/host/suiteRun';
import { expandSuite, resolveSuiteSpec, suiteRows } from '../../../src/core/suites/spec';
import { suiteDetail } from '../../../src/core/suites/tableData';

type Behaviour = 'complete' | 'crash' | 'wait' | 'stubborn';

class FakeEngine extends EngineHandleBase {
  readonly pid = undefined;
  constructor(
    readonly request: EngineLaunchRequest,
    private readonly store: LabStore,
    private readonly behaviour: Behaviour,
  ) {
    super();
    store.updateRun(request.runId, { status: 'running', startedAt: Date.now() });
    if (behaviour === 'complete') setTimeout(() => this.finish('completed'), 5);
    if (behaviour === 'crash') setTimeout(() => this.exit(1, null), 5); // no final status: marked interrupted
  }
  send(m: HostMessage): void {
    if (m.type === 'stop' && this.behaviour !== 'stubborn') setTimeout(() => this.finish('stopped'), 5);
  }
  kill(): void {
    this.exit(null, 'SIGKILL');
  }
  finish(status: 'completed' | 'stopped'): void {
    this.store.updateRun(this.request.runId, { status, endedAt: Date.now() });
    this.receive({ type: 'status', status });
    this.exit(0, null);
  }
}

class FakeLauncher {
  readonly launched: EngineLaunchRequest[] = [];
  live = 0;
  peak = 0;
  constructor(
    private readonly store: LabStore,
    private readonly behaviour: (runId: number) => Behaviour,
  ) {}
  launch(request: EngineLaunchRequest): FakeEngine {
    this.launched.push(request);
    this.peak = Math.max(this.peak, ++this.live);
    const e = new FakeEngine(request, this.store, this.behaviour(request.runId));
    e.onExit(() => this.live--);
    return e;
  }
}

function lab() {
  const dbPath = join(mkdtempSync(join(tmpdir(), 'srpo-suite-')), 'lab.db');
  return { dbPath, store: LabStore.open(dbPath) };
}

const SPEC = { name: 't', seeds: [1, 2], rows: [{ preset: 'math-shared-grpo' }, { preset: 'math-srpo', sets: { steps: 3 } }], baseline: 'math-shared-grpo' };

function stored(store: LabStore, spec: unknown = SPEC) {
  const s = resolveSuiteSpec(spec);
  return createSuite(store.db, { name: s.name, spec: s, cells: expandSuite(s).map((c) => ({ label: c.label, seed: c.seed })) });
}

describe('suite spec', () => {
  it('expands rows x seeds seed-major, labels rows by preset and overrides, applies --set and seed', () => {
    const cells = expandSuite(resolveSuiteSpec({ ...SPEC, sets: { 'rollout.groupSize': 2 } }));
    expect(cells.map((c) => [c.label, c.seed])).toEqual([
      ['math-shared-grpo', 1],
      ['math-srpo steps=3', 1],
      ['math-shared-grpo', 2],
      ['math-srpo steps=3', 2],
    ]);
    expect(cells[1].config.steps).toBe(3);
    expect(cells[3].config.seed).toBe(2);
    expect(cells.every((c) => c.config.rollout.groupSize === 2)).toBe(true);
    expect(cells[0].config.name).toBe('t/math-shared-grpo/s1');
  });

  it('multiplies rows by varied values, switching K mode and objective like --set', () => {
    const spec = resolveSuiteSpec({
      seeds: [1],
      rows: [{ preset: 'math-paper' }],
      vary: [
        {
          key: 'workflow.options.solvers',
          values: [
            { mode: 'fixed', k: 1 },
            { mode: 'fixed', k: 3 },
          ],
        },
        { key: 'objective.setNorm', values: ['mean', 'none'] },
      ],
    });
    expect(suiteRows(spec).map((r) => r.label)).toEqual([
      'math-paper workflow.options.solvers={"mode":"fixed","k":1} objective.setNorm=mean',
      'math-paper workflow.options.solvers={"mode":"fixed","k":1} objective.setNorm=none',
      'math-paper workflow.options.solvers={"mode":"fixed","k":3} objective.setNorm=mean',
      'math-paper workflow.options.solvers={"mode":"fixed","k":3} objective.setNorm=none',
    ]);
    expect(expandSuite(spec)[3].config.workflow.options).toMatchObject({ solvers: { mode: 'fixed', k: 3 } });
  });

  it('refuses duplicate labels, an unknown baseline, repeated seeds and a bad row, naming them', () => {
    expect(() => resolveSuiteSpec({ seeds: [1], rows: [{ preset: 'math-srpo' }, { preset: 'math-srpo' }] })).toThrow(/two rows are labelled "math-srpo"/);
    expect(() => resolveSuiteSpec({ seeds: [1], rows: [{ preset: 'math-srpo' }], baseline: 'x' })).toThrow(/baseline "x" is not a row/);
    expect(() => resolveSuiteSpec({ seeds: [1, 1], rows: [{ preset: 'math-srpo' }] })).toThrow(/seeds repeat/);
    expect(() => resolveSuiteSpec({ seeds: [1], rows: [{ preset: 'nope' }] })).toThrow(/preset/);
    expect(() => expandSuite(resolveSuiteSpec({ seeds: [1], rows: [{ preset: 'math-srpo', sets: { steps: 0 } }] }))).toThrow(
      /suite row "math-srpo steps=0" \(seed 1\).*steps/,
    );
  });
});

describe('suites in the lab database', () => {
  it('stores the suite and its cells by migration 5', () => {
    const { store } = lab();
    expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(5);
    const id = stored(store);
    expect(listSuites(store.db).map((s) => s.name)).toEqual(['t']);
    expect(getSuite(store.db, id)!.spec).toMatchObject({ seeds: [1, 2] });
    expect(suiteCells(store.db, id).map((c) => [c.position, c.label, c.seed, c.runId])).toEqual([
      [0, 'math-shared-grpo', 1, null],
      [1, 'math-srpo steps=3', 1, null],
      [2, 'math-shared-grpo', 2, null],
      [3, 'math-srpo steps=3', 2, null],
    ]);
    store.close();
  });
});

describe('the suite runner', () => {
  it('runs every cell, at most N at once, one line per run, then reports the table', async () => {
    const { store, dbPath } = lab();
    const id = stored(store);
    const launcher = new FakeLauncher(store, () => 'complete');
    const lines: string[] = [];
    const r = await runSuite(id, { store, dbPath, launcher, parallel: 2, out: (l) => lines.push(l) });
    expect(r).toMatchObject({ total: 4, skipped: 0, completed: 4, failed: 0, stopped: 0 });
    expect(launcher.peak).toBe(2);
    expect(lines.filter((l) => /^\[\d\/4\] row ".*" seed \d: run \d+ completed in \d+m\d\ds$/.test(l))).toHaveLength(4);
    expect(lines.at(-1)).toMatch(/suite 1 completed: 4 runs/);
    const d = suiteDetail(store, id)!;
    expect(d.counts).toEqual({ completed: 4 });
    expect(d.table.rows.map((row) => row.label)).toEqual(['math-shared-grpo', 'math-srpo steps=3']);
    store.close();
  });

  it('resumes after a crash: completed runs are not redone, interrupted ones are resumed', async () => {
    const { store, dbPath } = lab();
    const id = stored(store);
    let crashed = 0;
    const first = new FakeLauncher(store, () => (crashed++ < 2 ? 'crash' : 'complete'));
    const r1 = await runSuite(id, { store, dbPath, launcher: first, parallel: 1, out: () => {} });
    expect(r1).toMatchObject({ completed: 2, failed: 2 });
    const interrupted = suiteDetail(store, id)!
      .entries.filter((e) => e.status === 'interrupted')
      .map((e) => e.runId);
    expect(interrupted).toHaveLength(2);

    const second = new FakeLauncher(store, () => 'complete');
    const lines: string[] = [];
    const r2 = await runSuite(id, { store, dbPath, launcher: second, parallel: 2, out: (l) => lines.push(l) });
    expect(r2).toMatchObject({ skipped: 2, completed: 2, failed: 0 });
    expect(second.launched.map((l) => [l.runId, l.mode])).toEqual(interrupted.map((runId) => [runId, 'resume']));
    expect(lines[0]).toMatch(/4 runs, 2 already completed, 2 to run/);
    store.close();
  });

  it('stops every engine on Ctrl-C and starts no more; resume finishes the rest', async () => {
    const { store, dbPath } = lab();
    const id = stored(store);
    let interrupt: (() => void) | null = null;
    const launcher = new FakeLauncher(store, () => 'wait');
    const lines: string[] = [];
    const running = runSuite(id, {
      store,
      dbPath,
      launcher,
      parallel: 2,
      out: (l) => lines.push(l),
      onInterrupt: (h) => ((interrupt = h), () => (interrupt = null)),
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(launcher.live).toBe(2);
    interrupt!();
    const r = await running;
    expect(r).toMatchObject({ completed: 0, stopped: 4, interrupted: true });
    expect(launcher.launched).toHaveLength(2);
    expect(lines.at(-1)).toMatch(/continue with: srpo-lab suite resume 1/);

    const after = new FakeLauncher(store, () => 'complete');
    expect(await runSuite(id, { store, dbPath, launcher: after, parallel: 2, out: () => {} })).toMatchObject({ completed: 4 });
    expect(after.launched.map((l) => l.mode).sort()).toEqual(['resume', 'resume', 'start', 'start']);
    store.close();
  });

  it('cells beyond the limit wait in the queue holding their lease; Ctrl-C releases them, a second Ctrl-C kills', async () => {
    const { store, dbPath } = lab();
    const id = stored(store);
    let interrupt: (() => void) | null = null;
    const launcher = new FakeLauncher(store, () => 'stubborn');
    const lines: string[] = [];
    const running = runSuite(id, { store, dbPath, launcher, parallel: 1, out: (l) => lines.push(l), onInterrupt: (h) => ((interrupt = h), () => {}) });
    await new Promise((r) => setTimeout(r, 20));
    const shown = () => suiteDetail(store, id, { queued: queuedRunIds(store) })!.entries.map((e) => e.status);
    expect(shown()).toEqual(['running', 'queued', 'queued', 'queued']);
    // Another host cannot take a queued cell while the suite waits for a slot.
    const waiting = suiteCells(store.db, id)[1].runId!;
    expect(() => launchRun(waiting, 'start', { store, dbPath, launcher: new FakeLauncher(store, () => 'complete') })).toThrow(
      new RegExp(`^run ${waiting} is queued by lab host pid ${process.pid}`),
    );
    interrupt!();
    expect(queuedRunIds(store).size).toBe(0);
    expect(shown()).toEqual(['running', 'created', 'created', 'created']);
    expect(launcher.live).toBe(1); // asked to stop; this engine does not
    interrupt!();
    const r = await running;
    expect(r).toMatchObject({ completed: 0, failed: 0, stopped: 4, interrupted: true });
    expect(launcher.launched).toHaveLength(1);
    expect(shown()).toEqual(['interrupted', 'created', 'created', 'created']);
    expect(lines).toContain('stopping: every engine finishes or abandons its step (Ctrl-C again to kill them)');
    store.close();
  });

  it('a cell another host holds is reported as not started, and the others still run', async () => {
    const { store, dbPath } = lab();
    const id = stored(store);
    // A first pass leaves every run interrupted; then a second host holds the first cell's run.
    await runSuite(id, { store, dbPath, launcher: new FakeLauncher(store, () => 'crash'), parallel: 4, out: () => {} });
    const runId = suiteCells(store.db, id)[0].runId!;
    const other = launchRun(runId, 'resume', { store, dbPath, launcher: new FakeLauncher(store, () => 'wait') });
    const lines: string[] = [];
    const r = await runSuite(id, { store, dbPath, launcher: new FakeLauncher(store, () => 'complete'), parallel: 2, out: (l) => lines.push(l) });
    expect(r).toMatchObject({ completed: 3, failed: 1 });
    expect(lines.find((l) => l.includes(`run ${runId} could not start`))).toMatch(/is being started by lab host pid/);
    other.stop();
    await other.done;
    store.close();
  });

  it('creates a run again for a cell whose run was deleted', async () => {
    const { store, dbPath } = lab();
    const id = stored(store);
    await runSuite(id, { store, dbPath, launcher: new FakeLauncher(store, () => 'complete'), parallel: 2, out: () => {} });
    const gone = suiteCells(store.db, id)[1].runId!;
    store.deleteRun(gone);
    expect(suiteCells(store.db, id)[1].runId).toBeNull();
    const again = new FakeLauncher(store, () => 'complete');
    expect(await runSuite(id, { store, dbPath, launcher: again, parallel: 2, out: () => {} })).toMatchObject({ skipped: 3, completed: 1 });
    const fresh = suiteCells(store.db, id)[1].runId!;
    expect(fresh).not.toBe(gone);
    expect(store.getRun(fresh)!.name).toBe('t/math-srpo steps=3/s1');
    store.close();
  });
});

describe('the shipped suite files (docs/RESULTS.md)', () => {
  it('expand into valid runs: Tables 1 and 2 with 7 rows each, Table 3 at a matched token budget', async () => {
    const { readFileSync } = await import('node:fs');
    const { resolve } = await import('node:path');
    const load = (name: string) => expandSuite(resolveSuiteSpec(JSON.parse(readFileSync(resolve(__dirname, '../../../resources/suites', name), 'utf8'))));
    const t1 = load('table1-math.json');
    const t2 = load('table2-search.json');
    const t3 = load('table3-ablations.json');
    expect([t1.length, t2.length, t3.length]).toEqual([21, 21, 12]);
    const row = (cells: typeof t1, label: string) => cells.find((c) => c.label === label)!.config;
    expect(row(t1, 'shared Dr. MAS')).toMatchObject({ objective: { algorithm: 'drmas' }, policies: { sharing: 'shared' } });
    expect(row(t2, 'single-agent GRPO (no retrieval)').workflow).toMatchObject({ name: 'single', options: { domain: 'qa' } });
    expect(row(t3, 'K=1')).toMatchObject({ steps: 60, budget: { teamTokens: 96000 }, workflow: { options: { solvers: { mode: 'fixed', k: 1 } } } });
  });
});
