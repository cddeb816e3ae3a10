/**
 * `srpo-lab suite` as a user runs it, with engines that complete at once (the queue and the
 * tables are tested in test/core/suites and test/shared): run from presets x seeds with --vary
 * and --set, one line per run, list, show (Markdown and CSV), resume with nothing left, and the
 * errors a user sees.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/cli/args';
import { runCli } from '../../src/cli/commands';
import { suiteSpecFromArgs, SUITE_OPTIONS } from '../../src/cli/suite';
import { EngineHandleBase, type EngineLaunchRequest } from '../../src/core/host/launcher';
import { LabStore } from '../../src/core/store';

class DoneEngine extends EngineHandleBase {
  readonly pid = undefined;
  constructor(request: EngineLaunchRequest, dbPath: string) {
    super();
    setTimeout(() => {
      const s = LabStore.open(dbPath);
      s.updateRun(request.runId, { status: 'completed', endedAt: Date.now() });
      s.close();
      this.receive({ type: 'status', status: 'completed' });
      this.exit(0, null);
    }, 5);
  }
  send(): void {}
  kill(): void {
    this.exit(null, 'SIGKILL');
  }
}

async function cli(argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const dbIndex = argv.indexOf('--db');
  const dbPath = argv[dbIndex + 1];
  const io = {
    out: (l: string) => lines.push(l),
    tty: null,
    launcher: { launch: (r: EngineLaunchRequest) => new DoneEngine(r, dbPath) },
    onInterrupt: () => () => {},
  };
  const code = await runCli(argv, io, (l) => lines.push(`ERR ${l}`));
  return { code, out: lines.join('\n') };
}

describe('srpo-lab suite', () => {
  it('builds the spec from presets, seeds, --vary and --set', () => {
    const args = parseArgs(
      [
        'suite',
        'run',
        '--preset',
        'math-srpo,math-drmas',
        '--seeds',
        '1,2',
        '--vary',
        'objective.setNorm=mean,none',
        '--set',
        'steps=2',
        '--baseline',
        'math-drmas objective.setNorm=mean',
      ],
      { options: SUITE_OPTIONS, flags: [] },
    );
    expect(suiteSpecFromArgs(args)).toEqual({
      rows: [{ preset: 'math-srpo' }, { preset: 'math-drmas' }],
      seeds: [1, 2],
      vary: [{ key: 'objective.setNorm', values: ['mean', 'none'] }],
      baseline: 'math-drmas objective.setNorm=mean',
      sets: { steps: 2 },
    });
  });

  it('runs a suite, lists it, shows its tables and resumes with nothing left', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'srpo-cli-suite-')), 'lab.db');
    const run = await cli(['suite', 'run', '--db', db, '--preset', 'math-shared-grpo,math-srpo', '--seeds', '1,2', '--set', 'steps=2', '--parallel', '2']);
    expect(run.code, run.out).toBe(0);
    expect(run.out).toMatch(/suite 1 "suite": 4 runs, 0 already completed, 4 to run, 2 at a time/);
    expect(run.out.split('\n').filter((l) => /^\[\d\/4\] row "math-(shared-grpo|srpo)" seed [12]: run \d completed/.test(l))).toHaveLength(4);

    const list = await cli(['suite', 'list', '--db', db]);
    expect(list.out).toMatch(/1 {2}suite {2}2 rows x 2 seeds {2}\(4 completed\) {2}baseline "math-shared-grpo"/);
    const show = await cli(['suite', 'show', '1', '--db', db, '--baseline', 'math-srpo']);
    expect(show.out).toMatch(/^Quality .*vs "math-srpo"/m);
    expect(show.out).toMatch(/^math-srpo +– +–/m); // the fake runs have no evaluation: dashes
    expect((await cli(['suite', 'show', '1', '--db', db, '--format', 'md'])).out).toContain('### Quality');
    const csv = await cli(['suite', 'show', '1', '--db', db, '--format', 'csv']);
    expect(csv.out.split('\n')).toHaveLength(3);
    const again = await cli(['suite', 'resume', '1', '--db', db]);
    expect(again.out).toMatch(/4 runs, 4 already completed, 0 to run/);
  });

  it('reads a suite file and says what is wrong', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'srpo-cli-suite-'));
    const db = join(dir, 'lab.db');
    const file = join(dir, 'suite.json');
    writeFileSync(file, JSON.stringify({ name: 'f', seeds: [3], rows: [{ preset: 'math-k1', label: 'K=1', sets: { steps: 1 } }] }));
    const ok = await cli(['suite', 'run', file, '--db', db]);
    expect(ok.out).toMatch(/\[1\/1\] row "K=1" seed 3: run 1 completed/);
    expect((await cli(['suite', 'run', '--db', db])).out).toMatch(/needs a suite FILE or --preset/);
    expect((await cli(['suite', 'run', '--db', db, '--preset', 'math-srpo', '--seeds', 'a'])).out).toMatch(/--seeds expects integers/);
    expect((await cli(['suite', 'show', '9', '--db', db])).out).toMatch(/no suite 9/);
    expect((await cli(['suite', 'bogus', '--db', db])).out).toMatch(/suite expects one of run, resume, show, list/);
  });
});
