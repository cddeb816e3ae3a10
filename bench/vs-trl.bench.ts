/**
 * `vs-trl`: the lab's training step beside TRL's GRPOTrainer (CPU torch), the step a user would
 * otherwise run, on the same model folder and batch, back to back in one process tree (TRL in a
 * child process first, then the lab in this one, so neither competes with the other for the
 * cores). `lab_vs_trl` = lab step ms / TRL step ms (medians over VS_TRL_STEPS timed steps after
 * one warm-up step each); `rollout_frac` = the lab's rollout share of that matched step,
 * `rollout_frac_lab_step` = its share of the step the lab runs (the matched one plus its old log-prob pass).
 *
 * Folder: the `42m` real-vocabulary Qwen3 shape of real-shape.bench.ts (hidden 256, 4 layers, 4
 * heads x 64 over 2 KV heads, SwiGLU 768, vocabulary 151,936, tied head), random weights written by
 * the lab's own writer (hf/saveModel.ts), F32. Batch: 8 prompts x 4 samples, 88-token prompts (the
 * same ids on both sides: TRL reads them through a word-level tokenizer, token i = "t<i>"), exactly
 * 32 new tokens (no stop ids on the lab's side, min_new_tokens on TRL's: random weights rarely
 * stop), temperature 1. LoRA r 16, alpha 32, dropout 0 on all seven linears, base frozen.
 *
 * Equal work, not equal names (issue 27 item 5), what each step does on both sides:
 * - one generation of 32 x 32 tokens (lab: models/hf/sampler.ts, tokens chosen on the device);
 * - one forward + backward over the 32 rows and one AdamW step: lab update.epochs 1,
 *   update.miniBatches 1 (its default is 2 epochs of 2 mini-batches); TRL num_iterations 1,
 *   steps_per_generation 1;
 * - old log-probs: TRL with num_iterations 1 computes none (it uses the detached current ones);
 *   the lab's step normally re-scores the rollout for them (SRPO.md point 2), here it takes the
 *   sampler's behaviour log-probs instead (equal up to float rounding), so that pass is not in
 *   the step; it is timed apart and printed as `lab_old_logp_ms`, not counted;
 * - activations kept for the backward on both sides: TRL's gradient_checkpointing (on by default
 *   in its GRPOConfig) off, the lab's update.recompute off and its tape budget 0 (a pass over
 *   the budget would run in row blocks, one more forward); a KV cache in generation on both;
 * - no evaluation, no KL reference (TRL beta 0, lab kl.coef 0), no checkpoint on either side;
 * - reward: a constant-time function of the completion on both sides; the lab's update runs the
 *   registry objective `grpo_token` (srpo/) through train/update.ts `runUpdate`, as its trainer does.
 * The lab runs on the native backend (tfjs-node) where it starts, else wasm (said so); torch with
 * torch.set_num_threads(VS_TRL_THREADS, default 2: one per core of these machines).
 *
 * TRL's Python: VS_TRL_PYTHON, else the virtual environment at VS_TRL_VENV (default
 * /tmp/srpo-trl-venv), built offline from the machine image's wheels (/opt/wheels, /opt/pypi/files,
 * /opt/pypi-more/files, as scripts/fixtures/make_hf_fixtures.py's header does) when it is absent;
 * where it cannot be built, the TRL side is skipped and the output says so (`trl=skipped`).
 * The TRL side is scripts/bench/trl_grpo_step.py. Nothing here asserts on time.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { mergeConfig, presetInput, resolveRunConfig } from '../src/core/config';
import { initBackend } from '../src/core/models/backend';
import { readHfConfig } from '../src/core/models/hf/config';
import { scoreHf, scoreHfData } from '../src/core/models/hf/logprobs';
import { HF_LINEAR_MODULES } from '../src/core/models/hf/memory';
import { HfModel } from '../src/core/models/hf/model';
import { openTensorSource } from '../src/core/models/hf/safetensorsFile';
import { sampleHf } from '../src/core/models/hf/sampler';
import { saveMergedModel } from '../src/core/models/hf/saveModel';
import { mulberry32 } from '../src/core/models/random';
import type { CompletionRow, Policies, PolicyRef, TrainingNoise } from '../src/core/policies/types';
import { objectiveConfig, prepareObjectiveBatch, type ObjectiveBatch } from '../src/core/srpo';
import { AdamW } from '../src/core/train/optimizer';
import { runUpdate, type MemberSample } from '../src/core/train/update';
import { headline, keyValues, median, QWEN3_SHAPES, randomSource } from './lib';

const env = (name: string, dflt: number) => (process.env[name] !== undefined ? Number(process.env[name]) : dflt);
const PROMPTS = env('VS_TRL_PROMPTS', 8);
const SAMPLES = env('VS_TRL_SAMPLES', 4);
const PROMPT_TOKENS = env('VS_TRL_PROMPT', 88);
const NEW_TOKENS = env('VS_TRL_NEW', 32);
const STEPS = env('VS_TRL_STEPS', 2);
const THREADS = env('VS_TRL_THREADS', 2);
const LORA = { r: 16, alpha: 32 };
const POLICY = 'shared';

/** The 42M real-vocabulary Qwen3 shape (real-shape.bench.ts `42m`). */
const SHAPE_42M = { ...QWEN3_SHAPES['42m'], torch_dtype: 'float32' };

/** Writes the 42M folder with the lab's writer; returns its path. */
function writeFolder(root: string): string {
  const src = join(root, 'config');
  mkdirSync(src);
  writeFileSync(join(src, 'config.json'), JSON.stringify(SHAPE_42M, null, 2));
  const config = readHfConfig(src);
  const out = join(root, '42m');
  saveMergedModel(out, { sourceDir: src, config, source: randomSource(config, 11), dtype: 'F32' });
  return out;
}

/** The Python that has TRL: VS_TRL_PYTHON, else the venv (built from the local wheels when absent); null with the reason where neither works. */
function trlPython(): { python: string | null; why: string } {
  const works = (py: string) => spawnSync(py, ['-c', 'import trl, peft, torch'], { encoding: 'utf8' }).status === 0;
  if (process.env.VS_TRL_PYTHON) {
    return works(process.env.VS_TRL_PYTHON)
      ? { python: process.env.VS_TRL_PYTHON, why: '' }
      : { python: null, why: `VS_TRL_PYTHON ${process.env.VS_TRL_PYTHON} cannot import trl, peft, torch` };
  }
  const venv = process.env.VS_TRL_VENV ?? join(tmpdir(), 'srpo-trl-venv');
  const py = join(venv, 'bin', 'python');
  if (existsSync(py) && works(py)) return { python: py, why: '' };
  const stores = ['/opt/wheels', '/opt/pypi/files', '/opt/pypi-more/files'].filter((d) => existsSync(d));
  if (!stores.length) return { python: null, why: 'no local wheel store (/opt/wheels, /opt/pypi/files) to build the venv from' };
  // torch: the CPU build where the store has one (a CUDA build pulls packages the store may lack).
  const cpuTorch = stores
    .flatMap((d) => readdirSync(d))
    .map((f) => /^torch-([^-]+\+cpu)-/.exec(f)?.[1])
    .find((v) => v !== undefined);
  console.log(`building ${venv} from ${stores.join(', ')} (offline)`);
  const mk = spawnSync('python3', ['-m', 'venv', venv], { encoding: 'utf8' });
  if (mk.status !== 0) return { python: null, why: `python3 -m venv failed: ${(mk.stderr ?? '').trim().split('\n').pop()}` };
  const pip = spawnSync(
    join(venv, 'bin', 'pip'),
    [
      'install',
      '-q',
      '--no-index',
      ...stores.flatMap((d) => ['--find-links', d]),
      cpuTorch ? `torch==${cpuTorch}` : 'torch',
      'trl',
      'peft',
      'transformers',
      'accelerate',
      'datasets',
    ],
    { encoding: 'utf8' },
  );
  if (pip.status !== 0 || !works(py)) return { python: null, why: `pip from the local wheels failed: ${(pip.stderr ?? '').trim().split('\n').pop()}` };
  return { python: py, why: '' };
}

/** TRL's side in a child process: { stepMs, genMs } or null with the reason. */
function runTrl(folder: string, prompts: number[][], root: string): { stepMs: number; genMs: number; line: string } | { skipped: string } {
  const { python, why } = trlPython();
  if (!python) return { skipped: why };
  const spec = join(root, 'trl.json');
  writeFileSync(
    spec,
    JSON.stringify({
      model: folder,
      prompts,
      samples: SAMPLES,
      new_tokens: NEW_TOKENS,
      lora_r: LORA.r,
      lora_alpha: LORA.alpha,
      steps: STEPS,
      threads: THREADS,
      seed: 1,
    }),
  );
  const script = resolve(__dirname, '../scripts/bench/trl_grpo_step.py');
  const r = spawnSync(python, [script, spec], { encoding: 'utf8', env: { ...process.env, OMP_NUM_THREADS: String(THREADS), TOKENIZERS_PARALLELISM: 'false' } });
  const line = (r.stdout ?? '').split('\n').find((l) => l.startsWith('TRL ')) ?? '';
  if (r.status !== 0 || !line) return { skipped: `TRL run failed (exit ${r.status}): ${(r.stderr ?? '').trim().split('\n').slice(-3).join(' | ')}` };
  const kv = keyValues(line);
  return { stepMs: Number(kv.step_ms), genMs: Number(kv.gen_ms), line };
}

/**
 * The part of the run's Policies (src/core/policies/types.ts) that train/update.ts `runUpdate`
 * calls, over one HfModel with one LoRA adapter: ids, score (the scorer the lab's HF policies
 * use), trainable, bumpVersion. The rest is not used by an update and says so.
 */
class BenchPolicies {
  readonly padId = 0;
  readonly hasReference = false;
  private readonly ref: PolicyRef = { id: POLICY, roles: ['solver'], version: 0 };
  private readonly vars: ReadonlyMap<string, tf.Variable>;
  constructor(private readonly model: HfModel) {
    this.vars = new Map(model.adapterVariables(POLICY).map((v) => [v.name.slice(v.name.lastIndexOf('/') + 1), v]));
  }
  ids(): string[] {
    return [POLICY];
  }
  policies(): PolicyRef[] {
    return [this.ref];
  }
  get(): PolicyRef {
    return this.ref;
  }
  bumpVersion(): number {
    return ++this.ref.version;
  }
  score(_id: string, rows: readonly CompletionRow[], minCompletionLength: number, _noise?: TrainingNoise): tf.Tensor2D {
    const s = scoreHf(this.model, rows, { adapter: POLICY, minCompletionLength });
    s.mask.dispose();
    return s.logp; // [B, T] nats
  }
  trainable(): ReadonlyMap<string, tf.Variable> {
    return this.vars;
  }
}

interface LabFigures {
  stepMs: number;
  rolloutMs: number;
  updateMs: number;
  oldLogpMs: number;
  backend: string;
}

/** The lab's side: warm-up + STEPS steps of rollout then update; the old log-prob pass timed once apart. */
async function runLab(folder: string, prompts: number[][]): Promise<LabFigures> {
  let backend = 'node';
  try {
    await initBackend({ requested: 'node' });
  } catch (err) {
    console.log(`native backend absent (${(err as Error).message.split('\n')[0]}); the lab runs on wasm`);
    await initBackend({ requested: 'wasm' });
    backend = 'wasm';
  }
  const source = openTensorSource(folder);
  const model = HfModel.fromSource(readHfConfig(folder), source, { trainable: 'lora', tapeBudgetBytes: 0 }); // one plain pass, as TRL's
  source.close?.();
  model.addAdapter(POLICY, { r: LORA.r, alpha: LORA.alpha, rslora: false, targetModules: [...HF_LINEAR_MODULES], dropout: 0 }, 3);
  const policies = new BenchPolicies(model);
  const config = resolveRunConfig(
    mergeConfig(presetInput('math-quick'), {
      update: { epochs: 1, miniBatches: 1, microBatchRows: 0, recompute: false },
      optimizer: { lr: 1e-5 },
      kl: { coef: 0 },
    }),
  );
  const objective = objectiveConfig({ algorithm: 'grpo_token' });
  const optimizers = new Map([[POLICY, new AdamW(policies.trainable(), config.optimizer)]]);
  const rows = prompts.flatMap((p) => Array.from({ length: SAMPLES }, () => p));
  const steps: { rollout: number; update: number }[] = [];
  let oldLogpMs = 0;
  for (let s = 0; s <= STEPS; s++) {
    const t0 = performance.now();
    const out = sampleHf(model, rows, { adapter: POLICY, maxNewTokens: NEW_TOKENS, temperature: 1, stopIds: [], seed: 100 + s });
    const t1 = performance.now();
    const samples: MemberSample[] = out.map((o, i) => ({ policyId: POLICY, promptTokens: rows[i], outputTokens: o.ids }));
    const batch: ObjectiveBatch = { events: [], members: [] };
    out.forEach((o, i) => {
      const id = `e${i}`;
      batch.events.push({ id, group: `p${Math.floor(i / SAMPLES)}`, reward: o.ids.reduce((a, b) => a + b, 0) % 7, expectedK: 1 });
      batch.members.push({ event: id, role: 'solver', logpCur: o.logp, logpOld: o.logp, mask: o.logp.map(() => 1) }); // old = behaviour (TRL: detached current)
    });
    runUpdate(prepareObjectiveBatch(batch, objective), samples, objective, {
      policies: policies as unknown as Policies,
      optimizers,
      config,
      padId: 0,
      seed: s,
    });
    const t2 = performance.now();
    if (s > 0) steps.push({ rollout: t1 - t0, update: t2 - t1 });
    else {
      // Not in the step: what the lab's own step adds when it re-scores the rollout for old log-probs (16 rows a pass, as policies/hf.ts).
      const t3 = performance.now();
      const pairs = rows.map((p, i) => ({ prompt: p, completion: out[i].ids }));
      for (let i = 0; i < pairs.length; i += 16) scoreHfData(model, pairs.slice(i, i + 16), { adapter: POLICY, entropy: true });
      oldLogpMs = performance.now() - t3;
    }
  }
  model.dispose();
  const stepMs = median(steps.map((x) => x.rollout + x.update));
  return { stepMs, rolloutMs: median(steps.map((x) => x.rollout)), updateMs: median(steps.map((x) => x.update)), oldLogpMs, backend };
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'srpo-vs-trl-'));
  try {
    const folder = writeFolder(root);
    const rand = mulberry32(7);
    const prompts = Array.from({ length: PROMPTS }, () => Array.from({ length: PROMPT_TOKENS }, () => Math.floor(rand() * 151643)));
    console.log(
      `42m folder, ${PROMPTS} prompts x ${SAMPLES} samples, ${PROMPT_TOKENS}-token prompts, ${NEW_TOKENS} new tokens, LoRA r ${LORA.r} on all linears`,
    );
    console.log(
      'matched work per step: 1 generation (KV cache), 1 forward + backward (no recomputation: TRL gradient_checkpointing off), 1 AdamW step; old log-probs = behaviour (TRL: detached current); epochs 1, 1 mini-batch; no eval, no KL, no checkpoint',
    );
    const trl = runTrl(folder, prompts, root);
    if ('skipped' in trl) console.log(`TRL skipped: ${trl.skipped}`);
    else console.log(`  ${trl.line}`);
    const lab = await runLab(folder, prompts);
    console.log(
      `  lab (${lab.backend}) step ${lab.stepMs.toFixed(0)} ms = rollout ${lab.rolloutMs.toFixed(0)} + update ${lab.updateMs.toFixed(0)}; old log-prob pass (not in the step) ${lab.oldLogpMs.toFixed(0)} ms`,
    );
    const keys: Record<string, number | string> = {
      backend: lab.backend,
      lab_step_ms: lab.stepMs,
      rollout_frac: lab.rolloutMs / lab.stepMs,
      // The lab's own step re-scores the rollout for old log-probs (left out of the matched step
      // above): the rollout's share of that step, as issue 27 measured its ~50%.
      rollout_frac_lab_step: lab.rolloutMs / (lab.stepMs + lab.oldLogpMs),
      lab_rollout_ms: lab.rolloutMs,
      lab_update_ms: lab.updateMs,
      lab_old_logp_ms: lab.oldLogpMs,
    };
    if ('skipped' in trl) keys.trl = 'skipped';
    else Object.assign(keys, { lab_vs_trl: lab.stepMs / trl.stepMs, trl_step_ms: trl.stepMs, trl_gen_ms: trl.genMs, trl_gen_frac: trl.genMs / trl.stepMs });
    headline('vs-trl', keys);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
