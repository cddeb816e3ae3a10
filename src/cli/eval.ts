/**
 * `srpo-lab eval`: evaluation without training, in this process, writing nothing to any run.
 *
 *   eval RUN [--checkpoint STEP]            a run's checkpoint with the run's own eval settings
 *   eval --data PATH[,PATH...] [--format NAME] --workflow math|search|single [--corpus PATH]
 *        (--policy gold | --run N [--checkpoint S] | --model DIR) [--n N] [--limit N] [--json]
 *   eval --preset NAME | --config FILE [--set k=v ...] --policy gold     (smoke-test a preset)
 *
 * It prints the paper's table (Tables 1-2: Avg@n and Pass@n per benchmark and their macro
 * average) with the cost columns (tokens, calls and tool calls per query, U_tok: correct samples
 * per million generated tokens); with `--json` the last line is
 * `{"benchmarks":[{"name","queries","avg","pass"}...],"macro":{"avg","pass"}}`. The policy is an
 * entry of POLICY_SOURCES: `gold` (the scripted dry run, src/core/workflows/gold.ts), a run's
 * checkpoint, or a Hugging Face model folder (models/hf: Qwen3, Qwen2.5, Llama 3; each member's
 * prompt is a user turn through the model's chat template; `--set rollout.maxNewTokens=N` caps
 * each output, `--set eval.temperature=T`, `--set backend=node-gpu`).
 * `--checkpoint N` names the checkpoint after N updates (src/shared/stepConvention.ts: the step
 * `show` lists), and is evaluated with the seed of the run's evaluation at step N (after N
 * updates), so on the CPU backends a re-evaluation equals what the run recorded there.
 *
 * Tests: test/cli/train.test.ts (RUN), test/cli/evalData.test.ts (--data, --policy gold, --json).
 */
import { existsSync } from 'node:fs';
import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { applySets, labRoot, resolveRunConfig, type RunConfig } from '../core/config';
import { DATASET_FORMATS, loadDatasetFile, type DatasetFormat } from '../core/data/datasets';
import { initBackend } from '../core/models/backend';
import { openPolicies } from '../core/policies/registry';
import { buildEnvironment, type EnvironmentOptions } from '../core/train/environment';
import { loadHfModel, readHfFolder } from '../core/models/hf/load';
import { evaluate, evaluateGold, evaluateWith, hfRunner, modelRunner, type EvaluationResult } from '../core/train/evaluate';
import { WORKFLOW_NAMES } from '../core/workflows/registry';
import type { ParsedArgs } from './args';
import { dbPathOf, fixed, getRunOrThrow, num, openLabForReading, runArg, table } from './lab';
import { evaluationTable } from './show';
import { configFromArgs } from './train';
import { corpusProgressLine } from '../shared/corpusProgress';
import { checkpointUpdates, pickCheckpoint } from '../shared/stepConvention';

export const EVAL_OPTIONS = ['db', 'checkpoint', 'data', 'format', 'workflow', 'corpus', 'model', 'run', 'policy', 'n', 'limit', 'preset', 'config'];
export const EVAL_FLAGS = ['json'];

const POLICY_NAMES = ['gold'] as const;

interface Evaluated {
  result: EvaluationResult;
  /** What played the roles, for the header line. */
  who: string;
}

type Out = (line: string) => void;

/**
 * A run's checkpoint (`--checkpoint STEP`, else the last) and its folder on disk, with the run's
 * stored config (unresolved): errors name the run, the steps that exist, or the missing folder.
 */
function runCheckpoint(args: ParsedArgs, runId: number) {
  const { store, dbPath } = openLabForReading(args);
  try {
    const run = getRunOrThrow(store, runId, dbPath);
    // --checkpoint N: the checkpoint after N updates (src/shared/stepConvention.ts).
    const ckpt = pickCheckpoint(store.checkpoints(runId), args.options.checkpoint, `run ${runId}`, '--checkpoint');
    const updates = checkpointUpdates(ckpt.step);
    const dir = isAbsolute(ckpt.path) ? ckpt.path : resolve(dirname(dbPath), ckpt.path);
    if (!existsSync(dir))
      throw new Error(
        `the checkpoint of step ${updates} of run ${runId} is missing on disk: ${dir} (moved or deleted; a database and its .runs folder move together)`,
      );
    return { ckpt, updates, dir, dbPath, storedConfig: run.config };
  } finally {
    store.close();
  }
}

/** Who plays the roles: one entry per source; each evaluates `config` and says what it used. */
const POLICY_SOURCES = {
  gold: async (config: RunConfig, _args: ParsedArgs, envOptions: EnvironmentOptions): Promise<Evaluated> => {
    const env = buildEnvironment(config, { ...envOptions, purpose: 'eval' });
    return { result: evaluateGold(env, config), who: 'the gold policy (scripted from the gold answers)' };
  },
  run: async (config: RunConfig, args: ParsedArgs, envOptions: EnvironmentOptions, out: Out): Promise<Evaluated> => {
    const runId = positiveInt(args.options.run, '--run');
    const { updates, dir } = runCheckpoint(args, runId);
    const backend = await initBackend({ requested: config.backend });
    const env = buildEnvironment(config, { ...envOptions, purpose: 'eval' });
    const policies = openPolicies(config, { baseDir: labRoot(), resumeDir: dir, withReference: false });
    try {
      const result = evaluateWith(env, config, modelRunner(config, policies), updates, (done, total) => out(`  ${done}/${total} queries`));
      return { result, who: `run ${runId}, checkpoint of step ${updates} (${dir}); backend ${backend.name}` };
    } finally {
      policies.dispose();
    }
  },
  model: async (config: RunConfig, args: ParsedArgs, envOptions: EnvironmentOptions, out: Out): Promise<Evaluated> => {
    const dir = resolve(args.options.model);
    readHfFolder(dir); // a bad folder fails here, before the backend starts or data loads
    const env = buildEnvironment(config, { ...envOptions, purpose: 'eval' });
    const backend = await initBackend({ requested: config.backend });
    const m = loadHfModel(dir);
    try {
      const result = evaluateWith(env, config, hfRunner(m, config), 0, (done, total) => out(`  ${done}/${total} queries`));
      return { result, who: `model ${dir} (${m.config.architecture}); backend ${backend.name}; max ${config.rollout.maxNewTokens} new tokens` };
    } finally {
      m.dispose();
    }
  },
};
type PolicySource = keyof typeof POLICY_SOURCES;

function positiveInt(v: string | undefined, flag: string): number {
  const n = Number(v);
  if (v === undefined || !Number.isInteger(n) || n < 1) throw new Error(`${flag} expects a positive integer, got ${v ?? 'nothing'}`);
  return n;
}

function policySource(args: ParsedArgs, config: RunConfig): PolicySource {
  const chosen: PolicySource[] = [];
  const policy = args.options.policy;
  if (policy !== undefined) {
    if (!(POLICY_NAMES as readonly string[]).includes(policy))
      throw new Error(`--policy "${policy}" is not a scripted policy; valid: ${POLICY_NAMES.join(', ')}`);
    chosen.push('gold');
  }
  if (args.options.run !== undefined) chosen.push('run');
  if (args.options.model !== undefined) chosen.push('model');
  if (chosen.length === 0 && config.policies.kind === 'gold') chosen.push('gold');
  if (chosen.length !== 1)
    throw new Error(
      `eval needs exactly one of --policy gold, --run N, --model DIR${chosen.length ? `; got ${chosen.map((c) => `--${c === 'gold' ? 'policy' : c}`).join(' and ')}` : ''}`,
    );
  return chosen[0];
}

/**
 * The run config evaluated: a preset / config file (with its --sets), else a run's config, else
 * the defaults; then --workflow, --data, --corpus, --n and --policy as overrides (applySets: a
 * new workflow starts its options afresh).
 */
function evalConfig(args: ParsedArgs): RunConfig {
  let input: Record<string, unknown> = {};
  if (args.options.preset !== undefined || args.options.config !== undefined) {
    input = structuredClone(configFromArgs(args).config) as unknown as Record<string, unknown>;
  } else {
    if (args.options.run !== undefined) {
      const runId = positiveInt(args.options.run, '--run');
      const { store, dbPath } = openLabForReading(args);
      try {
        input = structuredClone(getRunOrThrow(store, runId, dbPath).config) as Record<string, unknown>;
      } finally {
        store.close();
      }
    }
    input = applySets(input, args.sets);
  }
  const sets: Record<string, unknown> = {};
  const workflow = args.options.workflow;
  if (workflow !== undefined && !(WORKFLOW_NAMES as readonly string[]).includes(workflow))
    throw new Error(`--workflow "${workflow}" is not a workflow; valid: ${WORKFLOW_NAMES.join(', ')}`);
  if (workflow !== undefined) sets['workflow.name'] = workflow;
  const format = args.options.format;
  if (format !== undefined && !(DATASET_FORMATS as readonly string[]).includes(format))
    throw new Error(`--format "${format}" is not a dataset format; valid: ${DATASET_FORMATS.join(', ')}`);
  const data = args.options.data;
  if (data !== undefined) {
    if (workflow === undefined && input.workflow === undefined) throw new Error(`eval --data needs --workflow ${WORKFLOW_NAMES.join('|')}`);
    const limit = args.options.limit !== undefined ? positiveInt(args.options.limit, '--limit') : undefined;
    const entries = data
      .split(',')
      .filter((p) => p.trim() !== '')
      .map((p) => ({ dataset: resolve(p.trim()), ...(format ? { format: format as DatasetFormat } : {}), ...(limit ? { limit } : {}) }));
    if (entries.length === 0) throw new Error('--data names no file');
    for (const e of entries) if (!existsSync(e.dataset)) throw new Error(`--data: "${e.dataset}" does not exist`);
    sets['tasks.train'] = entries;
    sets['tasks.eval'] = entries;
    // The single agent answers in the domain of the data (a boxed answer or an answer tag).
    if ((workflow ?? (input.workflow as { name?: string } | undefined)?.name) === 'single') {
      sets['workflow.options.domain'] = loadDatasetFile(entries[0].dataset, entries[0].format, { limit: 1 }).domain;
    }
  }
  if (args.options.corpus !== undefined) {
    sets['workflow.options.corpus'] = resolve(args.options.corpus);
    sets['workflow.options.corpusSha256'] = undefined; // hashed afresh for this file
  }
  if (args.options.n !== undefined) sets['eval.n'] = positiveInt(args.options.n, '--n');
  else if (args.options.policy === 'gold') sets['eval.n'] = 1; // the gold policy is deterministic
  if (args.options.policy === 'gold') sets['policies.kind'] = 'gold';
  return resolveRunConfig(stripUndefined(applySets(input, sets)));
}

function stripUndefined<T>(x: T): T {
  return JSON.parse(JSON.stringify(x)) as T;
}

/** The paper's table with the cost columns, the macro row, and the --json line. */
export function paperTable(result: EvaluationResult, n: number): string[] {
  const s = result.summary;
  const rows = s.benchmarks.map((b) => [
    b.benchmark,
    String(b.queries),
    fixed(b.avgAtN * 100, 1),
    fixed(b.passAtN * 100, 1),
    num(b.tokensPerQuery, 1),
    num(b.callsPerQuery, 2),
    num(b.toolCallsPerQuery, 2),
    b.uTok === null ? '-' : num(b.uTok, 0),
    num(b.latencyP50Ms, 1),
  ]);
  rows.push([
    'macro',
    String(s.benchmarks.reduce((a, b) => a + b.queries, 0)),
    fixed(s.macro.avgAtN * 100, 1),
    fixed(s.macro.passAtN * 100, 1),
    num(s.overall.tokensPerQuery, 1),
    num(s.overall.callsPerQuery, 2),
    num(s.overall.toolCallsPerQuery, 2),
    s.overall.uTok === null ? '-' : num(s.overall.uTok, 0),
    num(s.overall.latencyP50Ms, 1),
  ]);
  return table(['benchmark', 'queries', `avg@${n} %`, `pass@${n} %`, 'tokens/q', 'calls/q', 'tools/q', 'U_tok', 'p50 ms'], rows);
}

export function evalJson(result: EvaluationResult): string {
  const s = result.summary;
  return JSON.stringify({
    benchmarks: s.benchmarks.map((b) => ({ name: b.benchmark, queries: b.queries, avg: b.avgAtN, pass: b.passAtN })),
    macro: { avg: s.macro.avgAtN, pass: s.macro.passAtN },
  });
}

export async function evalCommand(args: ParsedArgs, out: Out): Promise<void> {
  const newForm = ['data', 'preset', 'config', 'policy', 'model', 'run', 'workflow', 'corpus', 'n', 'limit', 'format'].some(
    (o) => args.options[o] !== undefined,
  );
  if (args.positionals[0] !== undefined && !newForm) return evalRunCheckpoint(args, out);
  if (args.positionals[0] !== undefined) {
    if (args.options.run !== undefined) throw new Error('eval: give the run either as RUN or as --run N, not both');
    args = { ...args, options: { ...args.options, run: args.positionals[0] } };
  }
  const config = evalConfig(args);
  const source = policySource(args, config);
  const dbPath = dbPathOf(args);
  const indexDir = resolve(dirname(dbPath), `${basename(dbPath)}.corpora`);
  const t0 = performance.now();
  const envOptions: EnvironmentOptions = {
    indexDir,
    onIndexProgress: (p) => out(corpusProgressLine(p)),
  };
  const { result, who } = await POLICY_SOURCES[source](config, args, envOptions, out);
  const benchmarks = config.tasks.eval.map((e) => (typeof e === 'string' ? e : e.dataset)).join(', ');
  out(`${who}; workflow ${config.workflow.name}; n ${config.eval.n}, temperature ${config.eval.temperature}; ${num((performance.now() - t0) / 1000, 1)} s`);
  out(`data: ${benchmarks}`);
  for (const line of paperTable(result, config.eval.n)) out(line);
  if (args.flags.has('json')) out(evalJson(result));
}

/** `eval RUN [--checkpoint STEP]`: a run's checkpoint with the run's own eval settings. */
async function evalRunCheckpoint(args: ParsedArgs, out: Out): Promise<void> {
  const runId = runArg(args, 'eval');
  const { updates, dir, storedConfig, dbPath } = runCheckpoint(args, runId);
  const config = resolveRunConfig(storedConfig);
  const backend = await initBackend({ requested: config.backend });
  const policies = openPolicies(config, { baseDir: labRoot(), resumeDir: dir, withReference: false });
  try {
    const t0 = performance.now();
    const result = evaluate(
      buildEnvironment(config, { purpose: 'eval', indexDir: resolve(dirname(dbPath), `${basename(dbPath)}.corpora`) }),
      config,
      policies,
      updates,
    );
    out(
      `run ${runId}, checkpoint of step ${updates} (${dir}); backend ${backend.name}; ` +
        `${config.eval.queries} queries x n ${config.eval.n}, temperature ${config.eval.temperature}; ${num((performance.now() - t0) / 1000, 1)} s`,
    );
    for (const line of evaluationTable(result.records.map((r) => ({ ...r, step: updates })))) out(line);
    out(`macro avg ${num(result.metrics['eval/macro/avg'])}  macro pass ${num(result.metrics['eval/macro/pass'])}`);
    if (args.flags.has('json')) out(evalJson(result));
  } finally {
    policies.dispose();
  }
}
