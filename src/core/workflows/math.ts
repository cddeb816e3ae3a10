/**
 * The math workflow (paper section 5.1, appendix B.1, E.2): an optional router decides how many
 * solvers run (fixed or mixed K bypass it); K solvers propose boxed solutions as one active
 * set; a verifier (singleton) emits exactly one verdict, accept or revise; a revision
 * (singleton, written by the solver role with the reviser instruction; appendix B has no
 * reviser agent) happens only on a valid "revise"; an aggregator (singleton) emits the final boxed
 * answer, which is scored. At most `maxLoops` verify/revise rounds.
 *
 * State machine (each arrow is one event):
 *   [router] -> solve(K) -> verify --accept / invalid--> aggregate -> done
 *                              \--revise--> revise (before-aggregate)  -> verify again while loops remain, else done
 *                              \--revise--> aggregate -> revise (after-aggregate) -> same
 * With maxLoops = 1 the revision is terminal and its boxed answer is scored: this reproduces
 * both math traces of appendix E (before-aggregate: K = 2, 1, 1; after-aggregate: 3, 1, 1, 1).
 * A router output that does not parse consumes a loop and the router is asked again; when no
 * loop is left the episode ends unanswered. An invalid verdict requests no revision.
 * Tested by test/core/workflows/workflows.test.ts.
 */
import { z } from 'zod';
import { mathAnswersEqual } from '../eval';
import { createRng, type Rng } from '../data/prng';
import { cardinalitySchema, invalidPenaltySchema, resolveWith } from './config';
import { EpisodeBase } from './episode';
import { parseBoxedAnswer, parseMathVerdict, parseSolverCount } from './parsers';
import { INSTRUCTIONS, assemblePrompt, type ContextEntry } from './prompts';
import type { EpisodeOptions, EventRecord, Workflow, WorkflowTask } from './types';

export const mathConfigSchema = z
  .object({
    solvers: cardinalitySchema
      .describe('How many solvers form the proposal set: fixed K, mixed (drawn per episode) or router-chosen.')
      .default({ mode: 'fixed', k: 2 }),
    maxLoops: z.number().int().min(1).max(8).describe('Most verify/revise rounds (and router retries); 1..8.').default(1),
    revisionOrder: z
      .enum(['before-aggregate', 'after-aggregate'])
      .describe("Revise the candidate pool before aggregation, or the aggregator's selection after it.")
      .default('before-aggregate'),
    invalidPenalty: invalidPenaltySchema,
  })
  .strict();
export type MathConfig = z.output<typeof mathConfigSchema>;

export function resolveMathConfig(input: unknown): MathConfig {
  return resolveWith('math workflow config', mathConfigSchema, input);
}

/** Score a math answer against every gold alias. */
export function scoreMath(answer: string, task: WorkflowTask): number {
  return task.answers.some((g) => mathAnswersEqual(answer, g)) ? 1 : 0;
}

class MathEpisode extends EpisodeBase {
  private loop = 1;
  private readonly context: ContextEntry[] = [];
  private reviseAfterAggregate = false;
  private readonly rng: Rng;

  constructor(
    task: WorkflowTask,
    private readonly config: MathConfig,
    options: EpisodeOptions,
  ) {
    super(options.episodeId, task, 'math', config.invalidPenalty);
    this.rng = createRng(options.seed ?? options.episodeId);
    const s = config.solvers;
    if (s.mode === 'router') this.requestRouter();
    else this.requestSolve(s.mode === 'fixed' ? s.k : this.rng.pick(s.ks));
  }

  private observation(): string {
    return `Problem: ${this.task.question}`;
  }

  /** A singleton event. The revision is written by a solver (the paper has no reviser agent). */
  private single(instruction: 'verifier' | 'reviser' | 'aggregator', kind: 'verify' | 'revise' | 'aggregate'): void {
    const parse = instruction === 'verifier' ? parseMathVerdict : parseBoxedAnswer;
    const role = instruction === 'reviser' ? 'solver' : instruction;
    const prompt = assemblePrompt(this.observation(), this.context, INSTRUCTIONS[instruction]());
    this.request(kind, [{ role, agent: instruction, instruction, prompt, parse }]);
  }

  private requestRouter(): void {
    const maxK = this.config.solvers.mode === 'router' ? this.config.solvers.maxK : 1;
    this.request('router', [
      {
        role: 'router',
        agent: 'router',
        instruction: 'router',
        prompt: assemblePrompt(this.observation(), [], INSTRUCTIONS.router({ k: maxK })),
        parse: (o) => parseSolverCount(o, maxK),
      },
    ]);
  }

  private requestSolve(k: number): void {
    // Every solver sees the same pre-action state: the problem, and no other solver's output.
    this.request(
      'solve',
      Array.from({ length: k }, (_, j) => ({
        role: 'solver',
        agent: `solver#${j}`,
        instruction: 'solver',
        prompt: assemblePrompt(this.observation(), this.context, INSTRUCTIONS.solver({ index: j })),
        parse: parseBoxedAnswer,
      })),
    );
  }

  private finishWith(answerText: string | null): void {
    if (answerText === null) this.finish(null, 'no-answer');
    else this.finish(answerText, 'answered', scoreMath(answerText, this.task));
  }

  protected advance(event: EventRecord): void {
    const m0 = event.members[0];
    switch (event.kind) {
      case 'router': {
        if (m0.parse.valid) this.requestSolve(m0.parse.value as number);
        else if (this.loop < this.config.maxLoops) {
          this.loop++;
          this.requestRouter();
        } else this.finish(null, 'max-loops');
        return;
      }
      case 'solve':
        for (const m of event.members) this.context.push({ label: `Solver ${m.memberIndex}`, text: m.output });
        this.single('verifier', 'verify');
        return;
      case 'verify': {
        this.context.push({ label: 'Verifier', text: m0.output });
        const revise = m0.parse.valid && m0.parse.value === 'revise';
        if (revise && this.config.revisionOrder === 'before-aggregate') this.single('reviser', 'revise');
        else {
          this.reviseAfterAggregate = revise;
          this.single('aggregator', 'aggregate');
        }
        return;
      }
      case 'aggregate':
        this.context.push({ label: 'Aggregator', text: m0.output });
        if (this.reviseAfterAggregate) this.single('reviser', 'revise');
        else this.finishWith(m0.parse.valid ? (m0.parse.value as string) : null);
        return;
      case 'revise':
        this.context.push({ label: 'Revision', text: m0.output });
        if (this.loop < this.config.maxLoops) {
          this.loop++;
          this.single('verifier', 'verify');
        } else this.finishWith(m0.parse.valid ? (m0.parse.value as string) : null);
        return;
      default:
        throw new Error(`math workflow: unexpected event kind ${event.kind}`);
    }
  }
}

export const mathWorkflow: Workflow = {
  description: 'router? -> K solvers (one set) -> verifier -> [revision] -> aggregator (boxed answer scored)',
  roles: ['router', 'solver', 'verifier', 'aggregator'],
  kinds: ['router', 'solve', 'verify', 'revise', 'aggregate'],
  domains: ['math'],
  resolveConfig: resolveMathConfig,
  createEpisode: (task, options) => new MathEpisode(task, resolveMathConfig(options.config), options),
};
