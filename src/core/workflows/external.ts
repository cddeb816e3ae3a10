/**
 * The `external` workflow: the episodes are played by the researcher's own agent program, which
 * the lab starts once per rollout or evaluation batch and which calls the lab's OpenAI-compatible
 * endpoint (src/core/external, docs/EXTERNAL_AGENTS.md). This file holds the workflow's options
 * and its episodes; the episodes are not driven through `pending()` / `submit()` (they ask for
 * nothing: the program decides what to call) but by the async rollout driver
 * (src/core/rollout/external.ts), which records each call into the episode's log.
 *
 * Role names (decision): `roles` lists the names a program may use as `model`. A name that is
 * a policy role (router, solver, verifier, aggregator, searcher, answerer) is played by that
 * role's policy; any other name must be mapped onto one with `plays: { name: policyRole }`.
 * With a shared policy the policy role only picks the lab models' role marker (other chat
 * templates read none); with `policies.sharing: per-role` it picks the adapter (or model) that answers,
 * so two names mapped onto one policy role train one policy. Policy roles stay the fixed list
 * of the lab's tokenizer markers (types.ts POLICY_ROLES).
 *
 * Tests: test/external/*.test.ts.
 */
import { z } from 'zod';
import { resolveWith } from './config';
import {
  POLICY_ROLES,
  type ActiveSetRequest,
  type EventKind,
  type Episode,
  type EpisodeOptions,
  type EpisodeResult,
  type Workflow,
  type WorkflowTask,
} from './types';

const roleName = z.string().regex(/^[A-Za-z0-9_.-]{1,40}$/, 'letters, digits and _ . - only, 1 to 40 characters');

export const externalConfigSchema = z
  .object({
    command: z
      .array(z.string().min(1))
      .min(1)
      .describe('The agent program as argv (no shell), started once per batch; a first word "node" runs the lab\'s own Node.'),
    cwd: z.string().min(1).optional().describe("The program's working directory (relative: to the lab's root). Default the lab's root."),
    env: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'), z.string())
      .describe('Extra environment variables for the program.')
      .default({}),
    roles: z.array(roleName).min(1).describe('Role names the program may use as `model`, at least one.'),
    plays: z.record(roleName, z.enum(POLICY_ROLES)).describe('The policy role that plays each role name that is not itself a policy role.').default({}),
    timeoutS: z
      .number()
      .positive()
      .max(86_400)
      .describe('Seconds a batch may run before the program is killed (its unfinished episodes fail). Default 900.')
      .default(900),
    concurrency: z.number().int().min(1).max(4096).describe('Requests sampled at once at most; the rest wait in arrival order. Default 256.').default(256),
    windowMs: z
      .number()
      .min(0)
      .max(1000)
      .describe('Collection window: requests are sampled together once none has arrived for this long (ms; at most 10 windows after the first). Default 5.')
      .default(5),
    maxRows: z.number().int().min(1).max(1024).describe('Rows per batched sampler call at most. Default 128.').default(128),
    evalGold: z
      .boolean()
      .describe('Evaluation lines carry the gold answers too (the program grades itself). Default false: the lab grades the posted answer.')
      .default(false),
  })
  .strict()
  .superRefine((c, ctx) => {
    c.roles.forEach((name, i) => {
      if (!(POLICY_ROLES as readonly string[]).includes(name) && !Object.hasOwn(c.plays, name)) {
        ctx.addIssue({ code: 'custom', path: ['roles', i], message: `"${name}" is not a policy role (${POLICY_ROLES.join(', ')}): map it in plays` });
      }
      if (c.roles.indexOf(name) !== i) ctx.addIssue({ code: 'custom', path: ['roles', i], message: `"${name}" is listed twice` });
    });
    for (const name of Object.keys(c.plays)) {
      if (!c.roles.includes(name)) ctx.addIssue({ code: 'custom', path: ['plays', name], message: `"${name}" is not one of roles` });
    }
  });
export type ExternalConfig = z.output<typeof externalConfigSchema>;

export function resolveExternalConfig(input: unknown): ExternalConfig {
  return resolveWith('external workflow config', externalConfigSchema, input);
}

/** The policy role of each role name. */
export function externalRoles(c: ExternalConfig): { name: string; policyRole: (typeof POLICY_ROLES)[number] }[] {
  return c.roles.map((name) => ({ name, policyRole: c.plays[name] ?? (name as (typeof POLICY_ROLES)[number]) }));
}

/** What the rollout driver attaches to an external episode: the log the endpoint records into. */
export interface PlayedExternal {
  done(): boolean;
  result(): EpisodeResult;
}

/**
 * An episode the program plays. It holds only its task and place in its group; the rollout driver
 * (rollout/external.ts) attaches the endpoint's log of it (`played`) when its batch starts, so this
 * file needs nothing of src/core/external (which builds on the workflow types).
 */
export class ExternalEpisode implements Episode {
  readonly workflow = 'external';
  /** Index within its group of G rollouts (the episode id's `/g<n>`). */
  readonly group: number;
  played: PlayedExternal | null = null;

  constructor(
    readonly id: string,
    readonly task: WorkflowTask,
  ) {
    const g = /\/g(\d+)$/.exec(id);
    this.group = g ? Number(g[1]) : 0;
  }

  /** The program decides its calls: nothing is ever pending here. */
  pending(): ActiveSetRequest | null {
    return null;
  }

  submit(): void {
    throw new Error(`episode ${this.id}: an external episode is played by its program, not submitted to (use the external rollout driver)`);
  }

  get done(): boolean {
    return this.played?.done() ?? false;
  }

  /** The recorded events and reward once played; before, an episode with nothing in it. */
  result(): EpisodeResult {
    if (this.played) return this.played.result();
    return {
      episodeId: this.id,
      taskId: this.task.id,
      workflow: this.workflow,
      finalAnswer: null,
      score: 0,
      correct: false,
      teamReward: 0,
      termination: 'no-answer',
      events: [],
      calls: 0,
      toolCalls: 0,
      invalidActions: 0,
    };
  }
}

/** The event kind of each policy role's events (the built-in workflows' kinds; src/core/external/episodeLog.ts ROLE_EVENT uses these). */
export const EXTERNAL_KIND_OF_ROLE = {
  router: 'router',
  solver: 'solve',
  verifier: 'verify',
  aggregator: 'aggregate',
  searcher: 'search',
  answerer: 'answer',
} satisfies Record<(typeof POLICY_ROLES)[number], EventKind>;

export const externalWorkflow: Workflow = {
  description: "your own agent program, calling the lab's OpenAI-compatible endpoint (docs/EXTERNAL_AGENTS.md)",
  roles: POLICY_ROLES,
  // An event's kind is its policy role's built-in kind: never `revise`.
  kinds: POLICY_ROLES.map((r) => EXTERNAL_KIND_OF_ROLE[r]),
  domains: ['math', 'qa'],
  resolveConfig: resolveExternalConfig,
  createEpisode: (task: WorkflowTask, options: EpisodeOptions) => {
    resolveExternalConfig(options.config);
    return new ExternalEpisode(options.episodeId, task);
  },
};
