/**
 * `srpo-lab model info|logprobs|generate --model DIR ...`: a Hugging Face model folder (Qwen3,
 * Qwen2/2.5, Llama 3.x; src/core/models/hf) from the command line, for people sizing a run and
 * for checks against transformers.
 *
 * - `info`: architecture and sizes from config.json alone (no weights read): parameters, float32
 *   bytes, trainable parameters and AdamW state with `--lora R`, KV cache and an activation
 *   estimate per 1k tokens (src/core/models/hf/memory.ts).
 * - `logprobs (--ids 1,2,3 | --text "...")`: log p(token i | tokens before it), n-1 values for n
 *   ids: the log-softmax over all vocab_size rows, as transformers and the lab's trainer compute
 *   it (padded rows beyond the tokenizer are only left out of the sampler's choice).
 * - `generate (--ids | --text | --chat "user message")`: new tokens only; `--temperature 0` is
 *   greedy; temperature, top-p and top-k default to generation_config.json's values (as
 *   transformers' generate; greedy where it says `do_sample: false`), else 1, 1, off; stops at
 *   its stop ids (the stop id is kept in `ids`, special tokens are dropped from `text`).
 * With `--json` the last stdout line is the machine-readable result.
 *
 * Not here: reading folders (core/models/hf/load.ts), sampling and scoring (hf/sampler.ts,
 * hf/logprobs.ts). Tests: test/cli/model.test.ts (the fixtures of test/fixtures/hf against
 * transformers' values in their expected.json).
 */
import { currentBackend, initBackend, type BackendRequest } from '../core/models/backend';
import { loadHfModel, readHfFolder, type LoadedHfModel } from '../core/models/hf/load';
import { sequenceLogprobs } from '../core/models/hf/logprobs';
import { TAPE_PROFILES, estimateHfMemory } from '../core/models/hf/memory';
import { sampleHf } from '../core/models/hf/sampler';
import type { ParsedArgs } from './args';

export const MODEL_OPTIONS = [
  'model',
  'adapter',
  'lora',
  'seq-len',
  'ids',
  'text',
  'chat',
  'max-new-tokens',
  'temperature',
  'top-p',
  'top-k',
  'seed',
  'backend',
];
export const MODEL_FLAGS = ['json', 'no-thinking'];

type Out = (line: string) => void;

const SUBCOMMANDS = {
  info: modelInfo,
  logprobs: modelLogprobs,
  generate: modelGenerate,
} satisfies Record<string, (args: ParsedArgs, out: Out) => Promise<void>>;
type Subcommand = keyof typeof SUBCOMMANDS;

export async function modelCommand(args: ParsedArgs, out: Out): Promise<void> {
  const sub = args.positionals[0];
  if (!sub || !Object.hasOwn(SUBCOMMANDS, sub)) {
    throw new Error(`${sub ? `unknown subcommand "${sub}"` : 'missing subcommand'}; valid: ${Object.keys(SUBCOMMANDS).join(', ')}`);
  }
  if (args.positionals.length > 1) throw new Error(`unexpected argument "${args.positionals[1]}"`);
  if (!args.options.model) throw new Error('--model DIR is required (a Hugging Face model folder: config.json, tokenizer.json, *.safetensors)');
  await SUBCOMMANDS[sub as Subcommand](args, out);
}

async function modelInfo(args: ParsedArgs, out: Out): Promise<void> {
  const dir = args.options.model;
  const { config, generation } = readHfFolder(dir);
  const loraR = args.options.lora !== undefined ? intOption(args, 'lora', 1) : undefined;
  const seqLen = args.options['seq-len'] !== undefined ? intOption(args, 'seq-len', 1) : undefined;
  if (seqLen !== undefined && seqLen > config.maxPositions)
    throw new Error(
      `--seq-len ${seqLen} is longer than the model's ${config.maxPositions} positions (max_position_embeddings in ${dir}/config.json): it cannot train or sample sequences that long; use --seq-len ${config.maxPositions} or less`,
    );
  const est = estimateHfMemory(config, { loraR, seqLen });
  const native = estimateHfMemory(config, { loraR, seqLen, profile: 'native' });
  if (args.flags.has('json')) {
    const nativeBackend = {
      labActivationBytesPer1kTokens: native.labActivationBytesPer1kTokens,
      labRecomputeBytesPer1kTokens: native.labRecomputeBytesPer1kTokens,
    };
    out(JSON.stringify({ model: dir, architecture: config.architecture, config, stopIds: generation.stopIds, ...est, nativeBackend }));
    return;
  }
  const c = config;
  out(`model: ${dir}`);
  out(
    `architecture: ${c.architecture}  layers ${c.numLayers}  hidden ${c.hiddenSize}  intermediate ${c.intermediateSize}  heads ${c.numHeads} (kv ${c.numKvHeads}, head_dim ${c.headDim})  vocab ${c.vocabSize}  ${c.tieWordEmbeddings ? 'tied' : 'untied'} head  rope ${c.rope.type} theta ${c.rope.theta}`,
  );
  out(`parameters: ${count(est.parameters)} (${est.parameters})`);
  out(`float32 weights: ${bytes(est.weightBytes)}`);
  out(
    est.lora
      ? `trainable with LoRA r=${est.lora.r} (${est.lora.targetModules.join(', ')}): ${count(est.trainableParameters)} (${est.trainableParameters})`
      : `trainable (full fine-tuning; --lora R for LoRA): ${count(est.trainableParameters)} (${est.trainableParameters})`,
  );
  out(`AdamW optimizer state: ${bytes(est.optimizerBytes)}`);
  out(`KV cache per 1k tokens: ${bytes(est.kvCacheBytesPer1kTokens)}`);
  out(
    `activations per 1k tokens (training, sequences of ${est.seqLen}): ${bytes(est.labActivationBytesPer1kTokens)} as the lab's tfjs step keeps them on wasm, ${bytes(native.labActivationBytesPer1kTokens)} on the native backend (CPU or GPU); ${bytes(est.activationBytesPer1kTokens)} minimum saved for the backward (layers not recomputed, the head's logits one chunk at a time as the lab computes them)`,
  );
  out(
    `a gradient pass whose layers would keep more than update.tapeBudgetMB (default ${TAPE_PROFILES.wasm.defaultBudgetMB} MB on wasm, ${TAPE_PROFILES.native.defaultBudgetMB} MB on the native backend) is split into micro-batches of whole events that fit (one pass each), and a single event over it runs in row blocks (one more forward): its layers keep at most that`,
  );
  out(`stop ids: ${generation.stopIds.join(', ') || '(none)'}`);
}

async function modelLogprobs(args: ParsedArgs, out: Out): Promise<void> {
  await withModel(args, async (m) => {
    const ids = promptIds(args, m, ['ids', 'text']);
    if (ids.length < 2) throw new Error(`logprobs need at least 2 tokens, got ${ids.length}`);
    const logprobs = sequenceLogprobs(m.model, ids);
    if (args.flags.has('json')) {
      out(JSON.stringify({ logprobs }));
      return;
    }
    out(`model: ${m.dir}${m.adapter ? `  adapter: ${m.adapter.dir}` : ''}  tokens: ${ids.length}`);
    for (let i = 0; i < logprobs.length; i++)
      out(`${String(ids[i + 1]).padStart(8)}  ${logprobs[i].toFixed(6).padStart(12)}  ${JSON.stringify(m.tokenizer.decode([ids[i + 1]]))}`);
    out(`sum: ${logprobs.reduce((a, b) => a + b, 0).toFixed(6)} nats`);
  });
}

async function modelGenerate(args: ParsedArgs, out: Out): Promise<void> {
  if (args.options['max-new-tokens'] === undefined) throw new Error('--max-new-tokens N is required');
  const maxNewTokens = intOption(args, 'max-new-tokens', 1);
  await withModel(args, async (m) => {
    const prompt = promptIds(args, m, ['ids', 'text', 'chat']);
    if (prompt.length < 1) throw new Error('the prompt is empty');
    const g = m.generation;
    // generation_config.json's do_sample: false means transformers decodes greedily by default.
    const temperature = numOption(args, 'temperature', g.doSample === false ? 0 : (g.temperature ?? 1), 0, Infinity);
    const topP = numOption(args, 'top-p', g.topP ?? 1, Number.MIN_VALUE, 1);
    const topK = args.options['top-k'] !== undefined ? intOption(args, 'top-k', 0) : (g.topK ?? 0);
    const seed = args.options.seed !== undefined ? intOption(args, 'seed', 0) : 0;
    const [row] = sampleHf(m.model, [prompt], { maxNewTokens, temperature, topP, topK, seed, stopIds: g.stopIds });
    const text = m.tokenizer.decode(row.ids, { skipSpecialTokens: true });
    if (args.flags.has('json')) {
      out(JSON.stringify({ ids: row.ids, text, stopReason: row.stopReason }));
      return;
    }
    out(
      `model: ${m.dir}${m.adapter ? `  adapter: ${m.adapter.dir}` : ''}  prompt tokens: ${prompt.length}  temperature ${temperature}  top-p ${topP}  top-k ${topK || 'off'}  seed ${seed}`,
    );
    out(text);
    out(`(${row.ids.length} tokens, stopped: ${row.stopReason === 'end' ? 'stop id' : 'max tokens'})`);
  });
}

/** Starts the backend, loads the folder (and adapter), runs `fn`, frees the model. */
async function withModel(args: ParsedArgs, fn: (m: LoadedHfModel) => Promise<void>): Promise<void> {
  readHfFolder(args.options.model); // a bad folder fails here, before the backend starts
  // An explicit --backend (or SRPO_LAB_BACKEND) wins; else a backend already started in this process is kept.
  if (args.options.backend !== undefined || !currentBackend()) await initBackend({ requested: args.options.backend as BackendRequest | undefined });
  const m = loadHfModel(args.options.model, { adapter: args.options.adapter });
  try {
    await fn(m);
  } finally {
    m.dispose();
  }
}

/** The prompt of exactly one of `sources` (`--ids 1,2,3`, `--text "..."`, `--chat "message"`). */
function promptIds(args: ParsedArgs, m: LoadedHfModel, sources: ('ids' | 'text' | 'chat')[]): number[] {
  const given = sources.filter((s) => args.options[s] !== undefined);
  if (given.length !== 1)
    throw new Error(
      `give exactly one of ${sources.map((s) => `--${s}`).join(', ')}${given.length ? ` (got ${given.map((s) => `--${s}`).join(' and ')})` : ''}`,
    );
  const value = args.options[given[0]];
  const readers = {
    ids: () => parseIds(value, m.tokenizer.vocabSize),
    text: () => m.tokenizer.encode(value),
    chat: () =>
      m.tokenizer.applyChatTemplate([{ role: 'user', content: value }], {
        addGenerationPrompt: true,
        enableThinking: args.flags.has('no-thinking') ? false : undefined,
      }).ids,
  } satisfies Record<'ids' | 'text' | 'chat', () => number[]>;
  return readers[given[0]]();
}

/** `--ids 1,2,3`: integers in [0, vocabSize), or an error naming the bad entry. */
export function parseIds(value: string, vocabSize: number): number[] {
  const parts = value.split(',').map((s) => s.trim());
  return parts.map((p, i) => {
    if (!/^\d+$/.test(p)) throw new Error(`--ids: entry ${i + 1} "${p}" is not a non-negative integer (expected e.g. --ids 1,2,3)`);
    const id = Number(p);
    if (id >= vocabSize) throw new Error(`--ids: entry ${i + 1} is ${id}, outside the tokenizer's vocabulary [0, ${vocabSize})`);
    return id;
  });
}

function intOption(args: ParsedArgs, name: string, min: number): number {
  const raw = args.options[name];
  const v = Number(raw);
  if (!/^-?\d+$/.test(raw) || v < min) throw new Error(`--${name} must be an integer >= ${min}, got "${raw}"`);
  return v;
}

function numOption(args: ParsedArgs, name: string, fallback: number, min: number, max: number): number {
  const raw = args.options[name];
  if (raw === undefined) return fallback;
  const v = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(v) || v < min || v > max)
    throw new Error(`--${name} must be a number in [${min === Number.MIN_VALUE ? '>0' : min}, ${max}], got "${raw}"`);
  return v;
}

function count(n: number): string {
  return n >= 1e9 ? `${(n / 1e9).toFixed(2)}B` : n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(n);
}

function bytes(n: number): string {
  return n >= 1e9 ? `${(n / 1e9).toFixed(2)} GB` : n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : n >= 1e3 ? `${(n / 1e3).toFixed(1)} kB` : `${n} B`;
}
