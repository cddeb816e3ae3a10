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
import { presetConfig } from '../config';
import { Bm25Retriever, getTaskGenerator } from '../data';
import { warmStart, type EpochReport } from '../models/warmstart';
import type { Role } from '../models/tokenizer';
import { warmStartDemos } from '../workflows/demos';
import { initialPolicies, saveRunCheckpoint } from './checkpoints';

export interface WarmStartRequest {
  /** Preset whose workflow, tasks and model the checkpoint is for. */
  preset: string;
  /** Output directory (created; replaced if present). */
  out: string;
  /** Supervised epochs over the demonstrations. Default 8. */
  epochs?: number;
  /** Seed of demonstrations, init and shuffles. Default 1. */
  seed?: number;
  /** Episodes of demonstrations per train task generator. Default 150. */
  episodes?: number;
  /** Extra run-config overrides (e.g. smaller models in tests). */
  overrides?: Record<string, unknown>;
  log?: (line: string) => void;
}

export async function produceWarmStart(req: WarmStartRequest): Promise<{ dir: string; reports: EpochReport[]; demonstrations: number }> {
  const seed = req.seed ?? 1;
  const config = presetConfig(req.preset, { ...req.overrides, seed, policies: { ...(req.overrides?.policies as object), init: null } });
  // Demonstrations from the train split of every generator the preset trains or evaluates on.
  const generators = [...new Set([...config.tasks.train, ...config.tasks.eval])];
  const demos = generators.flatMap((name) => {
    const generator = getTaskGenerator(name);
    const corpus = generator.corpus?.();
    return warmStartDemos({
      generator,
      workflow: config.workflow.name,
      config: config.workflow.options,
      episodes: req.episodes ?? 150,
      seed,
      tools: corpus ? { search: Bm25Retriever.open(corpus) } : undefined,
    });
  });
  req.log?.(`warm start for ${req.preset}: ${demos.length} demonstrations from ${generators.join(', ')}`);
  const { policies, tokenizer } = initialPolicies(config);
  try {
    const reports = warmStart(policies, tokenizer, demos.map((d) => ({ ...d, role: d.role as Role })), {
      epochs: req.epochs ?? 8,
      batchSize: 8,
      learningRate: 2e-3,
      seed,
      onEpoch: (r) => req.log?.(`  ${r.policyId} epoch ${r.epoch + 1}: loss ${r.loss.toFixed(3)} nats/token, token accuracy ${(100 * r.accuracy).toFixed(1)}%`),
    });
    for (const p of policies.policies()) p.version = 0; // RL starts counting its own updates
    const dir = saveRunCheckpoint(req.out, policies, tokenizer, new Map());
    return { dir, reports, demonstrations: demos.length };
  } finally {
    policies.dispose();
  }
}
