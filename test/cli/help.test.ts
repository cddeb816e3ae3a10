/**
 * `srpo-lab` as a newcomer meets it: `--version`, every command's `--help` (which runs nothing),
 * hints that name a command that works from a clone (`npm run lab --`, or `srpo-lab` when run
 * through the installed bin), `export --format csv` written to a file with the UI's CSV columns
 * and refused on a terminal, and one step convention (src/shared/stepConvention.ts) across the
 * CLI's `runs` and `show`, the API the UI reads and the reports, on a completed and a stopped run.
 * The runs here are written straight into a store (no engine): what is compared is how each
 * surface counts the same records. test/e2e/trace.test.ts compares them on a real run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { optionText } from '../../src/cli/optionHelp';
import { PRESETS } from '../../src/core/config/presets';
import { COMMANDS, runCli } from '../../src/cli/commands';
import type { CliIO } from '../../src/cli/io';
import { labCommand } from '../../src/cli/lab';
import { resolveRunConfig } from '../../src/core/config';
import { LabService } from '../../src/core/host/labService';
import { NodeForkLauncher } from '../../src/core/host/launcher';
import { LabStore } from '../../src/core/store';
import { makeStep } from '../core/store/fixtures/makeStep';

interface Result {
  code: number;
  out: string;
  err: string;
}

async function cli(argv: string[], tty = false): Promise<Result> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = {
    out: (l) => out.push(l),
    tty: tty ? { write: () => undefined, columns: 100 } : null,
    launcher: new NodeForkLauncher({ stdio: 'pipe' }),
    onInterrupt: () => () => undefined,
  };
  const code = await runCli(argv, io, (l) => err.push(l));
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const dir = mkdtempSync(join(tmpdir(), 'srpo-help-'));
const db = join(dir, 'lab.db');
const PACKAGE_VERSION = (JSON.parse(readFileSync(resolve(__dirname, '../../package.json'), 'utf8')) as { version: string }).version;

describe('srpo-lab --help and --version', () => {
  it('--version (and -V) prints the package version', async () => {
    for (const flag of ['--version', '-V']) {
      const r = await cli([flag]);
      expect(r.code).toBe(0);
      expect(r.out).toBe(`srpo-lab ${PACKAGE_VERSION}`);
    }
  });

  it('every command answers --help with its usage and options, exit 0, and runs nothing', async () => {
    const never = join(dir, 'never.db');
    for (const name of Object.keys(COMMANDS)) {
      const r = await cli([name, '--help', '--db', never]);
      expect(r.err, name).toBe('');
      expect(r.code, name).toBe(0);
      expect(r.out, name).toMatch(new RegExp(`^usage: npm run lab -- ${name}\\b`));
      for (const o of COMMANDS[name as keyof typeof COMMANDS].options) expect(r.out, `${name} --${o}`).toContain(`--${o}`);
    }
    expect(existsSync(never)).toBe(false); // train --help created no database
  });

  it('every option and flag of every command is explained in its --help', async () => {
    for (const [name, cmd] of Object.entries(COMMANDS) as [string, { options: string[]; flags: string[] }][]) {
      for (const o of [...cmd.options, ...cmd.flags]) expect(optionText(name, o)?.text, `${name} --${o}`).toMatch(/\w{3}/);
      const r = await cli([name, '--help']);
      for (const o of [...cmd.options, ...cmd.flags]) expect(r.out, `${name} --${o}`).toMatch(new RegExp(`\\n {2}--${o}\\b[^\\n]* {2}\\w`));
    }
  });

  it('train --help and show --help explain the step count; -h and help COMMAND are the same', async () => {
    const train = await cli(['train', '--help']);
    expect(train.out).toMatch(/\n {2}--preset NAME +a named run config/);
    expect(train.out).toMatch(/\n {2}--config FILE +a run config as JSON/);
    // The presets, each with what it is.
    for (const name of Object.keys(PRESETS)) expect(train.out).toMatch(new RegExp(`\\n {2}${name} +\\S`));
    expect(train.out).toMatch(/--set key=value/);
    expect(train.out).toMatch(/progress reads "updates committed\/S" \(30\/30 when done\)/);
    expect((await cli(['train', '-h'])).out).toBe(train.out);
    expect((await cli(['help', 'train'])).out).toBe(train.out);
    expect((await cli(['show', '--help'])).out).toMatch(/step S \(the planned steps\) is the final evaluation/);
    // A --set value that happens to be "--help" is a value, not a request for help.
    expect((await cli(['train', '--set', 'name=-h', '--db', join(dir, 'x.db')])).out).not.toMatch(/^usage:/);
  });

  it('the overview names the way to run the CLI from a clone, and how to get more help', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^usage: npm run lab -- COMMAND/);
    expect(r.out).toContain('npm run lab -- COMMAND --help');
    expect(r.out).not.toMatch(/usage: srpo-lab/);
  });

  it('hints name srpo-lab only when this process is the installed bin', () => {
    expect(labCommand('/home/me/lab/src/cli/index.ts', 'test')).toBe('npm run lab --');
    expect(labCommand('/home/me/lab/src/cli/index.ts', 'lab')).toBe('npm run lab --');
    expect(labCommand('/usr/local/bin/srpo-lab', undefined)).toBe('srpo-lab');
    expect(labCommand('/home/me/lab/src/cli/srpo-lab.cjs', undefined)).toBe('srpo-lab');
    expect(labCommand('/home/me/not-srpo-lab-at-all.js', undefined)).toBe('npm run lab --');
  });

  it('the installed bin answers --version and names itself in its help', () => {
    const bin = resolve(__dirname, '../../src/cli/srpo-lab.cjs');
    const v = spawnSync(process.execPath, [bin, '--version'], { encoding: 'utf8', env: { ...process.env, npm_lifecycle_event: '' } });
    expect(v.stderr).toBe('');
    expect(v.stdout.trim()).toBe(`srpo-lab ${PACKAGE_VERSION}`);
    const h = spawnSync(process.execPath, [bin, 'show', '--help'], { encoding: 'utf8', env: { ...process.env, npm_lifecycle_event: '' } });
    expect(h.stdout).toMatch(/^usage: srpo-lab show RUN/);
  });
});

describe('one step count on every surface; export as the UI exports', () => {
  let service: LabService;
  let completed: number;
  let stopped: number;

  beforeAll(() => {
    const store = LabStore.open(db);
    // Completed: 3 updates (records 0..2) and the final evaluation (record 3).
    completed = store.createRun({ name: 'done-run', config: resolveRunConfig({ steps: 3 }), seed: 1, workflow: 'math', algorithm: 'srpo', status: 'running' });
    for (let s = 0; s <= 3; s++) store.writeStep(completed, { ...makeStep(s), checkpoint: undefined });
    store.addCheckpoint(completed, 2, join(dir, 'ckpt-2'));
    store.updateRun(completed, { status: 'completed' });
    // Stopped after 5 committed updates (records 0..4) of 8.
    stopped = store.createRun({ name: 'stopped-run', config: resolveRunConfig({ steps: 8 }), seed: 2, workflow: 'math', algorithm: 'srpo', status: 'running' });
    for (let s = 0; s <= 4; s++) store.writeStep(stopped, { ...makeStep(s, undefined, 1), checkpoint: undefined });
    store.updateRun(stopped, { status: 'stopped' });
    store.close();
    service = new LabService({ dbPath: db, launcher: new NodeForkLauncher({ stdio: 'pipe' }) });
  });
  afterAll(async () => {
    await service?.close();
  });

  it('runs: 3/3 for the completed run, 5/8 for the stopped one', async () => {
    const r = await cli(['runs', '--db', db]);
    expect(r.err).toBe('');
    const row = (name: string) => r.out.split('\n').find((l) => l.includes(name)) ?? '';
    expect(row('done-run')).toMatch(/\s3\/3\s/);
    expect(row('stopped-run')).toMatch(/\s5\/8\s/);
  });

  it('show: the same counts, checkpoints named by the updates they hold', async () => {
    const done = await cli(['show', String(completed), '--db', db]);
    expect(done.out).toMatch(/progress\s+3\/3 steps \(updates committed and the final evaluation\)/);
    // The checkpoint of record 2 holds 3 updates: it is step 3, the number eval --checkpoint takes.
    expect(done.out).toMatch(/checkpoints steps 3 \(the updates each holds; eval --checkpoint N and export-model --step N take these\)/);
    const halt = await cli(['show', String(stopped), '--db', db]);
    expect(halt.out).toMatch(/progress\s+5\/8 steps \(updates committed\)\n/);
    expect(halt.out).toMatch(/checkpoints none/);
  });

  it('the API gives the UI the records to say the same (lastStep, steps), and the reports say 3/3 and 5/8', async () => {
    const runs = await service.call('listRuns', {});
    const byName = new Map(runs.map((r) => [r.name, r]));
    expect([byName.get('done-run')!.lastStep, byName.get('done-run')!.steps]).toEqual([3, 3]);
    expect([byName.get('stopped-run')!.lastStep, byName.get('stopped-run')!.steps]).toEqual([4, 8]);
    const md = await service.call('exportReport', { runIds: [completed, stopped], format: 'markdown' });
    const text = String(md.content);
    const line = (name: string) => text.split('\n').find((l) => l.includes(name) && l.includes('|')) ?? '';
    expect(line('done-run')).toMatch(/\|\s*3\/3\s*\|/);
    expect(line('stopped-run')).toMatch(/\|\s*5\/8\s*\|/);
  });

  it("export --format csv --out FILE writes exactly the UI's metrics CSV", async () => {
    const file = join(dir, 'run.csv');
    const r = await cli(['export', String(completed), '--format', 'csv', '--out', file, '--db', db]);
    expect(r.err).toBe('');
    expect(r.out).toBe(`wrote run ${completed} as csv to ${file}`);
    const ui = await service.call('exportReport', { runIds: [completed], format: 'csv-metrics' });
    const written = readFileSync(file, 'utf8');
    expect(written.split('\n')[0]).toBe('run,step,key,value,wall_time');
    expect(written.split('\n').length).toBeGreaterThan(4);
    expect(written).toBe(String(ui.content));
  });

  it('export on a terminal without --out refuses to flood it and says how to write a file', async () => {
    const r = await cli(['export', String(completed), '--format', 'csv', '--db', db], true);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toMatch(
      new RegExp(
        `not writing run ${completed}'s csv onto the terminal; write a file: npm run lab -- export ${completed} --format csv --out run-${completed}\\.csv`,
      ),
    );
    // Piped (no terminal): the CSV on stdout, as before.
    const piped = await cli(['export', String(completed), '--format', 'csv', '--db', db]);
    expect(piped.out.split('\n')[0]).toBe('run,step,key,value,wall_time');
  });
});
