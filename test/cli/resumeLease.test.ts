/**
 * A refused concurrent `resume` prints nothing before the refusal (issue 26, point 9). Two
 * `resume`s of one stopped run at the same moment: both checked the lease (free), both printed
 * "resuming run 1 ... nothing committed is redone.", and the one that came second to the lease
 * was then refused (or found the run completed under it). Now the lease is taken before the
 * first line, so the second is refused in silence.
 *
 * Made deterministic: the second `resume` is another process, started (and waited for) at the
 * exact moment the first one prints its "resuming" line, i.e. after everything the first decides
 * before speaking. On the old order it found the lease free, printed, and trained the run itself.
 */
import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/commands';
import type { CliIO } from '../../src/cli/io';
import { NodeForkLauncher } from '../../src/core/host/launcher';
import { getLease } from '../../src/core/store/leases';
import { newRun, tempLab, tinyConfig } from '../engine/helpers';

const BIN = resolve(__dirname, '../../src/cli/srpo-lab.cjs');

describe('a concurrent resume', () => {
  it('is refused before it prints anything, naming the resume that holds the run; the first completes the run', async () => {
    const { dbPath, store } = tempLab();
    const runId = newRun(store, tinyConfig({ steps: 1 }));
    store.updateRun(runId, { status: 'stopped' });

    let second: { status: number | null; stdout: string; stderr: string } | null = null;
    let leaseAtSecond: ReturnType<typeof getLease> = null;
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIO = {
      out: (line) => {
        out.push(line);
        if (second === null && line.startsWith(`resuming run ${runId}`)) {
          leaseAtSecond = getLease(store.db, runId);
          const r = spawnSync(process.execPath, [BIN, 'resume', String(runId), '--db', dbPath], {
            encoding: 'utf8',
            env: { ...process.env, npm_lifecycle_event: '' },
            timeout: 120_000,
          });
          second = { status: r.status, stdout: r.stdout, stderr: r.stderr };
        }
      },
      tty: null,
      launcher: new NodeForkLauncher({ stdio: 'pipe' }),
      onInterrupt: () => () => undefined,
    };
    const code = await runCli(['resume', String(runId), '--db', dbPath], io, (l) => err.push(l));

    expect(second).not.toBeNull();
    const s = second!;
    expect(s.stdout).toBe('');
    expect(s.status).toBe(1);
    expect(s.stderr.trim()).toMatch(
      new RegExp(
        `^srpo-lab resume: run ${runId} is being started by lab host pid ${process.pid} on host ${hostname()} \\(since .+\\); --force does not override a live engine`,
      ),
    );
    // The first held the run (as `starting`, for its engine) when it spoke.
    expect(leaseAtSecond).toMatchObject({ kind: 'starting', pid: process.pid, host: hostname() });
    expect(err.join('\n')).toBe('');
    expect(code).toBe(0);
    expect(out[0]).toMatch(new RegExp(`^resuming run ${runId} `));
    expect(store.getRun(runId)!.status).toBe('completed');
    expect(store.committedSteps(runId)).toEqual([0, 1]);
    expect(getLease(store.db, runId)).toBeNull();
    store.close();
  }, 180_000);
});
