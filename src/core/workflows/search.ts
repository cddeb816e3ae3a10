/**
 * The multi-turn search workflow (paper section 5.2, appendix B.2, E.1). Each turn: a router
 * (when K is routed) answers STOP or picks searchers; the selected searchers each emit a think
 * block and one `<search>` query from the same pre-search state, as one active set; every
 * valid query is run against the search tool and the retrieved documents are merged into the
 * shared state as observations (never members: K stays the number of queries); a verifier
 * judges whether the evidence suffices. An answer agent ends the episode with a think block and
 * an `<answer>` tag, graded by EM (or F1) against the gold aliases.
 *
 * Termination: router mode ends searching on a valid STOP (the verifier's verdict is shown to
 * the router but does not stop the search itself); fixed and mixed modes end searching when the
 * verifier says "sufficient". A router output that does not parse is neither STOP nor "all":
 * the turn is consumed with no search. After `maxTurns` turns the answer agent is asked
 * (`answerAtMaxTurns`, default) or the episode ends unanswered.
 * Tested by test/core/workflows/workflows.test.ts.
 */
import { z } from 'zod';
import { scoreQAAnswer } from '../eval';
import { createRng, type Rng } from '../data/prng';
import { cardinalitySchema, invalidPenaltySchema, resolveWith } from './config';
import { EpisodeBase } from './episode';
import { parseAnswerAction, parseEvidenceVerdict, parseRoute, parseSearchAction, type RouteDecision } from './parsers';
import { INSTRUCTIONS, assemblePrompt, type ContextEntry } from './prompts';
import type { EpisodeOptions, EventRecord, Workflow, WorkflowTask, WorkflowTools } from './types';

export const searchConfigSchema = z
  .object({
    searchers: cardinalitySchema
      .describe('Searchers per turn: fixed K, mixed (drawn per turn), or routed from a pool of `maxK`.')
      .default({ mode: 'fixed', k: 2 }),
    maxTurns: z.number().int().min(1).max(16).describe('Most search turns (a failed route counts as a turn); 1..16.').default(3),
    topK: z.number().int().min(1).max(20).describe('Documents retrieved per query; 1..20.').default(2),
    verifier: z.boolean().describe('Ask the evidence verifier after each search set.').default(true),
    answerAtMaxTurns: z.boolean().describe('When turns run out, still ask the answer agent (Search-R1 style); else end unanswered.').default(true),
    reward: z.enum(['em', 'f1']).describe('Team reward: exact match (0/1) or token F1.').default('em'),
    docChars: z
      .number()
      .int()
      .min(20)
      .max(4000)
      .describe('Characters of each retrieved document shown in prompts (tiny models have short contexts); 20..4000.')
      .default(200),
    corpus: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Retrieval corpus file (JSONL of {id?, title, text} or FlashRAG {id, contents}, or a JSON list); indexed once into an FTS5 index beside the lab database. Absent: the tasks' own corpora.",
      ),
    corpusSha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional()
      .describe('SHA-256 of the corpus file, filled when the run is created; a resume refuses a changed corpus.'),
    invalidPenalty: invalidPenaltySchema,
  })
  .strict();
export type SearchConfig = z.output<typeof searchConfigSchema>;

export function resolveSearchConfig(input: unknown): SearchConfig {
  return resolveWith('search workflow config', searchConfigSchema, input);
}

interface Doc {
  id: string;
  title: string;
  text: string;
}

class SearchEpisode extends EpisodeBase {
  private turn = 0;
  private readonly queries: string[] = [];
  private readonly evidence: Doc[] = [];
  private readonly context: ContextEntry[] = [];
  private readonly rng: Rng;
  private readonly tool: NonNullable<WorkflowTools['search']>;

  constructor(
    task: WorkflowTask,
    private readonly config: SearchConfig,
    options: EpisodeOptions,
  ) {
    super(options.episodeId, task, 'search', config.invalidPenalty);
    if (!options.tools?.search) throw new Error('search workflow: options.tools.search (a retriever) is required');
    this.tool = options.tools.search;
    this.rng = createRng(options.seed ?? options.episodeId);
    this.startTurn();
  }

  private observation(): string {
    const lines = [`Question: ${this.task.question}`, `Turn ${Math.min(this.turn + 1, this.config.maxTurns)}/${this.config.maxTurns}`];
    if (this.queries.length > 0) lines.push(`Queries: ${this.queries.join('; ')}`);
    for (const d of this.evidence) lines.push(`Doc [${d.title}] ${d.text.slice(0, this.config.docChars)}`);
    return lines.join('\n');
  }

  private startTurn(): void {
    const s = this.config.searchers;
    if (s.mode === 'router') {
      const n = s.maxK;
      this.request('router', [
        {
          role: 'router',
          agent: 'router',
          instruction: 'search_router',
          prompt: assemblePrompt(this.observation(), this.context, INSTRUCTIONS.search_router({ k: n })),
          parse: (o) => parseRoute(o, n),
        },
      ]);
    } else {
      const k = s.mode === 'fixed' ? s.k : this.rng.pick(s.ks);
      this.requestSearch(Array.from({ length: k }, (_, j) => j));
    }
  }

  private requestSearch(agents: number[]): void {
    const obs = this.observation(); // one pre-search state for every member
    this.request(
      'search',
      agents.map((a) => ({
        role: 'searcher',
        agent: `searcher#${a}`,
        instruction: 'searcher',
        prompt: assemblePrompt(obs, this.context, INSTRUCTIONS.searcher({ index: a, k: agents.length })),
        parse: parseSearchAction,
      })),
    );
  }

  private requestAnswer(): void {
    this.request('answer', [
      {
        role: 'answerer',
        agent: 'answerer',
        instruction: 'answerer',
        prompt: assemblePrompt(this.observation(), this.context, INSTRUCTIONS.answerer()),
        parse: (o) => parseAnswerAction(o),
      },
    ]);
  }

  private endTurn(): void {
    this.turn++;
    if (this.turn < this.config.maxTurns) this.startTurn();
    else if (this.config.answerAtMaxTurns) this.requestAnswer();
    else this.finish(null, 'max-turns');
  }

  protected advance(event: EventRecord): void {
    const m0 = event.members[0];
    switch (event.kind) {
      case 'router': {
        if (!m0.parse.valid) return this.endTurn();
        const route = m0.parse.value as RouteDecision;
        if (route.stop) this.requestAnswer();
        else this.requestSearch(route.agents);
        return;
      }
      case 'search': {
        let calls = 0;
        const seen = new Set(this.evidence.map((d) => d.id));
        for (const m of event.members) {
          if (!m.parse.valid) continue;
          const q = m.parse.value as string;
          this.queries.push(q);
          calls++;
          let hits: Doc[] = [];
          try {
            hits = this.tool.search(q, this.config.topK);
          } catch {
            hits = []; // a failing tool is an empty observation, not a crash of the run
          }
          for (const h of hits) {
            if (seen.has(h.id)) continue;
            seen.add(h.id);
            this.evidence.push({ id: h.id, title: h.title, text: h.text });
          }
        }
        this.recordToolCalls(event, calls);
        if (this.config.verifier) {
          this.request('verify', [
            {
              role: 'verifier',
              agent: 'verifier',
              instruction: 'search_verifier',
              prompt: assemblePrompt(this.observation(), this.context, INSTRUCTIONS.search_verifier()),
              parse: parseEvidenceVerdict,
            },
          ]);
        } else this.endTurn();
        return;
      }
      case 'verify': {
        // Only the latest judgement is shown (short prompts); the events keep every one.
        this.context.splice(0, this.context.length, { label: 'Verifier', text: m0.parse.valid ? String(m0.parse.value) : 'invalid' });
        const sufficient = m0.parse.valid && m0.parse.value === 'sufficient';
        if (sufficient && this.config.searchers.mode !== 'router') this.requestAnswer();
        else this.endTurn();
        return;
      }
      case 'answer': {
        if (!m0.parse.valid) return this.finish(null, 'no-answer');
        const answer = m0.parse.value as string;
        const { em, f1 } = scoreQAAnswer(answer, this.task.answers);
        this.finish(answer, this.turn >= this.config.maxTurns ? 'max-turns' : 'answered', this.config.reward === 'em' ? em : f1);
        return;
      }
      default:
        throw new Error(`search workflow: unexpected event kind ${event.kind}`);
    }
  }
}

export const searchWorkflow: Workflow = {
  description: 'per turn: router? -> K searchers (one set) -> retrieval -> verifier; then answer agent (EM scored)',
  roles: ['router', 'searcher', 'verifier', 'answerer'],
  kinds: ['router', 'search', 'verify', 'answer'],
  domains: ['qa'],
  resolveConfig: resolveSearchConfig,
  createEpisode: (task, options) => new SearchEpisode(task, resolveSearchConfig(options.config), options),
};
