/**
 * The workflow interface an orchestrator drives (the design card's ARCHITECTURE.md, "The event").
 *
 * A workflow episode is a state machine. `pending()` says which active set it needs next: one
 * event id, its pre-action state id, its kind and group key, the expected cardinality K and
 * one generation request (role, agent, prompt) per member. `submit(outputs)` accepts the K
 * outputs of that set together, parses each (parsers never throw), records the event and
 * advances. Many episodes can therefore be driven in lockstep: collect `pending()` of every
 * live episode, batch all members' prompts into one generation call, then `submit` each
 * episode's slice. Tool calls (retrieval) happen synchronously inside `submit`.
 *
 * Not here: sampling, token ids, log-probs (the orchestrator adds them to each member row),
 * advantages (src/core/srpo).
 */
import type { TaskSplit } from '../data/tasks/types';
import type { InstructionName } from './prompts';

export const EVENT_KINDS = ['router', 'solve', 'verify', 'revise', 'aggregate', 'search', 'answer'] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/**
 * Policy roles: the agents of paper appendix B (a revision is written by a solver, the search
 * router and evidence verifier are the router and verifier roles, the single-agent baseline is
 * a solver for math and an answerer for QA). Same list as the tokenizer's role markers in
 * src/core/models/tokenizer.ts (a test keeps them equal); a per-role policy set keys on it.
 */
export const POLICY_ROLES = ['router', 'solver', 'verifier', 'aggregator', 'searcher', 'answerer'] as const;
export type PolicyRole = (typeof POLICY_ROLES)[number];

/** Parser state of one member output: a value, or why the output is invalid. */
export type ParseResult<T = unknown> = { valid: true; value: T } | { valid: false; error: string };

/** A query a workflow can run: a dataset row or a generated task. */
export interface WorkflowTask {
  id: string;
  question: string;
  /** Gold answers (aliases for QA); graded by src/core/eval. */
  answers: string[];
  benchmark?: string;
  split?: TaskSplit;
  meta?: Record<string, unknown>;
}

/** One member's generation request inside an active set. */
export interface MemberRequest {
  /** 0 .. K-1 inside the event. */
  memberIndex: number;
  /** The policy role that generates it (POLICY_ROLES). */
  role: PolicyRole;
  /** Which agent plays it (`solver#1`, `searcher#2`, `reviser`): for per-agent policies and traces. */
  agent: string;
  /** The prompt template used (prompts.ts INSTRUCTIONS key, e.g. `search_router`): says which output format is expected. */
  instruction: InstructionName;
  /** Full prompt text: task observation + visible team context + role instruction. */
  prompt: string;
}

/** The next active set an episode needs: all members sampled from the same pre-action state. */
export interface ActiveSetRequest {
  episodeId: string;
  /** Unique within the run when episode ids are: `<episodeId>/e<n>`. */
  eventId: string;
  /** The pre-action state every member sees: `<episodeId>/s<n>`. */
  stateId: string;
  kind: EventKind;
  /** Comparable events share it: task id + event kind (SRPO.md, point 6). */
  groupKey: string;
  /** K_e: how many member outputs complete this event. */
  expectedK: number;
  members: MemberRequest[];
}

export interface MemberRecord extends MemberRequest {
  output: string;
  parse: ParseResult;
  /** Invalid-action penalty charged to this member's event (0 when valid). */
  penalty: number;
}

export interface EventRecord {
  episodeId: string;
  eventId: string;
  stateId: string;
  kind: EventKind;
  groupKey: string;
  expectedK: number;
  /** 0-based position of the event in its episode. */
  index: number;
  members: MemberRecord[];
  /** Tool calls (retrievals) this event caused. */
  toolCalls: number;
  /** R_e: team reward minus this event's penalties; null until the episode is over. */
  reward: number | null;
}

export interface EpisodeResult {
  episodeId: string;
  taskId: string;
  workflow: string;
  /** The scored answer (from generated text only), or null when none was produced. */
  finalAnswer: string | null;
  /** Grader score in [0, 1]: 0/1 for math, EM or F1 for QA (per config). */
  score: number;
  correct: boolean;
  /** The episode's team reward (the score). */
  teamReward: number;
  /** How the episode ended. */
  termination: 'answered' | 'no-answer' | 'max-loops' | 'max-turns';
  events: EventRecord[];
  /** C_call: sum over events of K_e. */
  calls: number;
  /** C_tool. */
  toolCalls: number;
  invalidActions: number;
}

export interface Episode {
  readonly id: string;
  readonly task: WorkflowTask;
  readonly workflow: string;
  /** The active set to generate next, or null once the episode is over. */
  pending(): ActiveSetRequest | null;
  /**
   * Outputs of the pending set, one per member in memberIndex order. Throws only on misuse by
   * the caller (no pending set, wrong count); malformed policy text is never an error here.
   */
  submit(outputs: readonly string[]): void;
  readonly done: boolean;
  /** Events so far and, once done, the score and per-event rewards. */
  result(): EpisodeResult;
}

/** Tools a workflow may call; the search workflow needs `search`. */
export interface WorkflowTools {
  search?: { search(query: string, k: number): { id: string; title: string; text: string }[] };
}

export interface EpisodeOptions {
  /** Unique id of the episode within the run (event ids derive from it). */
  episodeId: string;
  /** Workflow configuration (validated; defaults filled). */
  config?: unknown;
  tools?: WorkflowTools;
  /** Seed for anything random inside the workflow (mixed K); default the episode id. */
  seed?: string | number;
}

export interface Workflow {
  description: string;
  /** Policy roles that can appear in this workflow's events. */
  roles: readonly PolicyRole[];
  kinds: readonly EventKind[];
  /** Task domains it accepts. */
  domains: readonly ('math' | 'qa')[];
  /** Validate a configuration and fill defaults; throws naming the field. */
  resolveConfig(input: unknown): unknown;
  createEpisode(task: WorkflowTask, options: EpisodeOptions): Episode;
}
