/**
 * `srpo-lab show RUN`: one run in detail: what it is (config summary), where it stands (status,
 * error, times, checkpoints), the metrics of its last committed step, and its evaluations table.
 * Steps follow src/shared/stepConvention.ts: progress is updates committed of the planned steps,
 * checkpoints are named by the updates they hold, an evaluation at step s is the policy after s
 * updates (the last, at step S, the final one). Read only. Tests: test/cli/train.test.ts,
 * test/cli/help.test.ts.
 */
import type { RunConfig } from '../core/config';
import { datasetTaskName } from '../core/data';
import type { StoredEvaluation } from '../core/store';
import { HEADLINE_KEYS } from '../shared/metricCatalogue';
import { checkpointUpdates, evaluationLabel, updatesDone } from '../shared/stepConvention';
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

export function configSummary(c: RunConfig): string[] {
  return [
    `  workflow   ${c.workflow.name} ${JSON.stringify(c.workflow.options)}`,
    `  tasks      train ${c.tasks.train.map(taskLabel).join(', ')}; eval ${c.tasks.eval.map(taskLabel).join(', ')}`,
    `  objective  ${c.objective.algorithm} ${JSON.stringify(c.objective)}`,
    `  policies   ${c.policies.sharing}, model ${c.policies.model}${Object.keys(c.policies.modelOverrides).length ? ` ${JSON.stringify(c.policies.modelOverrides)}` : ''}, init ${c.policies.init ?? 'random'}`,
    `  rollout    N ${c.rollout.tasksPerStep} tasks x G ${c.rollout.groupSize}, temperature ${c.rollout.temperature}, top-p ${c.rollout.topP}, max ${c.rollout.maxNewTokens} tokens`,
    `  update     ${c.update.epochs} epochs x ${c.update.miniBatches} mini-batches, lr ${c.optimizer.lr}, clip grad ${c.optimizer.gradClip}, kl ${c.kl.coef}`,
    `  eval       every ${c.eval.every} steps, n ${c.eval.n}, ${c.eval.queries} queries, temperature ${c.eval.temperature}`,
    `  steps      ${c.steps}, checkpoint every ${c.checkpointEvery}, seed ${c.seed}, backend ${c.backend}`,
  ];
}

export async function showCommand(args: ParsedArgs, out: (line: string) => void): Promise<void> {
  const runId = runArg(args, 'show');
  const { store, dbPath } = openLabForReading(args);
  try {
    const run = getRunOrThrow(store, runId, dbPath);
    const c = run.config as RunConfig;
    out(`run ${run.id} "${run.name}"  ${run.status}${run.error ? `: ${run.error}` : ''}`);
    out(`  preset     ${run.preset ?? '-'}; backend ${run.backend ?? '-'}`);
    const elapsed = run.startedAt !== null ? ((run.endedAt ?? Date.now()) - run.startedAt) / 1000 : NaN;
    out(
      `  time       created ${when(run.createdAt)}, started ${when(run.startedAt)}, ended ${when(run.endedAt)}${Number.isFinite(elapsed) ? ` (${duration(elapsed)})` : ''}`,
    );
    for (const line of configSummary(c)) out(line);
    const ckpts = store.checkpoints(runId);
    const finalEval = run.lastStep >= c.steps ? ' and the final evaluation' : '';
    out(`  progress   ${updatesDone(run.lastStep, c.steps)}/${c.steps} steps (updates committed${finalEval})`);
    out(
      `  checkpoints ${ckpts.length ? `after ${ckpts.map((k) => checkpointUpdates(k.step)).join(', ')} updates (eval --checkpoint STEP takes ${ckpts.map((k) => k.step).join(', ')})` : 'none'}`,
    );

    if (run.lastStep >= 0) {
      const m = store.latestMetrics(runId);
      const shown = HEADLINE_KEYS.filter((k) => k in m);
      out('');
      out('latest metrics:');
      for (const k of shown) out(`  ${k.padEnd(22)} ${num(m[k].value, 4).padStart(10)}  (step ${m[k].step})`);
      const rest = Object.keys(m).length - shown.length;
      if (rest > 0) out(`  (+${rest} more: ${labCommand()} export ${runId} --format csv --out run-${runId}.csv)`);
    }
    const evals = store.evaluations(runId);
    out('');
    if (evals.length) {
      out(`evaluations (step s: after s updates; step ${c.steps}: ${evaluationLabel(c.steps, c.steps)}):`);
      for (const line of evaluationTable(evals)) out(`  ${line}`);
    } else out('evaluations: none yet');
  } finally {
    store.close();
  }
}
