/**
 * Whether a run's first prompts and `rollout.maxNewTokens` fit in the model's context, checked
 * when the config is resolved (validateRunConfig.ts, rule `promptRoom`) instead of after the
 * model has loaded. Everything here is cheap: the model's context comes from config.json
 * (the lab's own: `contextLength` of policies.init's checkpoint, else of policies.model with its
 * overrides; a Hugging Face folder: `max_position_embeddings`), and the prompts are the first
 * active set of one episode per built-in task (train and test split), rendered as the policy
 * will see them: the lab's character tokens (plus `<bos>` and the role marker), or the folder's
 * tokenizer.json through its chat template (read once per folder and file version).
 *
 * What it cannot see: later prompts (they grow with the team's context; the lab's model cuts
 * those to fit, a Hugging Face run refuses them when they come), dataset-file tasks (their rows
 * are read by the engine), the external workflow (its program writes the prompts).
 * Not here: the other cross-field rules (validateRunConfig.ts). Tests: test/core/config/upFront.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { getTaskGenerator, TASK_NAMES, type TaskSplit } from '../data/tasks';
import { MODEL_PRESETS, type ModelPresetName } from '../models/config';
import { readHfConfig } from '../models/hf/config';
import { LAB_ROLE_VARIABLE } from '../models/hf/labFolder';
import { HfTokenizer } from '../models/hf/tokenizer';
import { CharTokenizer } from '../models/tokenizer';
import { chatMessages } from '../workflows/chatPrompts';
import { getWorkflow } from '../workflows/registry';
import type { MemberRequest } from '../workflows/types';
import type { RunConfig } from './runConfig';

/** The model's context as config.json (or the preset) states it, and where that number comes from. */
export interface ModelContext {
  positions: number;
  /** What the user would change to raise it, e.g. `policies.modelOverrides.contextLength`. */
  source: string;
  kind: 'lab' | 'hf';
  /** The Hugging Face folder (its tokenizer renders the prompts). */
  hfDir?: string;
}

/** One first prompt: which task and role, and its length in the policy's tokens. */
export interface PromptLength {
  task: string;
  split: TaskSplit;
  role: string;
  tokens: number;
}

/** The context of the model a config trains; null when it cannot be read (the `paths` rule says why). */
export function modelContext(
  config: RunConfig,
  baseDir: string,
  labFolderConfigs: (dir: string) => { config: Record<string, unknown> }[] | null,
): ModelContext | null {
  if (config.policies.init !== null) {
    const dir = path.resolve(baseDir, config.policies.init);
    let lab: ReturnType<typeof labFolderConfigs>;
    try {
      lab = labFolderConfigs(dir);
    } catch {
      return null;
    }
    if (lab === null) {
      try {
        return {
          positions: readHfConfig(dir).maxPositions,
          source: "policies.init's max_position_embeddings: a model trained for longer inputs",
          kind: 'hf',
          hfDir: dir,
        };
      } catch {
        return null; // a config.json the loader refuses: the loader says so, naming the field
      }
    }
    const lengths = lab.map((f) => f.config.contextLength).filter((n): n is number => typeof n === 'number');
    if (!lengths.length) return null;
    return {
      positions: Math.min(...lengths),
      source: "contextLength in policies.init's config.json (set policies.init to null to train a longer context from scratch)",
      kind: 'lab',
    };
  }
  const preset = MODEL_PRESETS[config.policies.model as ModelPresetName];
  if (!preset) return null;
  const own = (config.policies.modelOverrides as { contextLength?: number }).contextLength;
  return { positions: own ?? preset.config.contextLength, source: 'policies.modelOverrides.contextLength', kind: 'lab' };
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
  const encode: (m: MemberRequest) => number =
    context.kind === 'hf'
      ? (() => {
          const tok = hfTokenizer(context.hfDir!);
          const thinking = config.workflow.enableThinking ?? undefined;
          // The role as policies/hf.ts passes it (the lab's character folders put their marker from it).
          return (m) =>
            tok.applyChatTemplate(chatMessages(m.instruction, m.prompt), {
              addGenerationPrompt: true,
              enableThinking: thinking,
              extra: { [LAB_ROLE_VARIABLE]: m.role },
            }).ids.length;
        })()
      : (() => {
          const tok = new CharTokenizer();
          // <bos>, the role marker (every lab layout puts one in), then the text (policies/lab.ts encodePrompt).
          return (m) => 2 + tok.encode(m.prompt, { special: false }).length;
        })();
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
