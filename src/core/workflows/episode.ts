/**
 * What every workflow episode shares: ids (events `<episode>/e<n>`, states `<episode>/s<n>`),
 * the pending active set, recording each submitted set as one event with its members' parse
 * results and penalties, and at the end the team reward and each event's R_e (team reward
 * minus that event's invalid-action penalties, SRPO.md point 2).
 *
 * A workflow subclasses `EpisodeBase`: it calls `request(...)` to ask for the next set and
 * implements `advance(event)` to move its own state machine. Not here: any workflow's logic.
 */
import type { InstructionName } from './prompts';
import type { ActiveSetRequest, PolicyRole, Episode, EpisodeResult, EventKind, EventRecord, MemberRecord, ParseResult, WorkflowTask } from './types';

export interface MemberSpec {
  role: PolicyRole;
  agent: string;
  instruction: InstructionName;
  prompt: string;
  parse: (output: string) => ParseResult;
}

export abstract class EpisodeBase implements Episode {
  private readonly events: EventRecord[] = [];
  private pendingSet: (ActiveSetRequest & { parsers: ((o: string) => ParseResult)[] }) | null = null;
  private stateCounter = 0;
  private finished = false;
  private finalAnswer: string | null = null;
  private score = 0;
  private termination: EpisodeResult['termination'] = 'no-answer';

  protected constructor(
    readonly id: string,
    readonly task: WorkflowTask,
    readonly workflow: string,
    /** Charged once per invalid member output. */
    protected readonly invalidPenalty: number,
  ) {}

  get done(): boolean {
    return this.finished;
  }

  pending(): ActiveSetRequest | null {
    if (!this.pendingSet) return null;
    const { parsers: _parsers, ...req } = this.pendingSet;
    return req;
  }

  submit(outputs: readonly string[]): void {
    const p = this.pendingSet;
    if (!p) throw new Error(`episode ${this.id}: no pending active set (done: ${this.finished})`);
    if (outputs.length !== p.expectedK) {
      throw new Error(`episode ${this.id}, event ${p.eventId}: expected ${p.expectedK} outputs, got ${outputs.length}`);
    }
    const members: MemberRecord[] = p.members.map((m, j) => {
      const output = typeof outputs[j] === 'string' ? outputs[j] : '';
      let parse: ParseResult;
      try {
        parse = p.parsers[j](output);
      } catch (e) {
        parse = { valid: false, error: `parser error: ${(e as Error).message}` }; // parsers are total; belt and braces
      }
      return { ...m, output, parse, penalty: parse.valid ? 0 : this.invalidPenalty };
    });
    const event: EventRecord = {
      episodeId: this.id,
      eventId: p.eventId,
      stateId: p.stateId,
      kind: p.kind,
      groupKey: p.groupKey,
      expectedK: p.expectedK,
      index: this.events.length,
      members,
      toolCalls: 0,
      reward: null,
    };
    this.events.push(event);
    this.pendingSet = null;
    this.stateCounter++; // the event changed the shared state
    this.advance(event);
    if (!this.pendingSet && !this.finished) this.finish(null, 'no-answer'); // a workflow that asks for nothing is over
  }

  result(): EpisodeResult {
    return {
      episodeId: this.id,
      taskId: this.task.id,
      workflow: this.workflow,
      finalAnswer: this.finalAnswer,
      score: this.score,
      correct: this.finished && this.score >= 1,
      teamReward: this.score,
      termination: this.termination,
      events: this.events.map((e) => ({ ...e, members: e.members.map((m) => ({ ...m })) })),
      calls: this.events.reduce((s, e) => s + e.expectedK, 0),
      toolCalls: this.events.reduce((s, e) => s + e.toolCalls, 0),
      invalidActions: this.events.reduce((s, e) => s + e.members.filter((m) => !m.parse.valid).length, 0),
    };
  }

  /** Ask for the next active set (one member spec per member, in member order). */
  protected request(kind: EventKind, members: MemberSpec[]): void {
    if (this.finished) throw new Error(`episode ${this.id} is over`);
    if (members.length === 0) throw new Error(`episode ${this.id}: an active set needs at least one member`);
    const n = this.events.length;
    this.pendingSet = {
      episodeId: this.id,
      eventId: `${this.id}/e${n}`,
      stateId: `${this.id}/s${this.stateCounter}`,
      kind,
      groupKey: `${this.task.id}/${kind}`,
      expectedK: members.length,
      members: members.map((m, j) => ({ memberIndex: j, role: m.role, agent: m.agent, instruction: m.instruction, prompt: m.prompt })),
      parsers: members.map((m) => m.parse),
    };
  }

  /** Record tool calls caused by the latest event and the state change they make. */
  protected recordToolCalls(event: EventRecord, count: number): void {
    event.toolCalls += count;
    if (count > 0) this.stateCounter++; // observations merged into the shared state
  }

  /** End the episode with a score in [0, 1]; assigns every event's R_e. */
  protected finish(finalAnswer: string | null, termination: EpisodeResult['termination'], score = 0): void {
    this.finished = true;
    this.pendingSet = null;
    this.finalAnswer = finalAnswer;
    this.termination = termination;
    this.score = finalAnswer === null ? 0 : score;
    for (const e of this.events) e.reward = this.score - e.members.reduce((s, m) => s + m.penalty, 0);
  }

  /** Move the state machine after `event` was recorded: call request() or finish(). */
  protected abstract advance(event: EventRecord): void;
}
