/**
 * Whether a run's first prompts and `rollout.maxNewTokens` fit in the model's context, checked
 * when the config is resolved (validateRunConfig.ts, rule `promptRoom`) instead of after the
 * model has loaded. Everything here is cheap: the model's context is `max_position_embeddings`
 * of its config.json (policies.init's folder, or, with policies.init null, the lab model's files
 * written without weights: models/hf/labCache.ts), and the prompts are the first active set of
 * one episode per built-in task (train and test split), rendered as the policy will see them:
 * the folder's tokenizer.json through its chat template (read once per folder and file version).
 *
 * What it cannot see: later prompts (they grow with the team's context; a run refuses them when
 * they come), dataset-file tasks (their rows are read by the engine), the external workflow (its
 * program writes the prompts).
 * Not here: the other cross-field rules (validateRunConfig.ts). Tests: test/core/config/upFront.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { getTaskGenerator, TASK_NAMES, type TaskSplit } from '../data/tasks';
import { readHfConfig } from '../models/hf/config';
import { labModelFilesDir } from '../models/hf/labCache';
import { LAB_ROLE_VARIABLE, POSITION_ROOM } from '../models/hf/labFolder';
import { HfTokenizer } from '../models/hf/tokenizer';
import { chatMessages } from '../workflows/chatPrompts';
import { getWorkflow } from '../workflows/registry';
import type { MemberRequest } from '../workflows/types';
import { labShapeOf } from './labShape';
import type { RunConfig } from './runConfig';

/** The model's context as config.json states it, and where that number comes from. */
export interface ModelContext {
  positions: number;
  /** What the user would change to raise it, e.g. `policies.modelOverrides.contextLength`. */
  source: string;
  /** The model folder (its tokenizer renders the prompts). */
  dir: string;
}

/** One first prompt: which task and role, and its length in the policy's tokens. */
export interface PromptLength {
  task: string;
  split: TaskSplit;
  role: string;
  tokens: number;
}

/** The context of the model a config trains; null when it cannot be read (the `paths` and `heads` rules say why). */
export function modelContext(config: RunConfig, baseDir: string): ModelContext | null {
  try {
    if (config.policies.init !== null) {
      const dir = path.resolve(baseDir, config.policies.init);
      return { positions: readHfConfig(dir).maxPositions, source: "policies.init's max_position_embeddings: a model trained for longer inputs", dir };
    }
    const dir = labModelFilesDir(labShapeOf(config));
    return {
      positions: readHfConfig(dir).maxPositions,
      source: `policies.modelOverrides.contextLength (the lab model's max_position_embeddings is ${POSITION_ROOM} x contextLength)`,
      dir,
    };
  } catch {
    return null; // a folder or shape the loader refuses: the loader or another rule says so, naming the field
  }
}

const tokenizers = new Map<string, { stamp: string; tokenizer: HfTokenizer }>();

/** The folder's tokenizer, read again only when tokenizer.json changes (the form validates on every edit). */
function hfTokenizer(dir: string): HfTokenizer {
  const st = fs.statSync(path.join(dir, 'tokenizer.json'));
  const stamp = `${st.size}:${st.mtimeMs}`;
  const hit = tokenizers.get(dir);
  if (hit?.stamp === stamp) return hit.tokenizer;
  const tokenizer = HfTokenizer.fromFolder(dir);
  tokenizers.set(dir, { stamp, tokenizer });
  return tokenizer;
}

/** The members of the first active set of one episode on `question` (the external workflow: none, its program writes them). */
function firstMembers(config: RunConfig, id: string, question: string, answers: string[]): MemberRequest[] {
  if (config.workflow.name === 'external') return [];
  const workflow = getWorkflow(config.workflow.name);
  // The first set never calls a tool; a search workflow still needs one to be built.
  const episode = workflow.createEpisode(
    { id, question, answers },
    { episodeId: 'prompt-room', config: config.workflow.options, tools: { search: { search: () => [] } } },
  );
  return episode.pending()?.members ?? [];
}

/** Token lengths of the first prompts of each built-in task of the config (train split of tasks.train, test split of tasks.eval). */
export function firstPromptLengths(config: RunConfig, context: ModelContext): PromptLength[] {
  const tok = hfTokenizer(context.dir);
  const thinking = config.workflow.enableThinking ?? undefined;
  // The role as policies/hf.ts passes it (the lab's character folders put their marker from it).
  const encode = (m: MemberRequest): number =>
    tok.applyChatTemplate(chatMessages(m.instruction, m.prompt), {
      addGenerationPrompt: true,
      enableThinking: thinking,
      extra: { [LAB_ROLE_VARIABLE]: m.role },
    }).ids.length;
  const out: PromptLength[] = [];
  const lists: [readonly unknown[], TaskSplit][] = [
    [config.tasks.train, 'train'],
    [config.tasks.eval, 'test'],
  ];
  for (const [list, split] of lists) {
    for (const entry of list) {
      if (typeof entry !== 'string' || !(TASK_NAMES as readonly string[]).includes(entry)) continue;
      const row = getTaskGenerator(entry).rows(split, 1)[0];
      if (!row) continue;
      for (const m of firstMembers(config, row.id, row.question, row.answers)) out.push({ task: entry, split, role: m.role, tokens: encode(m) });
    }
  }
  return out;
}
