/**
 * Rollout drivers: how a batch of a workflow's episodes is played, one entry per workflow in a
 * typed registry. The built-in workflows are state machines driven in lockstep by the
 * orchestrator (orchestrator.ts runRollouts, synchronous; the driver only wraps it in a promise,
 * so their batches are exactly what they were); the `external` workflow's episodes are played by
 * the researcher's program through the endpoint (external.ts, asynchronous). The trainer and its
 * evaluation await `play` either way.
 *
 * Not here: what a batch is used for (src/core/train). Tests: test/core/train/trainer.test.ts
 * (built-in, unchanged results), test/external/*.test.ts (external).
 */
import type { RunConfig } from '../config';
import type { Policies } from '../policies/types';
import type { WorkflowName } from '../workflows/registry';
import type { Episode } from '../workflows/types';
import { ExternalDriver } from './external';
import { runRollouts, type RolloutBatch, type RolloutOptions } from './orchestrator';

/** A training batch or an evaluation batch (the external program is told which). */
export type RolloutMode = 'train' | 'eval';

/** What the caller may do while a batch plays. */
export interface PlayHooks {
  /** Called now and then while an asynchronous batch plays; a throw abandons the batch (the program is killed). */
  poll?: () => void;
}

export interface RolloutDriver {
  play(episodes: readonly Episode[], options: RolloutOptions, mode: RolloutMode, hooks?: PlayHooks): Promise<RolloutBatch>;
  /** Ends whatever the driver keeps for the run (a program, a server). */
  dispose(): Promise<void>;
}

export interface DriverContext {
  config: RunConfig;
  policies: Policies;
  /** What relative paths of the workflow's options resolve against (the lab's root). */
  baseDir: string;
  /** The run's log. */
  log?: (line: string, level?: 'info' | 'warn' | 'error') => void;
}

/** The built-in workflows: the lockstep orchestrator, synchronous inside. */
export class LockstepDriver implements RolloutDriver {
  constructor(private readonly policies: Policies) {}
  play(episodes: readonly Episode[], options: RolloutOptions): Promise<RolloutBatch> {
    return Promise.resolve(runRollouts(episodes, { policies: this.policies }, options));
  }
  dispose(): Promise<void> {
    return Promise.resolve();
  }
}

const lockstep = (ctx: DriverContext): RolloutDriver => new LockstepDriver(ctx.policies);

export const ROLLOUT_DRIVERS = {
  math: lockstep,
  search: lockstep,
  single: lockstep,
  external: (ctx) => new ExternalDriver(ctx),
} satisfies Record<WorkflowName, (ctx: DriverContext) => RolloutDriver>;

export function rolloutDriver(ctx: DriverContext): RolloutDriver {
  return ROLLOUT_DRIVERS[ctx.config.workflow.name](ctx);
}
