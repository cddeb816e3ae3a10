/**
 * `srpo-lab eval RUN [--checkpoint STEP]`: evaluates a checkpoint of a run (default its latest)
 * with the run's own eval settings (benchmarks, n, queries, temperature) in this process, and
 * prints the table. Writes nothing to the run. The seed is that of the run's evaluation after the
 * checkpoint's step (step + 1), so on the CPU backends the numbers equal the ones the run
 * recorded there, when it evaluated at that step.
 *
 * Tests: test/cli/train.test.ts.
 */
import { isAbsolute, resolve, dirname } from 'node:path';
import { resolveRunConfig } from '../core/config';
import { initBackend } from '../core/models/backend';
import { loadPolicies } from '../core/train/checkpoints';
import { buildEnvironment } from '../core/train/environment';
import { evaluate } from '../core/train/evaluate';
import type { ParsedArgs } from './args';
import { getRunOrThrow, num, openLab, runArg } from './lab';
import { evaluationTable } from './show';

export async function evalCommand(args: ParsedArgs, out: (line: string) => void): Promise<void> {
  const runId = runArg(args, 'eval');
  const { store, dbPath } = openLab(args, false);
  let ckpt;
  let config;
  try {
    const run = getRunOrThrow(store, runId, dbPath);
    config = resolveRunConfig(run.config);
    const all = store.checkpoints(runId);
    if (all.length === 0) throw new Error(`run ${runId} has no checkpoints yet`);
    const wanted = args.options.checkpoint;
    if (wanted === undefined) ckpt = all[all.length - 1];
    else {
      ckpt = all.find((c) => String(c.step) === wanted);
      if (!ckpt) throw new Error(`run ${runId} has no checkpoint at step ${wanted}; checkpoints at ${all.map((c) => c.step).join(', ')}`);
    }
  } finally {
    store.close();
  }
  const backend = await initBackend({ requested: config.backend });
  const dir = isAbsolute(ckpt.path) ? ckpt.path : resolve(dirname(dbPath), ckpt.path);
  const { policies, tokenizer } = loadPolicies(dir, config);
  try {
    const t0 = performance.now();
    const result = evaluate(buildEnvironment(config), config, policies, tokenizer, ckpt.step + 1);
    out(
      `run ${runId}, checkpoint of step ${ckpt.step} (${dir}); backend ${backend.name}; ` +
        `${config.eval.queries} queries x n ${config.eval.n}, temperature ${config.eval.temperature}; ${num((performance.now() - t0) / 1000, 1)} s`,
    );
    for (const line of evaluationTable(result.records.map((r) => ({ ...r, step: ckpt.step })))) out(line);
    out(`macro avg ${num(result.metrics['eval/macro/avg'])}  macro pass ${num(result.metrics['eval/macro/pass'])}`);
  } finally {
    policies.dispose();
  }
}
