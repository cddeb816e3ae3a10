/**
 * Named run presets: a typed registry of partial configs layered on the defaults (and, for the
 * baselines and ablations, on `math-quick`). `presetConfig(name, overrides)` (presetResolve.ts) resolves one.
 *
 * - math-quick / search-quick: built-in tasks, the lab's tiny character models (Hugging Face
 *   folders, models/hf/labFolder.ts) warm-started from resources/warmstart, full fine-tuning,
 *   sized for 2 CPU cores (a few minutes per run).
 * - math-paper / search-paper: the paper's shapes (section 5: G = 8, n = 16, K up to 3 solvers
 *   or searchers, router-chosen K) on the lab's own random-init base-size model: shapes only (a
 *   random model does not learn the tasks); the bases of the *-paper-data and real-model presets.
 * - math-qwen3-0.6b, math-qwen3-1.7b (shared and -per-role LoRA), search-qwen2.5-1.5b: the same
 *   shapes on real Hugging Face models (issue 14), for a GPU; `--set policies.init=MODEL_DIR`.
 * - math-paper-data / search-paper-data: the same shapes on the paper's benchmark files, named
 *   as slots (`$aime24`, `$wiki` ...) that `--set tasks.paths.NAME=PATH` fills; a run with an
 *   unfilled slot is refused, listing every missing one (data/datasetTasks.ts).
 * - Baselines (paper tables): single-agent GRPO, shared and per-role GRPO, Dr. MAS, SRPO.
 * - Ablations: K = 1 against K = 3; sum, mean and sqrt set normalisation; token reduction.
 * - external-math-quick: math-quick's team written as an agent program with the official openai
 *   client (examples/agents/math_team.mjs), trained through the endpoint (docs/EXTERNAL_AGENTS.md).
 */
import type { RunConfigInput } from './runConfig';

type Patch = { [K in keyof RunConfigInput]?: RunConfigInput[K] extends object ? Partial<RunConfigInput[K]> : RunConfigInput[K] };

interface Preset {
  description: string;
  /** Preset this one builds on (its patch is applied first). */
  base?: PresetName;
  patch: Patch;
  /** How `srpo-lab warmstart --preset NAME` makes this preset's `policies.init` checkpoint. */
  warmStart?: WarmStartRecipe;
  /** The preset trains a Hugging Face model: `policies.init` must name its folder (inherited by presets built on it). */
  needsModelFolder?: true;
}

/** The supervised warm start of a preset (src/core/train/warmstart.ts); flags override it. */
export interface WarmStartRecipe {
  /** Demonstration episodes per task generator (a prefix of its train split). */
  episodes: number;
  /** Supervised passes over the demonstrations. */
  epochs: number;
  /**
   * Extra seeds of the built-in generators (fresh knowledge bases with new names, new number
   * draws) whose train splits add demonstrations, minus any question of the run's own test
   * split. Names the policy has never seen make copying, not memorising, the way to fit them.
   * 0 = the run's own train split only.
   */
  dataSeeds?: number;
  /**
   * How often the demonstrating oracle is wrong in content (wrong answer, off-target query),
   * [0, 1]; undefined: the default of workflows/demos.ts (0.2). Lower makes a more competent
   * start where a tiny model's own copying errors already leave RL plenty to fix.
   */
  errorRate?: number;
}

/** Used for presets without a recipe of their own. */
export const DEFAULT_WARM_START: WarmStartRecipe = { episodes: 150, epochs: 8 };

/** A preset by name; an unknown name is an error listing the valid ones. */
export function getPreset(name: string): Preset {
  if (!Object.hasOwn(PRESETS, name)) throw new Error(`unknown preset "${name}"; valid names: ${PRESET_NAMES.join(', ')}`);
  return PRESETS[name as PresetName];
}

/** The warm-start recipe of a preset (its own, else its base chain's, else the default). */
export function warmStartRecipe(name: string): WarmStartRecipe {
  const preset = getPreset(name);
  return preset.warmStart ?? (preset.base ? warmStartRecipe(preset.base) : DEFAULT_WARM_START);
}

export const PRESET_NAMES = [
  'math-quick',
  'search-quick',
  'math-paper',
  'search-paper',
  'math-paper-data',
  'search-paper-data',
  'math-qwen3-0.6b',
  'math-qwen3-0.6b-per-role',
  'math-qwen3-1.7b',
  'math-qwen3-1.7b-per-role',
  'search-qwen2.5-1.5b',
  'math-single-grpo',
  'math-shared-grpo',
  'math-per-role-grpo',
  'math-drmas',
  'math-srpo',
  'math-ablation',
  'math-k1',
  'math-k3',
  'math-setnorm-sum',
  'math-setnorm-mean',
  'math-setnorm-sqrt',
  'math-reduction-token',
  'external-math-quick',
] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

export const WARMSTART_DIR = 'resources/warmstart';

/** The eval slots of the data presets (`--set tasks.paths.<slot>=FILE`), in the paper's table order. */
export const MATH_PAPER_EVAL = ['aime24', 'aime25', 'amc23', 'math500', 'minerva', 'olympiadbench'] as const;
export const SEARCH_PAPER_EVAL = ['nq', 'triviaqa', 'popqa', 'hotpotqa', '2wiki', 'musique', 'bamboogle'] as const;

/** The quick presets' policy shape: d64 x 2 layers (~0.13M parameters), small enough for a
 * warm start and tens of RL steps in minutes on 2 CPU cores, and a checkpoint of ~0.5 MB. */
const QUICK_MODEL = { dModel: 64, nLayers: 2, nHeads: 2, contextLength: 256 };

/** The quick presets' warm starts. */
const MATH_QUICK_WARM_START: WarmStartRecipe = { episodes: 400, epochs: 12 };
const SEARCH_QUICK_WARM_START: WarmStartRecipe = { episodes: 200, epochs: 16, dataSeeds: 3, errorRate: 0.05 };

/** The real-model presets' adapter: LoRA r 16 on every linear, as peft writes it (dropout 0, peft's default; masks cost CPU time: hf/loraDropout.ts). */
const PAPER_LORA = {
  kind: 'lora' as const,
  r: 16,
  alpha: 32,
  targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
  rslora: false,
  dropout: 0,
};

/** The real-model presets' evaluation: n = 16 samples per query (the paper's Avg@16 / Pass@16). */
const PAPER_EVAL = { every: 20, n: 16, queries: 100, batchEpisodes: 256, temperature: 0.6 };

export const PRESETS = {
  'math-quick': {
    description: 'Math solver-verifier workflow, K = 2, tiny shared policy warm-started; 2 CPU cores',
    patch: {
      steps: 30,
      workflow: { name: 'math', options: { solvers: { mode: 'fixed', k: 2 }, maxLoops: 1 } },
      // arith-chain: validation questions are unseen, but every one-step fact they need occurs in
      // training, so a d64 x 2 policy can generalise by composing steps (held-out single-digit
      // facts, as in arith-digits, are not learnable by a model this small: ~4% after a warm start).
      tasks: { train: ['arith-chain'], eval: ['arith-chain'] },
      policies: { sharing: 'shared', model: 'tiny', modelOverrides: QUICK_MODEL, init: `${WARMSTART_DIR}/math-tiny` },
      rollout: { tasksPerStep: 8, groupSize: 4, maxNewTokens: 32 },
      // A mini-batch's pass (~65 rows of ~220 tokens) is estimated at ~1.7 GB of tape on wasm: under
      // wasm's default 512 MB it ran in 4 row blocks, one more forward each (slower than the former
      // lab model, which had no budget). In one block on either backend, as search-quick
      // (docs/NATIVE_BACKEND.md, whole runs).
      update: { epochs: 2, miniBatches: 2, tapeBudgetMB: 2560 },
      optimizer: { lr: 3e-4 },
      eval: { every: 10, n: 4, queries: 40 },
      checkpointEvery: 10,
    },
    warmStart: MATH_QUICK_WARM_START,
  },
  'search-quick': {
    description: 'Search workflow over the built-in knowledge base, K = 2 searchers, tiny shared policy; 2 CPU cores',
    patch: {
      steps: 20,
      // One search turn of two searchers, then the answer agent: the shortest search episode
      // (2 events), which a d64 x 2 character model can learn to run from a warm start in
      // minutes. kb-multi needs a second turn and a verifier: see search-paper.
      workflow: { name: 'search', options: { searchers: { mode: 'fixed', k: 2 }, maxTurns: 1, verifier: false, topK: 1, docChars: 100 } },
      tasks: { train: ['kb-single'], eval: ['kb-single'] },
      policies: { sharing: 'shared', model: 'tiny', modelOverrides: { ...QUICK_MODEL, nHeads: 4, contextLength: 512 }, init: `${WARMSTART_DIR}/search-tiny` },
      // Searcher outputs (a think block and a search tag) run to ~100 characters. 8 tasks per
      // step: with 4 (320 episodes in 20 steps) validation moved within noise; with 8 it rose
      // on every seed. lr stays 3e-4: 1e-3 raised the entropy and lost 80% of the start's accuracy.
      rollout: { tasksPerStep: 8, groupSize: 4, maxNewTokens: 104 },
      // A mini-batch's pass (about 48 rows of ~300 tokens) is estimated at ~2.5 GB of tape: under
      // the default 512 MB it ran in 5 row blocks (one more forward each), which made the step
      // slower than the former lab model's, which had no budget and peaked at ~1.9 GB. One block
      // keeps it near that model's peak on either backend (docs/NATIVE_BACKEND.md, "Training
      // step against the former lab Transformer").
      update: { epochs: 2, miniBatches: 2, tapeBudgetMB: 2560 },
      // 64 queries (256 episodes) in batches of 64: one batch of long search prompts with 4 heads
      // outgrows the WebAssembly heap. Fewer queries leave the same checkpoint's Avg@4 spread by
      // +-0.02 between seeds, the size of the effect to be seen.
      eval: { every: 10, n: 4, queries: 64, batchEpisodes: 64 },
      checkpointEvery: 10,
    },
    warmStart: SEARCH_QUICK_WARM_START,
  },
  'math-paper': {
    description: 'Paper-shaped math run (G = 8, router-chosen K <= 3, n = 16) on the base model: for a GPU',
    patch: {
      steps: 200,
      workflow: { name: 'math', options: { solvers: { mode: 'router', maxK: 3 }, maxLoops: 2 } },
      tasks: { train: ['arith-medium', 'arith-hard'], eval: ['arith-easy', 'arith-medium', 'arith-hard'] },
      policies: { sharing: 'per-role', model: 'base', init: null },
      rollout: { tasksPerStep: 64, groupSize: 8, maxNewTokens: 256 },
      update: { epochs: 2, miniBatches: 4 },
      optimizer: { lr: 1e-4 },
      eval: { every: 20, n: 16, queries: 200 },
      checkpointEvery: 20,
      backend: 'node-gpu',
    },
  },
  'search-paper': {
    description: 'Paper-shaped search run (Search-R1 setting, G = 8, router-chosen searchers <= 3, n = 16): for a GPU',
    patch: {
      steps: 200,
      workflow: { name: 'search', options: { searchers: { mode: 'router', maxK: 3 }, maxTurns: 4 } },
      tasks: { train: ['kb-multi'], eval: ['kb-single', 'kb-multi'] },
      policies: { sharing: 'per-role', model: 'base', init: null },
      rollout: { tasksPerStep: 64, groupSize: 8, maxNewTokens: 256 },
      update: { epochs: 2, miniBatches: 4 },
      optimizer: { lr: 1e-4 },
      eval: { every: 20, n: 16, queries: 200 },
      checkpointEvery: 20,
      backend: 'node-gpu',
    },
  },
  'math-paper-data': {
    description:
      "The paper's math benchmarks from files (Table 1): train on DAPO-Math or GSM8K, evaluate AIME'24/'25, AMC'23, MATH500, Minerva, OlympiadBench at n = 16; give each file with --set tasks.paths.NAME=PATH",
    base: 'math-paper',
    patch: {
      tasks: {
        train: [{ dataset: '$train' }],
        eval: MATH_PAPER_EVAL.map((name) => ({ dataset: `$${name}` })),
      },
      // Every row of every file is evaluated (AIME: 30 problems): queries only caps built-in tasks.
      eval: { every: 20, n: 16, queries: 200, batchEpisodes: 256 },
    },
  },
  'search-paper-data': {
    description:
      "The paper's search benchmarks from files (Table 2): train on HotpotQA, evaluate NQ, TriviaQA, PopQA, HotpotQA, 2Wiki, MuSiQue, Bamboogle at n = 16 over a Wikipedia corpus; give each file with --set tasks.paths.NAME=PATH",
    base: 'search-paper',
    patch: {
      workflow: { name: 'search', options: { searchers: { mode: 'router', maxK: 3 }, maxTurns: 4, corpus: '$wiki' } },
      tasks: {
        train: [{ dataset: '$train' }],
        eval: SEARCH_PAPER_EVAL.map((name) => ({ dataset: `$${name}` })),
      },
      eval: { every: 20, n: 16, queries: 200, batchEpisodes: 256 },
    },
  },
  // Real models (issue 14): LoRA over one frozen base, the paper's shapes (G = 8, n = 16, K <= 3
  // by the router), chat prompts; each needs --set policies.init=MODEL_DIR (a Hugging Face folder).
  // Memory figures are `srpo-lab model info --model DIR --lora 16 --seq-len 1024` on the published
  // config.json; resident = float32 weights + per adapter (weights + AdamW + gradient, 16 bytes a
  // parameter). Activations: recompute keeps one layer's working set plus each layer's input rows,
  // and microBatchRows 4 bounds a pass to ~4 rows of prompt (~400-700 chat tokens) + 512 new tokens.
  // Step time: not measured here (no GPU in this environment); read time/step of the first steps.
  'math-qwen3-0.6b': {
    // Qwen3-0.6B: 596.05M parameters, 2.38 GB float32; LoRA r16 all linears 10.09M trainable,
    // AdamW 80.7 MB; KV cache 234.9 MB per 1k tokens; activations per 1k tokens 8.30 GB minimum,
    // 42.82 GB as the tfjs tape keeps them without recompute. Resident ~2.54 GB shared.
    description:
      'Math team on Qwen3-0.6B with one shared LoRA adapter (r 16), paper shapes (G = 8, router K <= 3, n = 16); --set policies.init=MODEL_DIR; a GPU',
    base: 'math-paper',
    needsModelFolder: true,
    patch: {
      workflow: { name: 'math', options: { solvers: { mode: 'router', maxK: 3 }, maxLoops: 2 }, enableThinking: false },
      policies: { sharing: 'shared', init: null, adapter: PAPER_LORA },
      rollout: { tasksPerStep: 16, groupSize: 8, maxNewTokens: 512, temperature: 1, topP: 1 },
      update: { epochs: 2, miniBatches: 4, microBatchRows: 4, recompute: true },
      optimizer: { lr: 5e-5, weightDecay: 0, gradClip: 1 },
      eval: PAPER_EVAL,
      checkpointEvery: 10,
      backend: 'node-gpu',
    },
  },
  'math-qwen3-0.6b-per-role': {
    // Per-role adapters over ONE base: + 5 adapters x 161 MB (10.09M x 16 bytes) = resident ~3.35 GB.
    description: "math-qwen3-0.6b with one LoRA adapter per role over one frozen base (the paper's non-sharing regime); --set policies.init=MODEL_DIR",
    base: 'math-qwen3-0.6b',
    patch: { policies: { sharing: 'per-role' } },
  },
  'math-qwen3-1.7b': {
    // Qwen3-1.7B: 1.72B parameters, 6.88 GB float32; LoRA r16 17.43M trainable, AdamW 139.5 MB;
    // KV cache 234.9 MB per 1k tokens; activations per 1k tokens 10.41 GB minimum, 55.51 GB as
    // kept without recompute. Resident ~7.16 GB shared.
    description: 'Math team on Qwen3-1.7B with one shared LoRA adapter (r 16), paper shapes; --set policies.init=MODEL_DIR; a GPU with >= 40 GB',
    base: 'math-qwen3-0.6b',
    patch: { update: { epochs: 2, miniBatches: 4, microBatchRows: 2, recompute: true }, optimizer: { lr: 3e-5 } },
  },
  'math-qwen3-1.7b-per-role': {
    // + 5 adapters x 279 MB (17.43M x 16 bytes) = resident ~8.55 GB.
    description: 'math-qwen3-1.7b with one LoRA adapter per role over one frozen base; --set policies.init=MODEL_DIR',
    base: 'math-qwen3-1.7b',
    patch: { policies: { sharing: 'per-role' } },
  },
  'search-qwen2.5-1.5b': {
    // Qwen2.5-1.5B(-Instruct): 1.54B parameters, 6.17 GB float32; LoRA r16 18.46M trainable,
    // AdamW 147.7 MB; KV cache 58.7 MB per 1k tokens; activations per 1k tokens 9.88 GB minimum,
    // 52.33 GB without recompute. Resident ~6.47 GB shared.
    description:
      'Search team (Search-R1 setting) on Qwen2.5-1.5B with one shared LoRA adapter (r 16), router-chosen searchers <= 3, n = 16; --set policies.init=MODEL_DIR; a GPU',
    base: 'search-paper',
    needsModelFolder: true,
    patch: {
      workflow: { name: 'search', options: { searchers: { mode: 'router', maxK: 3 }, maxTurns: 4 } },
      policies: { sharing: 'shared', init: null, adapter: PAPER_LORA },
      rollout: { tasksPerStep: 16, groupSize: 8, maxNewTokens: 256, temperature: 1, topP: 1 },
      update: { epochs: 2, miniBatches: 4, microBatchRows: 4, recompute: true },
      optimizer: { lr: 3e-5, weightDecay: 0, gradClip: 1 },
      eval: PAPER_EVAL,
      checkpointEvery: 10,
      backend: 'node-gpu',
    },
  },
  'math-single-grpo': {
    description: 'Baseline: single agent answers directly, token-level GRPO',
    base: 'math-quick',
    patch: { workflow: { name: 'single', options: { domain: 'math' } }, objective: { algorithm: 'grpo_token' } },
  },
  'math-shared-grpo': {
    description: 'Baseline: LLM-sharing multi-agent workflow trained with token-level GRPO',
    base: 'math-quick',
    patch: { objective: { algorithm: 'grpo_token' } },
  },
  'math-per-role-grpo': {
    description: 'Baseline: LLM non-sharing (one policy per role) with token-level GRPO',
    base: 'math-quick',
    patch: { policies: { sharing: 'per-role' }, objective: { algorithm: 'grpo_token' } },
  },
  'math-drmas': {
    description: 'Baseline: Dr. MAS (advantages per group and agent role), per-role policies',
    base: 'math-quick',
    patch: { policies: { sharing: 'per-role' }, objective: { algorithm: 'drmas' } },
  },
  'math-srpo': {
    description: "SRPO with per-role policies (the paper's setwise regime)",
    base: 'math-quick',
    patch: { policies: { sharing: 'per-role' }, objective: { algorithm: 'srpo' } },
  },
  // The ablations' base: math-quick warm-started on episodes of K = 1, 2 and 3 (mixed K), so that
  // K = 1 and K = 3 start from a team that has seen that many solver outputs. math-quick's own
  // warm start only ever saw K = 2: from it, K = 3 starts at 0.000 Avg@4 and the ablation measures
  // the mismatch (docs/RESULTS.md, Table 3).
  'math-ablation': {
    description: 'Ablation base: math-quick with K drawn from {1, 2, 3} per episode, warm-started on the same mix',
    base: 'math-quick',
    patch: {
      workflow: { name: 'math', options: { solvers: { mode: 'mixed', ks: [1, 2, 3] }, maxLoops: 1 } },
      policies: { init: `${WARMSTART_DIR}/math-tiny-k123` },
    },
  },
  'math-k1': {
    description: 'Ablation: K = 1 (division of labour only)',
    base: 'math-ablation',
    patch: { workflow: { name: 'math', options: { solvers: { mode: 'fixed', k: 1 }, maxLoops: 1 } } },
  },
  'math-k3': {
    description: 'Ablation: K = 3 (joint co-evolution)',
    base: 'math-ablation',
    patch: { workflow: { name: 'math', options: { solvers: { mode: 'fixed', k: 3 }, maxLoops: 1 } } },
  },
  'math-setnorm-sum': { description: 'Ablation: sum set normalisation (c = 1)', base: 'math-k3', patch: { objective: { setNorm: 'none' } } },
  'math-setnorm-mean': { description: 'Ablation: mean set normalisation (c = 1/K)', base: 'math-k3', patch: { objective: { setNorm: 'mean' } } },
  'math-setnorm-sqrt': { description: 'Ablation: sqrt set normalisation (c = 1/sqrt(K), SRPO)', base: 'math-k3', patch: { objective: { setNorm: 'sqrt' } } },
  'math-reduction-token': {
    description: 'Ablation: token reduction instead of event reduction',
    base: 'math-k3',
    patch: { objective: { reduction: 'token' } },
  },
  'external-math-quick': {
    description: "math-quick's team as your own program: examples/agents/math_team.mjs (official openai client) through the lab's endpoint",
    // math-quick's shapes, model and warm start, with the team played by the example program
    // (the built-in workflow's prompts, K = 2 tagged solvers, verifier, reviser or aggregator).
    // Not built on math-quick: its workflow options are the math workflow's.
    patch: {
      steps: 30,
      workflow: {
        name: 'external',
        options: { command: ['node', 'examples/agents/math_team.mjs'], roles: ['solver', 'verifier', 'aggregator'], timeoutS: 600 },
      },
      tasks: { train: ['arith-chain'], eval: ['arith-chain'] },
      policies: { sharing: 'shared', model: 'tiny', modelOverrides: QUICK_MODEL, init: `${WARMSTART_DIR}/math-tiny` },
      rollout: { tasksPerStep: 8, groupSize: 4, maxNewTokens: 32 },
      update: { epochs: 2, miniBatches: 2 },
      optimizer: { lr: 3e-4 },
      eval: { every: 10, n: 4, queries: 40 },
      checkpointEvery: 10,
    },
  },
} satisfies Record<PresetName, Preset>;
