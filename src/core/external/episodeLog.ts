/**
 * What the endpoint records for one episode of an external batch, and how those records become
 * the workflow result the trainer already consumes (workflows/types.ts EpisodeResult, with the
 * orchestrator's per-member SampledMember beside it).
 *
 * Events from calls (docs/EXTERNAL_AGENTS.md, "Events"): the calls of one episode that carry the
 * same tag (`srpo_event` in the body, or an `X-SRPO-Event` header) form ONE event, an active set
 * whose members are every choice of every such call in arrival order (K = their number); an
 * untagged call is an event of its own named `<role>#<n>` (n counts that role's untagged calls of
 * the episode from 0). Events are ordered by their first call. Comparable events across the
 * episodes of a group share a group key `<task id>/<tag or name>` (the `event` grouping); the
 * event kind is the kind the built-in workflows give the policy role (solver: solve, ...), so
 * per-kind reports read the same.
 *
 * Rewards: the team reward (`/reward` `{reward}` or a stdout line), optionally per-event rewards
 * by tag or name that replace the team reward for those events. `correct` defaults to reward >= 1,
 * as the built-in graders' scores. Every member is a valid action (the program parses its own
 * outputs): no invalid-action penalty.
 *
 * Not here: HTTP (server.ts), the program (rollout/external.ts). Tests: test/external/*.test.ts.
 */
import type { SampledMember } from '../policies/types';
import type { EpisodeResult, EventKind, EventRecord, MemberRecord, PolicyRole, WorkflowTask } from '../workflows/types';
import type { InstructionName } from '../workflows/prompts';
import { EXTERNAL_KIND_OF_ROLE } from '../workflows/external';

/** The event kind (the external workflow's, workflows/external.ts) and prompt-template name the built-in workflows use for each policy role. */
export const ROLE_EVENT = {
  router: { kind: EXTERNAL_KIND_OF_ROLE.router, instruction: 'router' },
  solver: { kind: EXTERNAL_KIND_OF_ROLE.solver, instruction: 'solver' },
  verifier: { kind: EXTERNAL_KIND_OF_ROLE.verifier, instruction: 'verifier' },
  aggregator: { kind: EXTERNAL_KIND_OF_ROLE.aggregator, instruction: 'aggregator' },
  searcher: { kind: EXTERNAL_KIND_OF_ROLE.searcher, instruction: 'searcher' },
  answerer: { kind: EXTERNAL_KIND_OF_ROLE.answerer, instruction: 'answerer' },
} satisfies Record<PolicyRole, { kind: EventKind; instruction: InstructionName }>;

/** One recorded choice of a call. */
export interface RecordedChoice {
  output: string;
  sample: SampledMember;
}

/** One recorded call (a chat or completion request and its choices). */
export interface RecordedCall {
  /** The role name the request gave as `model`. */
  role: string;
  policyRole: PolicyRole;
  tag: string | null;
  /** The text the prompt ids were rendered from (the trace viewer shows it). */
  prompt: string;
  /** The temperature the request asked for (recorded; training samples at the run's). */
  requestedTemperature: number | null;
  choices: RecordedChoice[];
}

export interface EpisodeReward {
  reward: number;
  /** Whether the program gave `reward` (evaluation: an answer alone is graded, reward = correct). */
  rewardGiven: boolean;
  events?: Record<string, number>;
  answer?: string;
  correct?: boolean;
}

export class EpisodeLog {
  readonly calls: RecordedCall[] = [];
  reward: EpisodeReward | null = null;
  /** Set once the episode can take no more calls (reward posted, or its batch ended). */
  finished = false;
  /** When its batch opened it (performance.now(), ms). */
  openedAt = 0;
  /** Wall time from the batch's start to the reward (ms). */
  latencyMs = 0;

  constructor(
    readonly id: string,
    /** The id in URLs and in the episodes file: the episode id with characters outside [A-Za-z0-9._-] replaced. */
    readonly urlId: string,
    readonly task: WorkflowTask,
    readonly group: number,
  ) {}

  /** Records a served call; returns the event name it joined. */
  record(call: RecordedCall): string {
    this.calls.push(call);
    return this.eventNames().at(-1)!;
  }

  /** The event name of each recorded call, in call order. */
  eventNames(): string[] {
    const untagged = new Map<string, number>();
    return this.calls.map((c) => {
      if (c.tag !== null) return c.tag;
      const n = untagged.get(c.role) ?? 0;
      untagged.set(c.role, n + 1);
      return `${c.role}#${n}`;
    });
  }

  /** The workflow result and sampled detail, once the reward is in. */
  result(workflow: string): { result: EpisodeResult; sampled: Map<string, SampledMember>; generatedTokens: number } {
    const r = this.reward;
    const team = r?.reward ?? 0;
    const names = this.eventNames();
    const order: string[] = [];
    const byName = new Map<string, RecordedCall[]>();
    this.calls.forEach((c, i) => {
      const list = byName.get(names[i]);
      if (list) list.push(c);
      else {
        byName.set(names[i], [c]);
        order.push(names[i]);
      }
    });
    const sampled = new Map<string, SampledMember>();
    let generatedTokens = 0;
    const events: EventRecord[] = order.map((name, index) => {
      const calls = byName.get(name)!;
      const eventId = `${this.id}/${name}`;
      const members: MemberRecord[] = calls
        .flatMap((c) => c.choices.map((ch) => ({ c, ch })))
        .map(({ c, ch }, memberIndex) => {
          sampled.set(`${eventId}#${memberIndex}`, ch.sample);
          generatedTokens += ch.sample.outputTokens.length;
          return {
            memberIndex,
            role: c.policyRole,
            agent: c.role,
            instruction: ROLE_EVENT[c.policyRole].instruction,
            prompt: c.prompt,
            output: ch.output,
            parse: { valid: true, value: ch.output },
            penalty: 0,
          };
        });
      return {
        episodeId: this.id,
        eventId,
        stateId: `${this.id}/s${index}`,
        kind: ROLE_EVENT[calls[0].policyRole].kind,
        groupKey: `${this.task.id}/${name}`,
        expectedK: members.length,
        index,
        members,
        toolCalls: 0,
        reward: r ? (r.events?.[name] ?? team) : null,
      };
    });
    const correct = r ? (r.correct ?? team >= 1) : false;
    return {
      result: {
        episodeId: this.id,
        taskId: this.task.id,
        workflow,
        finalAnswer: r?.answer ?? null,
        score: correct ? 1 : 0,
        correct,
        teamReward: team,
        termination: r ? 'answered' : 'no-answer',
        events,
        calls: events.reduce((s, e) => s + e.expectedK, 0),
        toolCalls: 0,
        invalidActions: 0,
      },
      sampled,
      generatedTokens,
    };
  }
}

/** A URL- and file-safe form of an episode id (ids are unique within a batch; the caller checks). */
export function urlIdOf(episodeId: string): string {
  return episodeId.replace(/[^A-Za-z0-9._-]/g, '.');
}
