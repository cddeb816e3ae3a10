/**
 * Plain-data types of the SRPO objective library: the batch a caller hands in, the prepared
 * (validated, grouped, advantage-assigned) batch the math works on, and the report it returns.
 *
 * Vocabulary (the design card ../shared/design/ARCHITECTURE.md, "The event"): one event = one environment transition = one
 * active set of K >= 1 member outputs sampled from the same pre-action state. Members carry
 * per-token log-probs of their generated tokens and a loss mask (1 on generated tokens, 0 on
 * padding and environment text). No tfjs here: this file is browser- and test-safe.
 */
import type { Grouping } from './config';

/** One event of a plain-data batch. */
export interface BatchEvent {
  /** Unique id of the event within the batch. */
  id: string;
  /** Group key of comparable events (same task prompt and same event kind); SRPO.md point 6. */
  group: string;
  /** Downstream team return of the event's episode minus its members' invalid-action penalties. */
  reward: number;
  /** Expected cardinality K of the active set (integer >= 1); fewer or more members drop it. */
  expectedK: number;
  /**
   * The task prompt the event's trajectory answers (its task id): the comparison scope of the
   * trajectory and agent groupings. Optional; default: the event's `group`.
   */
  prompt?: string;
  /** Id of the trajectory (episode) the event belongs to. Optional; default: the event's own id. */
  trajectory?: string;
}

/** One member output of an event. The three arrays are per generated token and equally long. */
export interface BatchMember {
  /** Id of the event this member belongs to. */
  event: string;
  /** Agent role that produced it (router, solver, verifier …); the agent of the agent grouping. */
  role: string;
  /** log pi_cur(token), nats, one per token. */
  logpCur: number[];
  /** log pi_old(token) (behaviour policy), nats, one per token. */
  logpOld: number[];
  /** Loss mask, 0 or 1 per token. */
  mask: number[];
}

export interface ObjectiveBatch {
  events: BatchEvent[];
  members: BatchMember[];
}

/** Why an event did not enter the objective. */
export interface DroppedEvent {
  id: string;
  expectedK: number;
  memberCount: number;
  reason: string;
}

/** A complete event after validation, with its advantage. Float64 throughout. */
export interface PreparedEvent {
  id: string;
  group: string;
  /** Prompt key (the input's `prompt`, or its group). */
  prompt: string;
  /** Trajectory key (the input's `trajectory`, or the event id). */
  trajectory: string;
  reward: number;
  /** Cardinality K_e (= expectedK = number of members). */
  k: number;
  /** Indices into PreparedBatch.members, in input order. */
  members: number[];
  /** Event length n_e = sum of member lengths (masked tokens). */
  length: number;
  /** Advantage A_e of the configured grouping (agent grouping: the mean of its members'). */
  advantage: number;
}

/** A member of a complete event. */
export interface PreparedMember {
  /** Index into PreparedBatch.events. */
  event: number;
  /** Index of this member in the input batch's `members` (rows are regrouped by event). */
  source: number;
  role: string;
  logpCur: number[];
  logpOld: number[];
  mask: number[];
  /** Member length n_{e,j} = sum of the mask. */
  length: number;
  /** Advantage this member's tokens are weighted with: A_e, or its own under the agent grouping. */
  advantage: number;
}

/** Counts describing the comparison groups of the batch's grouping (units: events, trajectories or members). */
export interface GroupStats {
  /** Number of groups. */
  count: number;
  /** Groups with a single unit (advantage 0). */
  singleton: number;
  /** Groups with >= 2 units whose rewards are all equal (std 0, advantages 0). */
  zeroStd: number;
}

export interface PreparedBatch {
  /** The advantage grouping that was applied. */
  grouping: Grouping;
  events: PreparedEvent[];
  members: PreparedMember[];
  dropped: DroppedEvent[];
  groups: GroupStats;
  /** Longest member (token slots), at least 1: the padded width T of the tensors. */
  maxLength: number;
}

/** Per-event figures in a report. Ratio fields only for variants whose ratio is per event. */
export interface EventReport {
  id: string;
  advantage: number;
  /** Set log-ratio L_e after the ±20 clamp (nats). */
  logRatio?: number;
  /** rho_e = exp(L_e). */
  ratio?: number;
  /** Whether the clip was active for this event, and on which side. */
  clipped?: false | 'low' | 'high';
}

export interface ObjectiveReport {
  /** The value minimised: minus the objective J. */
  loss: number;
  /** The advantage grouping used (the algorithm's default unless configured). */
  grouping: Grouping;
  completeEvents: number;
  droppedEvents: number;
  events: EventReport[];
  /** Slash-namespaced diagnostics (SRPO.md, "Diagnostics"). */
  metrics: Record<string, number>;
}
