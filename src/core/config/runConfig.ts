/**
 * The run configuration: one typed object (zod), every field described (`.describe`, which the
 * new-run form shows as help) with its meaning and a sensible range, validated at every boundary
 * (CLI, API, engine start) and stored frozen with every run. `resolveRunConfig` is the only way
 * in: it fills defaults, validates the workflow's own options through that workflow's schema, and
 * throws an error naming the field, the value and what is allowed (a FieldProblemsError,
 * util/schemaError.ts: that text, and each field's path and sentence as data for the API's form).
 *
 * Not here: the named presets (presets.ts), the trainer that reads this (src/core/train).
 * Tests: test/core/config/describe.test.ts (every field has a description).
 */
import { resolve as resolvePath } from 'node:path';
import { z } from 'zod';
import { datasetTaskSchema, fileSha256, fillDataSlot, stampDatasetTask } from '../data/datasetTasks';
import { TASK_NAMES } from '../data/tasks';
import { BACKEND_NAMES } from '../models/backend';
import { MODEL_PRESET_NAMES } from '../models/config';
import { POLICY_SET_KINDS } from '../models/sharing';
import { objectiveConfigSchema } from '../srpo/config';
import { assertNoForbiddenKeys, forbiddenKeyMessage, isForbiddenKey } from '../../shared/inputGuards';
import { FieldProblemsError, schemaError } from '../util/schemaError';
import { getWorkflow, WORKFLOW_NAMES } from '../workflows/registry';

const int = (min: number, max: number) => z.number().int().min(min).max(max);

/** One task entry: a built-in generator's name or a dataset file (src/core/data/datasetTasks.ts). */
const taskEntrySchema = z.union([
  z.enum(TASK_NAMES).describe('A built-in task generator (src/core/data/tasks).'),
  datasetTaskSchema.describe('A dataset file; its path and content hash are stored with the run.'),
]);
export type TaskEntry = z.output<typeof taskEntrySchema>;

/** Who plays the roles: the run's policies, or the scripted gold policy (src/core/workflows/gold.ts). */
export const POLICY_KINDS = ['model', 'gold'] as const;

export const runConfigSchema = z
  .object({
    name: z.string().max(200).describe('Human-readable run name; empty: the CLI names it after the preset and seed.').default(''),
    seed: int(0, 0xffffffff).describe('Seed of everything random in the run (task order, sampling, shuffles, init). uint32.').default(1),
    steps: int(1, 100_000).describe('Training steps (one rollout batch + its updates each). 1..100000.').default(40),
    // Matched budgets: methods with different K (more tokens per step) compare at equal cost, not at equal steps.
    budget: z
      .object({
        teamTokens: int(1, 1e12)
          .describe(
            'End training once the rollouts have generated this many tokens in all (every member output of every training episode), checked after each step; steps still caps it. 1..1e12; absent: no token budget.',
          )
          .optional(),
        toolCalls: int(1, 1e9)
          .describe(
            'End training once the rollouts have made this many tool calls (retrievals) in all, checked after each step; steps still caps it. 1..1e9; absent: no tool-call budget.',
          )
          .optional(),
      })
      .strict()
      .describe('Matched budgets: end the run at a cost instead of a step count (whichever bound comes first); the report says which bound ended it.')
      .default({}),
    backend: z
      .enum(['auto', ...BACKEND_NAMES])
      .describe('tfjs backend: auto picks node-gpu > node > wasm > cpu (src/core/models/backend.ts).')
      .default('auto'),

    workflow: z
      .object({
        name: z.enum(WORKFLOW_NAMES).describe('Multi-agent workflow: math (router?/solvers/verifier/aggregator), search, or single agent.').default('math'),
        options: z
          .record(z.string(), z.unknown())
          .describe(
            "The workflow's own options (K / router / loops / turns / penalties), validated by its schema " +
              "(src/core/workflows/<name>.ts); e.g. { solvers: { mode: 'fixed', k: 3 }, maxLoops: 1 }.",
          )
          .default({}),
        enableThinking: z
          .boolean()
          .describe(
            "Chat models: the chat template's enable_thinking (Qwen3: false renders an empty <think></think> block, so replies skip the reasoning). null: the template's default.",
          )
          .nullable()
          .default(null),
      })
      .strict()
      .default({ name: 'math', options: {}, enableThinking: null }),

    tasks: z
      .object({
        train: z
          .array(taskEntrySchema)
          .min(1)
          .describe(
            'Tasks to train on, mixed evenly: built-in generator names (train split) or dataset files { dataset: PATH, format?, name?, limit?, split? }.',
          )
          .default(['arith-easy']),
        eval: z
          .array(taskEntrySchema)
          .describe('Benchmarks evaluated: built-in generator names (test split, eval.queries of them) or dataset files (every row, or limit).')
          .default(['arith-easy']),
        paths: z
          .record(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/), z.string().min(1))
          .describe(
            'Files of named dataset slots: an entry (or workflow.options.corpus) written "$NAME" takes tasks.paths.NAME (the *-paper-data presets; --set tasks.paths.aime24=PATH).',
          )
          .default({}),
      })
      .strict()
      .default({ train: ['arith-easy'], eval: ['arith-easy'], paths: {} }),

    policies: z
      .object({
        sharing: z.enum(POLICY_SET_KINDS).describe('shared: one set of weights plays every role; per-role: one set per role.').default('shared'),
        model: z.enum(MODEL_PRESET_NAMES).describe('Model size preset (src/core/models/config.ts): tiny (CPU) … large (GPU).').default('tiny'),
        modelOverrides: z
          .object({
            dModel: int(16, 4096).describe('Override of the residual width d. 16..4096, a multiple of nHeads.'),
            nLayers: int(1, 64).describe('Override of the number of transformer blocks. 1..64.'),
            nHeads: int(1, 64).describe('Override of the number of attention heads (each dModel / nHeads wide). 1..64, must divide dModel.'),
            contextLength: int(8, 8192).describe('Override of the longest sequence (prompt + completion) in tokens. 8..8192.'),
            mlpRatio: z.number().min(1).max(8).describe('Override of the MLP hidden width as a multiple of dModel (GPT-2: 4). 1..8.'),
          })
          .partial()
          .strict()
          .describe("Overrides of the preset's shape (dModel, nLayers, nHeads, contextLength, mlpRatio), e.g. for tests.")
          .default({}),
        // The description sits inside .nullable() so it stays on the string branch of the JSON schema.
        init: z.string().describe('Checkpoint directory to start from (a warm start); null starts from random weights.').nullable().default(null),
        // LoRA over a frozen base (Hugging Face models only; src/core/policies/hf.ts). null: full fine-tuning.
        adapter: z
          .object({
            kind: z.literal('lora').describe('lora: low-rank adapters as peft defines them (A Kaiming-uniform, B zero: step 0 equals the base).'),
            r: int(1, 1024).describe('LoRA rank r. 1..1024; 8-64 typical.').default(16),
            alpha: z
              .number()
              .gt(0)
              .max(4096)
              .describe('lora_alpha: the update is scaled by alpha / r (alpha / sqrt(r) with rslora). > 0; often 2r.')
              .default(32),
            targetModules: z
              .array(z.string().min(1))
              .min(1)
              .describe(
                "Linears adapted in every layer (peft target_modules): q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, or ['all-linear'].",
              )
              .default(['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj']),
            rslora: z.boolean().describe('use_rslora: scale alpha / sqrt(r) instead of alpha / r (steadier at high ranks).').default(false),
            dropout: z
              .number()
              .min(0)
              .lt(1)
              .describe(
                "lora_dropout: dropout on each adapted linear's input before A, in the update's gradient pass only (never in sampling, old log-probs or evaluation), as peft. 0 (off) .. < 1; 0.05-0.1 typical.",
              )
              .default(0),
          })
          .strict()
          .describe(
            'LoRA adapters over one frozen base in memory: shared sharing trains one adapter, per-role one per role; the KL reference is the base with adapters off. null: full fine-tuning (every weight trained). Hugging Face models only.',
          )
          .nullable()
          .default(null),
        kind: z
          .enum(POLICY_KINDS)
          .describe(
            "model: the run's trained policies; gold: a scripted dry-run policy that plays every role from the gold answers (evaluation only: `lab eval --policy gold`).",
          )
          .default('model'),
      })
      .strict()
      .default({ sharing: 'shared', model: 'tiny', modelOverrides: {}, init: null, adapter: null, kind: 'model' }),

    objective: objectiveConfigSchema
      .describe('The objective: registry variant and its options (src/core/srpo/config.ts).')
      .default(objectiveConfigSchema.parse({})),

    optimizer: z
      .object({
        lr: z.number().gt(0).max(1e-2).describe('Adam learning rate. 1e-6..1e-2; tiny CPU models like ~3e-4, LLM-scale 1e-6.').default(3e-4),
        beta1: z.number().min(0).lt(1).describe('Adam beta1. [0, 1).').default(0.9),
        beta2: z.number().min(0).lt(1).describe('Adam beta2. [0, 1).').default(0.999),
        eps: z.number().gt(0).max(1e-3).describe('Adam epsilon. (0, 1e-3].').default(1e-8),
        weightDecay: z.number().min(0).max(0.5).describe('Decoupled weight decay per step (AdamW style), multiplied by lr. [0, 0.5].').default(0),
        gradClip: z.number().gt(0).max(1e6).describe('Global gradient-norm clip (L2 over every trainable tensor). > 0; 1.0 typical.').default(1),
      })
      .strict()
      .default({ lr: 3e-4, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, gradClip: 1 }),

    rollout: z
      .object({
        tasksPerStep: int(1, 4096).describe('Tasks drawn per step (N). 1..4096.').default(8),
        groupSize: int(1, 64).describe('Rollouts per task (G): the size of each comparison group. 2..64 (1 gives no signal).').default(4),
        temperature: z.number().gt(0).max(2).describe('Sampling temperature. (0, 2]; 1 samples the policy itself.').default(1),
        topP: z.number().gt(0).max(1).describe('Nucleus sampling threshold. (0, 1].').default(1),
        maxNewTokens: int(1, 4096).describe('Most tokens one member output may have. 1..4096.').default(32),
      })
      .strict()
      .default({ tasksPerStep: 8, groupSize: 4, temperature: 1, topP: 1, maxNewTokens: 32 }),

    update: z
      .object({
        epochs: int(1, 16).describe('Passes over each rollout batch. 1..16; > 1 lets ratios leave 1 and the clip act (SRPO.md point 4).').default(2),
        miniBatches: int(1, 256).describe('Event-atomic mini-batches per epoch (one optimizer step each). 1..256.').default(2),
        microBatchRows: int(0, 65_536)
          .describe(
            "Most member rows per forward/backward pass: a mini-batch with more is split into event-atomic micro-batches whose gradients add up, with the whole mini-batch's denominators (same update, less memory). 0: no row limit (micro-batches are still packed to fit tapeBudgetMB). 0..65536.",
          )
          .default(0),
        recompute: z
          .boolean()
          .describe(
            "Hugging Face models: recompute each layer's activations in the backward pass instead of keeping them (less memory, ~1.3x the time). Passes over tapeBudgetMB run in row blocks either way.",
          )
          .default(false),
        // The description sits inside .nullable() so it stays on the integer branch of the JSON schema.
        tapeBudgetMB: int(0, 1_048_576)
          .describe(
            "Most memory (MB, by the lab's estimate for the backend) one gradient pass keeps for its backward. A mini-batch over it is split into event-atomic micro-batches that fit (the same update, no extra work); a single event over it runs in blocks of rows, each re-run in the backward (one more forward). null: the backend's default (512 on wasm, whose heap is 4 GB; 4096 on the native backend, CPU or GPU). Raise it on a large GPU; 0: unbounded. 0..1048576.",
          )
          .nullable()
          .default(null),
      })
      .strict()
      .default({ epochs: 2, miniBatches: 2, microBatchRows: 0, recompute: false, tapeBudgetMB: null }),

    kl: z
      .object({
        coef: z.number().min(0).max(10).describe('Coefficient of a KL penalty to the frozen initial policy (k3 per token); 0 disables. [0, 10].').default(0),
      })
      .strict()
      .default({ coef: 0 }),

    eval: z
      .object({
        every: int(0, 100_000).describe('Evaluate every this many steps (and before the first and after the last); 0 disables.').default(10),
        n: int(1, 64).describe('Samples per query (Avg@n, Pass@n). 1..64; the paper reports n = 16.').default(4),
        queries: int(1, 10_000).describe('Queries per benchmark (a prefix of its test split). 1..10000.').default(32),
        temperature: z.number().gt(0).max(2).describe('Sampling temperature for evaluation. (0, 2].').default(1),
        batchEpisodes: int(1, 100_000)
          .describe('Most evaluation episodes sampled in one batch (queries x n, split by query); lower it when evaluation runs out of memory. 1..100000.')
          .default(160),
        storeEpisodes: z
          .boolean()
          .describe(
            "Store each evaluation's episodes (their events and members: prompts, outputs, parse results, rewards) with the evaluation, for the trace viewer's eval split. Off: only the Avg@n / Pass@n results are kept.",
          )
          .default(true),
        storeQueries: int(0, 10_000)
          .describe(
            'Most queries per benchmark whose n episodes each evaluation stores (the first of its eval set; 0: none), so a large evaluation stays small in the database: ~1.6 kB an episode on math-quick, so 64 queries x n = 16 is ~1.6 MB per benchmark and evaluation. 0..10000.',
          )
          .default(64),
        storeTokens: z
          .boolean()
          .describe(
            "Also store the stored eval episodes' token ids and sampler log-probs on the steps that store token detail (tokenDetailEvery): ~3x the bytes (~4.9 kB an episode on math-quick). Token counts are always stored.",
          )
          .default(false),
      })
      .strict()
      .default({ every: 10, n: 4, queries: 32, temperature: 1, batchEpisodes: 160, storeEpisodes: true, storeQueries: 64, storeTokens: false }),

    checkpointEvery: int(0, 100_000).describe('Save a checkpoint every this many steps (and at the end); 0: only at the end.').default(10),
    tokenDetailEvery: int(1, 100_000)
      .describe('Store token ids and log-probs of members every this many steps (event rows always). 1 = every step.')
      .default(1),
  })
  .strict();

export type RunConfig = z.output<typeof runConfigSchema>;
export type RunConfigInput = z.input<typeof runConfigSchema>;

/** Fill defaults and validate, including the workflow's own options; the result is frozen. */
export function resolveRunConfig(input: unknown): RunConfig {
  const parsed = runConfigSchema.safeParse(input ?? {});
  if (!parsed.success) throw schemaError('run config', parsed.error, input);
  const config = parsed.data;
  try {
    config.workflow.options = getWorkflow(config.workflow.name).resolveConfig(config.workflow.options) as Record<string, unknown>;
  } catch (err) {
    // The workflow's own fields, under workflow.options (a workflow's schema throws them as data).
    const message = (err as Error).message;
    const problems =
      err instanceof FieldProblemsError
        ? err.problems.map((p) => ({ path: p.path ? `workflow.options.${p.path}` : 'workflow.options', message: p.message }))
        : [{ path: 'workflow.options', message }];
    throw new FieldProblemsError(`run config: field "workflow.options" (${config.workflow.name}): ${message}`, problems);
  }
  stampDataFiles(config);
  return deepFreeze(config);
}

/**
 * Dataset entries and the search corpus get an absolute path and their file's content hash
 * (once: a stored config keeps its hashes, so a resume can tell a changed file). Relative paths
 * are taken from the working directory of whoever creates the run.
 */
function stampDataFiles(config: RunConfig): void {
  const paths = config.tasks.paths;
  for (const [slot, path] of Object.entries(paths)) paths[slot] = resolvePath(path);
  for (const list of ['train', 'eval'] as const) {
    config.tasks[list] = config.tasks[list].map((entry, i) => {
      if (typeof entry === 'string') return entry;
      const filled = fillDataSlot(entry.dataset, paths);
      // An unfilled "$slot" stays as written: the preset lists still resolve (the UI shows them),
      // and runConfigPathErrors / buildEnvironment refuse the run naming every missing slot.
      if (filled === null) return entry;
      try {
        return stampDatasetTask({ ...entry, dataset: filled, name: entry.name ?? (entry.dataset.startsWith('$') ? entry.dataset.slice(1) : undefined) });
      } catch (err) {
        throw fieldError(`tasks.${list}.${i}.dataset`, err);
      }
    });
  }
  const options = config.workflow.options as { corpus?: unknown; corpusSha256?: unknown };
  const filledCorpus = typeof options.corpus === 'string' ? fillDataSlot(options.corpus, paths) : null;
  if (filledCorpus !== null) {
    const corpus = resolvePath(filledCorpus);
    try {
      options.corpusSha256 ??= fileSha256(corpus);
    } catch (err) {
      throw fieldError('workflow.options.corpus', err);
    }
    options.corpus = corpus;
  }
}

/** `run config: field "PATH": <the cause's message>` as text, and the field with that sentence as data. */
function fieldError(path: string, cause: unknown): FieldProblemsError {
  const message = (cause as Error).message;
  return new FieldProblemsError(`run config: field "${path}": ${message}`, [{ path, message }]);
}

function deepFreeze<T>(x: T): T {
  if (x && typeof x === 'object') {
    for (const v of Object.values(x)) deepFreeze(v);
    Object.freeze(x);
  }
  return x;
}

/**
 * Sets `a.b.c = value` on a plain object (for `--set a.b.c=value`), creating objects on the way.
 * Keys that reach the prototype chain (`__proto__`, `constructor`, `prototype`) are refused.
 */
export function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  const bad = keys.find(isForbiddenKey);
  if (bad !== undefined) throw new Error(forbiddenKeyMessage(bad, `--set ${path}`));
  assertNoForbiddenKeys(value, `--set ${path}`);
  let cur: Record<string, unknown> = target;
  for (const k of keys.slice(0, -1)) {
    if (!Object.hasOwn(cur, k) || cur[k] === undefined) cur[k] = {};
    if (typeof cur[k] !== 'object' || cur[k] === null || Array.isArray(cur[k])) throw new Error(`--set ${path}: "${k}" is not an object`);
    cur = cur[k] as Record<string, unknown>;
  }
  cur[keys[keys.length - 1]] = value;
}
