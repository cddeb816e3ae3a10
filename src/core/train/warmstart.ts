/**
 * Produces the warm-start checkpoint of a preset (`srpo-lab warmstart`): demonstrations for
 * every role of the preset's workflow from the train splits of its train and eval task
 * generators (workflows/demos.ts: a noisy oracle, deliberately imperfect), supervised training of
 * the preset's policies on them (cross-entropy on completion tokens), and the result where
 * `policies.init` can point at it: a Hugging Face folder of the preset's lab shape
 * (models/hf/labFolder.ts: Llama-style config.json, character tokenizer.json, plain chat template),
 * trained by models/hf/supervised.ts on prompts rendered by the folder's own chat template with
 * the role (as policies/hf.ts renders them in training); one shared model, which every regime
 * (shared or per-role) starts from.
 * Fixed seed: the same command writes the same weights (on the CPU backends).
 *
 * Tests: test/core/train/warmstart.test.ts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { presetConfig, warmStartRecipe, type RunConfig, type WarmStartRecipe } from '../config';
import { labShapeOf } from '../config/labShape';
import { Bm25Retriever, getTaskGenerator, type TaskGenerator } from '../data';
import { writeLabFolder, LAB_ROLE_VARIABLE, LAB_SPECIAL_IDS } from '../models/hf/labFolder';
import { loadHfModel } from '../models/hf/load';
import { fitHfPairs } from '../models/hf/supervised';
import type { HfTokenizer } from '../models/hf/tokenizer';
import type { Role } from '../models/vocab';
import { memorySource } from '../policies/hf';
import { warmStartDemos, type DemoRow } from '../workflows/demos';

export interface WarmStartRequest {
  /** Preset whose workflow, tasks and model the checkpoint is for. */
  preset: string;
  /** Output directory (created; replaced if present). */
  out: string;
  /** Supervised epochs over the demonstrations. Default: the preset's recipe (config/presets.ts). */
  epochs?: number;
  /** Seed of demonstrations, init and shuffles. Default 1. */
  seed?: number;
  /** Episodes of demonstrations per train task generator. Default: the preset's recipe. */
  episodes?: number;
  /** Extra run-config overrides (e.g. smaller models in tests). */
  overrides?: Record<string, unknown>;
  log?: (line: string) => void;
}

/** One supervised epoch of the warm start. */
export interface WarmStartEpoch {
  policyId: string;
  epoch: number;
  /** Mean cross-entropy per completion token, nats. */
  loss: number;
  tokens: number;
}

export async function produceWarmStart(req: WarmStartRequest): Promise<{ dir: string; reports: WarmStartEpoch[]; demonstrations: number }> {
  const seed = req.seed ?? 1;
  const recipe = warmStartRecipe(req.preset);
  const config = presetConfig(req.preset, { ...req.overrides, seed, policies: { ...(req.overrides?.policies as object), init: null } });
  const demos = warmStartDemonstrations(config, seed, req.episodes ?? recipe.episodes, recipe.dataSeeds ?? 0, recipe.errorRate);
  req.log?.(
    `warm start for ${req.preset}: ${demos.length} demonstrations from ${[...new Set([...config.tasks.train, ...config.tasks.eval])].join(', ')} (${1 + (recipe.dataSeeds ?? 0)} data seeds)`,
  );
  const out = warmStartFolder({ req, config, recipe, seed, demos });
  return { ...out, demonstrations: demos.length };
}

interface WarmStartInput {
  req: WarmStartRequest;
  config: RunConfig;
  recipe: WarmStartRecipe;
  seed: number;
  demos: DemoRow[];
}

/** Optimiser settings of the warm start. */
const SUPERVISED = { batchSize: 8, learningRate: 2e-3 } as const;

/**
 * A lab folder's prompt ids for a member of `role`: the folder's chat template over the user turn
 * with the role variable, as policies/hf.ts `hfPromptIds` renders it (the template leaves the
 * system turn out: models/hf/labFolder.ts).
 */
export function labFolderPromptIds(tokenizer: HfTokenizer, role: Role, prompt: string): number[] {
  return tokenizer.applyChatTemplate([{ role: 'user', content: prompt }], { addGenerationPrompt: true, extra: { [LAB_ROLE_VARIABLE]: role } }).ids;
}

/** The preset's lab shape as a Hugging Face folder (models/hf/labFolder.ts), one shared model. */
function warmStartFolder({ req, config, recipe, seed, demos }: WarmStartInput): { dir: string; reports: WarmStartEpoch[] } {
  if (config.policies.sharing !== 'shared')
    throw new Error(`warm start for ${req.preset}: a warm start makes one shared model folder; policies.sharing is "${config.policies.sharing}"`);
  const dest = path.resolve(req.out);
  // Replaced if present; only a model folder (config.json) or an empty folder is removed.
  if (fs.existsSync(dest)) {
    const entries = fs.readdirSync(dest);
    if (entries.length > 0 && !entries.includes('config.json'))
      throw new Error(`warm start: ${dest} exists and is not a model folder (no config.json); choose another --out`);
    fs.rmSync(dest, { recursive: true, force: true });
  }
  const shape = labShapeOf(config);
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'srpo-warmstart-hf-'));
  try {
    const init = writeLabFolder(path.join(staging, 'init'), shape, { seed });
    const loaded = loadHfModel(init.dir, { trainable: true });
    try {
      const tok = loaded.tokenizer;
      const pairs = demos.map((d) => ({
        prompt: labFolderPromptIds(tok, d.role as Role, d.prompt),
        completion: [...tok.encode(d.completion, { addSpecialTokens: false }), LAB_SPECIAL_IDS.eos],
      }));
      const epochs = fitHfPairs(loaded.model, pairs, {
        epochs: req.epochs ?? recipe.epochs,
        ...SUPERVISED,
        seed,
        onEpoch: (r) => req.log?.(`  shared epoch ${r.epoch + 1}: loss ${r.loss.toFixed(3)} nats/token`),
      });
      const saved = writeLabFolder(dest, shape, { seed, weights: memorySource(loaded.model, 'the warm-started model in memory') });
      return { dir: saved.dir, reports: epochs.map((e) => ({ policyId: 'shared', epoch: e.epoch, loss: e.loss, tokens: e.tokens })) };
    } finally {
      loaded.dispose();
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * The demonstrations of a warm start: the noisy oracle (workflows/demos.ts) on the train split of
 * every generator the config trains or evaluates on, and on the train splits of `dataSeeds`
 * other seeds of those generators, without any question of the config's own test splits.
 * `errorRate`: the oracle's content error rate (undefined: workflows/demos.ts's default).
 */
export function warmStartDemonstrations(config: RunConfig, seed: number, episodes: number, dataSeeds: number, errorRate?: number): DemoRow[] {
  // Built-in generators only: the noisy oracle reads their rows' meta (dataset files have none).
  const generators = [...new Set([...config.tasks.train, ...config.tasks.eval].filter((t) => typeof t === 'string'))];
  const seeds = ['v1', ...Array.from({ length: dataSeeds }, (_, i) => `warmstart-${i + 1}`)];
  return generators.flatMap((name) => {
    const heldOut = new Set(
      getTaskGenerator(name)
        .rows('test')
        .map((r) => r.question),
    );
    return seeds.flatMap((dataSeed) => {
      const generator = getTaskGenerator(name, { seed: dataSeed });
      const corpus = generator.corpus?.();
      return warmStartDemos({
        generator: dataSeed === 'v1' ? generator : withoutQuestions(generator, heldOut),
        workflow: config.workflow.name,
        config: config.workflow.options,
        episodes,
        errorRate,
        // The run's own data keeps the plain seed (the shipped checkpoints were made that way).
        seed: dataSeed === 'v1' ? seed : `${seed}/${dataSeed}`,
        tools: corpus ? { search: Bm25Retriever.open(corpus) } : undefined,
      });
    });
  });
}

/** A generator whose rows skip the given questions (the run's own test split). */
function withoutQuestions(generator: TaskGenerator, questions: ReadonlySet<string>): TaskGenerator {
  return {
    ...generator,
    rows: (split, count) =>
      generator
        .rows(split)
        .filter((r) => !questions.has(r.question))
        .slice(0, count ?? undefined),
  };
}
