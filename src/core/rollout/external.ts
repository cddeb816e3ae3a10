/**
 * The async rollout of the `external` workflow: one batch of episodes played by the researcher's
 * agent program (docs/EXTERNAL_AGENTS.md). Per batch:
 *
 *   1. write SRPO_LAB_EPISODES, one JSON line per episode {episode, task, group, base_url};
 *   2. open the episodes on the endpoint and start the program once (argv, no shell) with
 *      SRPO_LAB_EPISODES, SRPO_LAB_MODE (train | eval), OPENAI_BASE_URL and OPENAI_API_KEY;
 *      its stdout and stderr go to the run's log, a stdout line {"episode", "reward", ...} is a reward;
 *   3. wait for it to exit, or kill it (and its process group) at timeoutS;
 *   4. close the episodes (later calls: 404) and build the RolloutBatch the trainer consumes.
 *
 * While it plays, the caller's `poll` runs every POLL_MS (the engine beats its lease and checks
 * for a stop there); a throw kills the program and rethrows: the step is abandoned before its
 * update, and the resumed run plays the batch again.
 *
 * Failures never fail the run while one episode of the batch finished: an episode without a
 * reward (non-zero exit, timeout, crash, never called) is dropped from a training batch and
 * counted (`external/failed_episodes`); an evaluation keeps it as an unanswered, incorrect sample
 * so Avg@n still counts n samples. A batch with no finished episode throws.
 *
 * Evaluation grading: an episode that posted `answer` is graded by the lab (a math-equal or
 * normalised exact match to a gold alias) unless the program also said `correct`.
 *
 * Not here: HTTP (external/server.ts), the workflow's options (workflows/external.ts).
 * Tests: test/external/*.test.ts.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { mathAnswersEqual, normalizeQA } from '../eval';
import { EndpointError } from '../external/protocol';
import { ExternalEndpoint } from '../external/server';
import { EpisodeLog, urlIdOf } from '../external/episodeLog';
import { ExternalEpisode, externalRoles, resolveExternalConfig, type ExternalConfig } from '../workflows/external';
import type { Episode } from '../workflows/types';
import type { RolloutBatch, RolloutEpisode, RolloutOptions } from './orchestrator';
import type { DriverContext, PlayHooks, RolloutDriver, RolloutMode } from './drivers';

/** How often the caller's poll runs while a program plays (ms). */
const POLL_MS = 250;

/** How a program run ended. */
export interface ProgramExit {
  code: number | null;
  signal: string | null;
  timedOut: boolean;
  /** Could not be started (e.g. no such file). */
  spawnError: string | null;
}

export interface ProgramOptions {
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  onStdout(line: string): void;
  onStderr(line: string): void;
}

/** The program's command: a first word `node` is the lab's own Node (the program needs no PATH). */
function argv(command: readonly string[]): [string, string[]] {
  return [command[0] === 'node' ? process.execPath : command[0], command.slice(1)];
}

/** Runs a program to its end or its timeout (then SIGKILL to its whole process group). */
export function runProgram(command: readonly string[], o: ProgramOptions, track?: (kill: () => void) => void): Promise<ProgramExit> {
  return new Promise((done) => {
    const [file, args] = argv(command);
    let timedOut = false;
    let spawnError: string | null = null;
    const child = spawn(file, args, { cwd: o.cwd, env: { ...process.env, ...o.env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const kill = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL'); // the group is gone already, or was never made
      }
    };
    track?.(kill);
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, o.timeoutMs);
    createInterface({ input: child.stdout }).on('line', o.onStdout);
    createInterface({ input: child.stderr }).on('line', o.onStderr);
    child.on('error', (err) => {
      spawnError = err.message;
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      done({ code, signal, timedOut, spawnError });
    });
  });
}

function describeExit(x: ProgramExit, timeoutS: number): string {
  if (x.spawnError) return `could not start: ${x.spawnError}`;
  if (x.timedOut) return `killed after the timeout of ${timeoutS} s`;
  if (x.signal) return `killed by ${x.signal}`;
  return `exit code ${x.code}`;
}

/** Evaluation: the lab grades a posted answer against the gold aliases. */
function gradeAnswer(answer: string, golds: readonly string[]): boolean {
  return golds.some((g) => mathAnswersEqual(answer, g) || (normalizeQA(answer) !== '' && normalizeQA(answer) === normalizeQA(g)));
}

export class ExternalDriver implements RolloutDriver {
  private endpoint: ExternalEndpoint | null = null;
  private readonly config: ExternalConfig;
  private kill: (() => void) | null = null;
  private batches = 0;

  constructor(private readonly ctx: DriverContext) {
    this.config = resolveExternalConfig(ctx.config.workflow.options);
  }

  /** The endpoint, started on first use (kept for the run). */
  async start(): Promise<ExternalEndpoint> {
    this.endpoint ??= await ExternalEndpoint.start({
      policies: this.ctx.policies,
      roles: externalRoles(this.config),
      sampling: { obeyRequest: false, temperature: 1, topP: 1, maxNewTokens: this.ctx.config.rollout.maxNewTokens },
      concurrency: this.config.concurrency,
      windowMs: this.config.windowMs,
      maxRows: this.config.maxRows,
      enableThinking: this.ctx.config.workflow.enableThinking ?? undefined,
    });
    return this.endpoint;
  }

  async play(episodes: readonly Episode[], options: RolloutOptions, mode: RolloutMode, hooks?: PlayHooks): Promise<RolloutBatch> {
    const c = this.config;
    const logs: EpisodeLog[] = episodes.map((e) => {
      if (!(e instanceof ExternalEpisode)) throw new Error(`external rollout: episode ${e.id} is a "${e.workflow}" episode, not an external one`);
      const log = new EpisodeLog(e.id, urlIdOf(e.id), e.task, e.group);
      e.played = { done: () => log.finished, result: () => log.result(e.workflow).result };
      return log;
    });
    const seen = new Set<string>();
    for (const l of logs) {
      if (seen.has(l.urlId)) throw new Error(`external rollout: two episodes share the id "${l.urlId}" once made URL-safe`);
      seen.add(l.urlId);
    }
    const ep = await this.start();
    ep.sampling = { obeyRequest: false, temperature: options.temperature, topP: options.topP, maxNewTokens: options.maxNewTokens };
    ep.batcher.seed = options.seed;
    ep.mode = mode;
    ep.takeStats();
    const callsBefore = ep.batcher.calls.length;

    const dir = mkdtempSync(join(tmpdir(), 'srpo-external-'));
    const file = join(dir, 'episodes.jsonl');
    const withGold = mode === 'train' || c.evalGold;
    const lines = logs.map((l) =>
      JSON.stringify({
        episode: l.urlId,
        task: { id: l.task.id, question: l.task.question, ...(withGold ? { answer: l.task.answers[0] ?? '', answers: l.task.answers } : {}) },
        group: l.group,
        base_url: ep.episodeUrl(l),
      }),
    );
    writeFileSync(file, lines.join('\n') + '\n');
    const byId = new Map(logs.flatMap((l) => [[l.urlId, l] as const, [l.id, l] as const]));
    const batch = ++this.batches;
    const log = this.ctx.log ?? (() => {});
    const t0 = performance.now();
    for (const l of logs) l.openedAt = t0;
    ep.open(logs);
    let exit: ProgramExit;
    // The caller's poll (the engine: lease beat and stop request) runs while the program plays; a
    // throw kills the program and abandons the batch (the step is redone on resume).
    let interrupted: unknown = null;
    const poll = hooks?.poll
      ? setInterval(() => {
          try {
            hooks.poll!();
          } catch (err) {
            interrupted ??= err;
            this.kill?.();
          }
        }, POLL_MS)
      : null;
    try {
      const cwd = c.cwd ? (isAbsolute(c.cwd) ? c.cwd : resolve(this.ctx.baseDir, c.cwd)) : this.ctx.baseDir;
      exit = await runProgram(
        c.command,
        {
          cwd,
          env: { ...c.env, SRPO_LAB_EPISODES: file, SRPO_LAB_MODE: mode, OPENAI_BASE_URL: ep.rootUrl, OPENAI_API_KEY: ep.key },
          timeoutMs: c.timeoutS * 1000,
          onStdout: (line) => {
            if (!this.rewardLine(ep, byId, line)) log(`[agent ${mode} batch ${batch}] ${line}`);
          },
          onStderr: (line) => log(`[agent ${mode} batch ${batch} stderr] ${line}`, 'warn'),
        },
        (kill) => (this.kill = kill),
      );
    } finally {
      if (poll) clearInterval(poll);
      this.kill = null;
      ep.close(logs);
      rmSync(dir, { recursive: true, force: true });
    }
    if (interrupted !== null) throw interrupted;
    const wallMs = performance.now() - t0;
    const finished = logs.filter((l) => l.reward !== null);
    const failed = logs.length - finished.length;
    const why = describeExit(exit, c.timeoutS);
    if (failed > 0) log(`external ${mode} batch ${batch}: ${failed} of ${logs.length} episodes failed (no reward; the program: ${why})`, 'warn');
    if (finished.length === 0)
      throw new Error(`external workflow: no episode of the ${mode} batch finished (the program: ${why}); its output is in the run's log`);
    if (exit.code !== 0 && failed === 0) log(`external ${mode} batch ${batch}: the program ended with ${why} after every episode had its reward`, 'warn');

    if (mode === 'eval') {
      for (const l of finished) {
        const r = l.reward!;
        if (r.answer !== undefined && r.correct === undefined) r.correct = gradeAnswer(r.answer, l.task.answers);
        if (!r.rewardGiven) r.reward = r.correct ? 1 : 0;
      }
    }
    const kept = mode === 'train' ? finished : logs;
    const out: RolloutEpisode[] = kept.map((l) => {
      const { result, sampled, generatedTokens } = l.result(this.ctx.config.workflow.name);
      return { episode: episodes[logs.indexOf(l)], result, sampled, generatedTokens, latencyMs: l.reward ? l.latencyMs : wallMs, rollout: l.group };
    });
    const stats = ep.takeStats();
    // Taken out of the batcher's list, so a long run's record of sampler calls does not grow with every batch.
    const calls = ep.batcher.calls.splice(callsBefore);
    const lat = [...stats.latencyMs].sort((a, b) => a - b);
    const mean = (xs: number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
    return {
      episodes: out,
      rounds: calls.length,
      wallMs,
      samplerMs: calls.reduce((a, x) => a + x.ms, 0),
      metrics: {
        'external/failed_episodes': failed,
        'external/requests': stats.requests,
        'external/request_latency_ms': mean(lat),
        'external/request_latency_p95_ms': lat.length ? lat[Math.min(lat.length - 1, Math.floor(0.95 * lat.length))] : 0,
        'external/sampler_calls': calls.length,
        'external/rows_per_sampler_call': mean(calls.map((x) => x.rows)),
        'external/max_concurrent': stats.maxActive,
      },
    };
  }

  /** A stdout line `{"episode": id, "reward": r, ...}` is a reward; returns whether it was one. */
  private rewardLine(ep: ExternalEndpoint, byId: ReadonlyMap<string, EpisodeLog>, line: string): boolean {
    const t = line.trim();
    if (!t.startsWith('{') || !t.includes('"episode"')) return false;
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(t) as Record<string, unknown>;
    } catch {
      return false;
    }
    const { episode, ...rest } = body;
    const l = typeof episode === 'string' ? byId.get(episode) : undefined;
    if (!l) {
      this.ctx.log?.(`external: a reward line names no episode of this batch (${JSON.stringify(String(episode)).slice(0, 80)})`, 'warn');
      return true;
    }
    try {
      ep.postReward(l.urlId, rest);
    } catch (err) {
      this.ctx.log?.(`external: reward line of episode ${l.urlId} refused: ${err instanceof EndpointError ? err.message : String(err)}`, 'warn');
    }
    return true;
  }

  async dispose(): Promise<void> {
    this.kill?.();
    await this.endpoint?.dispose();
    this.endpoint = null;
  }
}
