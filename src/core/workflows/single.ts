/**
 * The single-agent baseline: one policy answers directly in one singleton event (kind
 * "answer"). Math tasks end with a boxed answer (graded by gradeMath's comparison), QA tasks
 * with an `<answer>` tag (EM or F1). No tools, no team context.
 * Tested by test/core/workflows/workflows.test.ts.
 */
import { z } from 'zod';
import { scoreQAAnswer } from '../eval';
import { invalidPenaltySchema, resolveWith } from './config';
import { EpisodeBase } from './episode';
import { scoreMath } from './math';
import { parseAnswerAction, parseBoxedAnswer } from './parsers';
import { INSTRUCTIONS, assemblePrompt } from './prompts';
import type { EpisodeOptions, EventRecord, Workflow, WorkflowTask } from './types';

export const singleConfigSchema = z
  .object({
    domain: z.enum(['math', 'qa']).describe('math: boxed answer; qa: answer tag.').default('math'),
    reward: z.enum(['em', 'f1']).describe('QA reward: exact match or token F1.').default('em'),
    invalidPenalty: invalidPenaltySchema,
  })
  .strict();
export type SingleConfig = z.output<typeof singleConfigSchema>;

export function resolveSingleConfig(input: unknown): SingleConfig {
  return resolveWith('single workflow config', singleConfigSchema, input);
}

class SingleEpisode extends EpisodeBase {
  constructor(
    task: WorkflowTask,
    private readonly config: SingleConfig,
    options: EpisodeOptions,
  ) {
    super(options.episodeId, task, 'single', config.invalidPenalty);
    const math = config.domain === 'math';
    const obs = math ? `Problem: ${task.question}` : `Question: ${task.question}`;
    this.request('answer', [
      {
        role: math ? 'solver' : 'answerer',
        agent: 'single',
        instruction: math ? 'single_math' : 'single_qa',
        prompt: assemblePrompt(obs, [], math ? INSTRUCTIONS.single_math() : INSTRUCTIONS.single_qa()),
        parse: math ? parseBoxedAnswer : (o) => parseAnswerAction(o, false),
      },
    ]);
  }

  protected advance(event: EventRecord): void {
    const m = event.members[0];
    if (!m.parse.valid) return this.finish(null, 'no-answer');
    const answer = m.parse.value as string;
    if (this.config.domain === 'math') return this.finish(answer, 'answered', scoreMath(answer, this.task));
    const { em, f1 } = scoreQAAnswer(answer, this.task.answers);
    this.finish(answer, 'answered', this.config.reward === 'em' ? em : f1);
  }
}

export const singleWorkflow: Workflow = {
  description: 'one policy answers directly (singleton event)',
  roles: ['solver', 'answerer'],
  kinds: ['answer'],
  domains: ['math', 'qa'],
  resolveConfig: resolveSingleConfig,
  createEpisode: (task, options) => new SingleEpisode(task, resolveSingleConfig(options.config), options),
};
