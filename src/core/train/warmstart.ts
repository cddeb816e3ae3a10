/**
 * Produces the warm-start checkpoint of a preset (`srpo-lab warmstart`): demonstrations for
 * every role of the preset's workflow from the train splits of its train and eval task
 * generators (workflows/demos.ts: a noisy oracle, deliberately imperfect), supervised training of the preset's policy set on them
 * (models/warmstart.ts: cross-entropy on completion tokens), and a checkpoint in the run
 * checkpoint layout (one sub-directory per policy id) that `policies.init` can point at.
 * Fixed seed: the same command writes the same weights (on the CPU backends).
 *
 * Tests: test/core/train/warmstart.test.ts.
 */
import { presetConfig, warmStartRecipe, type RunConfig } from '../config';
import { Bm25Retriever, getTaskGenerator, type TaskGenerator } from '../data';
import { warmStart, type EpochReport } from '../models/warmstart';
import type { Role } from '../models/tokenizer';
import { warmStartDemos, type DemoRow } from '../workflows/demos';
import { initialPolicies, saveRunCheckpoint } from './checkpoints';

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

export async function produceWarmStart(req: WarmStartRequest): Promise<{ dir: string; reports: EpochReport[]; demonstrations: number }> {
  const seed = req.seed ?? 1;
  const recipe = warmStartRecipe(req.preset);
  const config = presetConfig(req.preset, { ...req.overrides, seed, policies: { ...(req.overrides?.policies as object), init: null } });
  const demos = warmStartDemonstrations(config, seed, req.episodes ?? recipe.episodes, recipe.dataSeeds ?? 0, recipe.errorRate);
  req.log?.(
    `warm start for ${req.preset}: ${demos.length} demonstrations from ${[...new Set([...config.tasks.train, ...config.tasks.eval])].join(', ')} (${1 + (recipe.dataSeeds ?? 0)} data seeds)`,
  );
  const { policies, tokenizer } = initialPolicies(config);
  try {
    const reports = warmStart(
      policies,
      tokenizer,
      demos.map((d) => ({ ...d, role: d.role as Role })),
      {
        epochs: req.epochs ?? recipe.epochs,
        batchSize: 8,
        learningRate: 2e-3,
        seed,
        onEpoch: (r) =>
          req.log?.(`  ${r.policyId} epoch ${r.epoch + 1}: loss ${r.loss.toFixed(3)} nats/token, token accuracy ${(100 * r.accuracy).toFixed(1)}%`),
      },
    );
    for (const p of policies.policies()) p.version = 0; // RL starts counting its own updates
    const dir = saveRunCheckpoint(req.out, policies, tokenizer, new Map());
    return { dir, reports, demonstrations: demos.length };
  } finally {
    policies.dispose();
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
