/**
 * `srpo-lab show RUN`: one run in detail: what it is (config summary: a Hugging Face run's model
 * folder and architecture, evaluation "off" when eval.every = 0), where it stands (status, error,
 * times, the backend that ran, checkpoints), its summary (src/shared/runOutcome.ts: what ended it,
 * final and best evaluation, tokens, time), health warnings (src/shared/runHealth.ts), the latest
 * training metrics and its evaluations table.
 * Steps are updates done (src/shared/stepConvention.ts): progress is updates committed of the
 * planned steps, checkpoints are named by the updates they hold (the N `eval --checkpoint N` and
 * `export-model --step N` take), a training metric's step is its update, an evaluation at step s
 * is the policy after s updates (the last, at step S, the final one); the final eval-only
 * record's engine figures are not a training step's. Read only. Tests: test/cli/train.test.ts,
 * test/cli/help.test.ts, test/e2e/stepAgreement.test.ts.
 */
import { resolve } from 'node:path';
import { isHfModelFolder, labRoot, type RunConfig } from '../core/config';
import { datasetTaskName } from '../core/data';
import { seriesInStepsOf } from '../core/host/runQueries';
import { readHfConfig } from '../core/models/hf/config';
import type { LabStore, RunRecord, StoredEvaluation } from '../core/store';
import { BUDGET_METRICS } from '../shared/budget';
import { HEADLINE_KEYS } from '../shared/metricCatalogue';
import { runOutcome } from '../shared/runOutcome';
import { healthKeys, healthLine, runHealth } from '../shared/runHealth';
import { checkpointSteps, evalOnlyRecord, evaluationLabel, metricStepKind, runUpdatesDone, stepOfRecord } from '../shared/stepConvention';
import type { ParsedArgs } from './args';
import { duration, fixed, getRunOrThrow, labCommand, num, openLabForReading, runArg, table, when } from './lab';

export function evaluationTable(
  evals: readonly Pick<
    StoredEvaluation,
    'step' | 'benchmark' | 'n' | 'queries' | 'avgAtN' | 'passAtN' | 'tokensPerQuery' | 'callsPerQuery' | 'toolCallsPerQuery'
  >[],
): string[] {
  return table(
    ['step', 'benchmark', 'n', 'queries', 'avg@n', 'pass@n', 'tokens/q', 'calls/q', 'tools/q'],
    evals.map((e) => [
      String(e.step),
      e.benchmark,
      String(e.n),
      String(e.queries),
      fixed(e.avgAtN),
      fixed(e.passAtN),
      num(e.tokensPerQuery, 1),
      num(e.callsPerQuery, 2),
      num(e.toolCallsPerQuery, 2),
    ]),
  );
}

/** A task entry as `show` prints it: a generator's name, or a dataset file's benchmark name and path. */
function taskLabel(entry: RunConfig['tasks']['train'][number]): string {
  return typeof entry === 'string' ? entry : `${datasetTaskName(entry)} (${entry.dataset}${entry.limit !== undefined ? `, limit ${entry.limit}` : ''})`;
}

/**
 * The policies' model in words: the folder `policies.init` names and its architecture (its
 * config.json's model_type; the `model` size preset does not apply to it), else the lab's own
 * model of the `model` preset. Reads config.json only; a folder gone since says so.
 */
export function modelText(c: RunConfig): string {
  const init = c.policies.init;
  const dir = init ? resolve(labRoot(), init) : null;
  if (!dir || !isHfModelFolder(dir))
    return `lab model ${c.policies.model}${Object.keys(c.policies.modelOverrides).length ? ` ${JSON.stringify(c.policies.modelOverrides)}` : ''}, init ${init ?? 'random'}`;
  let arch: string;
  try {
    arch = readHfConfig(dir).architecture;
  } catch {
    arch = 'its config.json unreadable now';
  }
  const adapter = c.policies.adapter ? `LoRA r ${(c.policies.adapter as { r?: number }).r ?? '?'}` : 'full fine-tune';
  return `Hugging Face model ${init} (${arch}), ${adapter}`;
}

export function configSummary(c: RunConfig, model: string = modelText(c)): string[] {
  return [
    `  workflow   ${c.workflow.name} ${JSON.stringify(c.workflow.options)}`,
    `  tasks      train ${c.tasks.train.map(taskLabel).join(', ')}; eval ${c.tasks.eval.map(taskLabel).join(', ')}`,
    `  objective  ${c.objective.algorithm} ${JSON.stringify(c.objective)}`,
    `  policies   ${c.policies.sharing}, ${model}`,
    `  rollout    N ${c.rollout.tasksPerStep} tasks x G ${c.rollout.groupSize}, temperature ${c.rollout.temperature}, top-p ${c.rollout.topP}, max ${c.rollout.maxNewTokens} tokens`,
    `  update     ${c.update.epochs} epochs x ${c.update.miniBatches} mini-batches, lr ${c.optimizer.lr}, clip grad ${c.optimizer.gradClip}, kl ${c.kl.coef}`,
    c.eval.every > 0
      ? `  eval       every ${c.eval.every} steps, n ${c.eval.n}, ${c.eval.queries} queries, temperature ${c.eval.temperature}`
      : '  eval       off (eval.every = 0): no evaluation, not even a final one',
    `  steps      ${c.steps}, checkpoint every ${c.checkpointEvery}, seed ${c.seed}`,
  ];
}

/** The backend in one line: the one that ran (the run's record), or the one asked for before any ran. */
function backendText(run: RunRecord, c: RunConfig): string {
  return run.backend
    ? `backend ${run.backend}${c.backend !== 'auto' && c.backend !== run.backend ? ` (asked: ${c.backend})` : ''}`
    : `backend ${c.backend} (asked; not started yet)`;
}

/** The headline metrics of the last training step, each with its step (updates done); the eval-only final record is no training step. */
function latestTraining(store: LabStore, run: RunRecord): { key: string; value: number; step: number }[] {
  const latest = store.latestMetrics(run.id);
  const final = evalOnlyRecord(run);
  const out: { key: string; value: number; step: number }[] = [];
  for (const key of HEADLINE_KEYS) {
    const p = latest[key];
    if (!p) continue;
    const kind = metricStepKind(key);
    if (kind === 'train' && final !== null && p.step >= final) {
      const before = seriesInStepsOf(store, run, key, { fromStep: final - 1, toStep: final }).at(-1);
      if (before) out.push({ key, value: before.value, step: before.step });
    } else out.push({ key, value: p.value, step: stepOfRecord(p.step, kind) });
  }
  return out;
}

export async function showCommand(args: ParsedArgs, out: (line: string) => void): Promise<void> {
  const runId = runArg(args, 'show');
  const { store, dbPath } = openLabForReading(args);
  try {
    const run = getRunOrThrow(store, runId, dbPath);
    const c = run.config as RunConfig;
    const evalOff = !(c.eval?.every > 0);
    out(`run ${run.id} "${run.name}"  ${run.status}${run.error ? `: ${run.error}` : ''}`);
    out(`  preset     ${run.preset ?? '-'}; ${backendText(run, c)}`);
    const elapsed = run.startedAt !== null ? ((run.endedAt ?? Date.now()) - run.startedAt) / 1000 : NaN;
    out(
      `  time       created ${when(run.createdAt)}, started ${when(run.startedAt)}, ended ${when(run.endedAt)}${Number.isFinite(elapsed) ? ` (${duration(elapsed)})` : ''}`,
    );
    for (const line of configSummary(c)) out(line);
    const ckpts = store.checkpoints(runId);
    const done = runUpdatesDone(run, c.steps);
    const finalEval = evalOnlyRecord(run) !== null ? (evalOff ? '; evaluation off' : ' and the final evaluation') : '';
    out(`  progress   ${done}/${c.steps} steps (updates committed${finalEval})`);
    out(
      `  checkpoints ${ckpts.length ? `steps ${checkpointSteps(ckpts).join(', ')} (the updates each holds; eval --checkpoint N and export-model --step N take these)` : 'none'}`,
    );

    // The summary and the health warnings, from the series in steps.
    const keys = store.metricKeys(runId);
    const series = (key: string) =>
      keys.includes(key) ? seriesInStepsOf(store, run, key).map((p) => ({ step: p.step, value: Number.isFinite(p.value) ? p.value : null })) : [];
    const totals = Object.fromEntries(Object.values(BUDGET_METRICS).map((k) => [k, series(k).at(-1)?.value ?? null]));
    out('');
    out('summary:');
    const outcome = runOutcome({
      status: run.status,
      error: run.error,
      startedAt: run.startedAt,
      endedAt: run.endedAt,
      now: Date.now(),
      steps: c.steps,
      lastStep: run.lastStep,
      evalEvery: c.eval?.every ?? 0,
      evalN: c.eval?.n ?? 0,
      budget: c.budget,
      macroAvg: series('eval/macro/avg'),
      macroPass: series('eval/macro/pass'),
      totals,
    });
    for (const l of outcome) out(`  ${l.label.padEnd(10)} ${l.text}`);
    const warnings = runHealth(Object.fromEntries(healthKeys(keys).map((k) => [k, series(k)])));
    out('');
    if (warnings.length) {
      out('health:');
      for (const w of warnings) out(`  ${healthLine(w)}`);
    } else out('health: no warnings');

    if (run.lastStep >= 0) {
      const shown = latestTraining(store, run);
      out('');
      out('latest metrics (step: the update, or the evaluation after that many updates):');
      for (const m of shown) out(`  ${m.key.padEnd(22)} ${num(m.value, 4).padStart(10)}  (step ${m.step})`);
      const rest = keys.length - shown.length;
      if (rest > 0) out(`  (+${rest} more: ${labCommand()} export ${runId} --format csv --out run-${runId}.csv)`);
    }
    const evals = store.evaluations(runId);
    out('');
    if (evals.length) {
      out(`evaluations (step s: after s updates; step ${c.steps}: ${evaluationLabel(c.steps, c.steps)}):`);
      for (const line of evaluationTable(evals)) out(`  ${line}`);
    } else if (evalOff) out('evaluations: off (eval.every = 0)');
    else out('evaluations: none yet');
  } finally {
    store.close();
  }
}
