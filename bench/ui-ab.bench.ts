/**
 * `ui-ab`: two builds of the renderer side by side, through the ui bench (bench/ui.bench.ts) run
 * in alternation. On these shared machines the spread between single runs of one build (and of
 * the ECharts floor beside it) is as large as the differences between builds, so only runs paired
 * in time can tell two builds apart: this is decision 075's A/B procedure as one command.
 *
 *   UI_AB=A,B npm run bench -- ui-ab
 *
 * Each of A and B is a git commit (its renderer is built from that commit's tree in a temporary
 * folder, with this checkout's node_modules), a folder holding a built renderer (its index.html),
 * or `.` (this checkout's out/renderer, built first if missing). UI_AB_PAIRS pairs (default 5), in
 * the order A B, then B A, and so on; each run starts once the 1-minute load average has fallen
 * below UI_AB_LOAD (default 1.2; it waits at most 3 minutes, and prints the load it started at).
 * Printed: every run's figures, then per figure both medians, the median of B - A within a pair,
 * and in how many pairs B was lower (the figure to read: a drift of the machine moves both runs of a pair).
 * Skipped (`BENCH ui-ab skipped=no_UI_AB`) when UI_AB is unset, so `npm run bench` passes it by.
 */
import { headline, median } from './lib';
import { FIGURES, quiet, removeTemps, rendererFor, runUi, show, type Figures } from './uiRuns';

async function main(): Promise<void> {
  const specs = (process.env.UI_AB ?? '').split(',').map((s) => s.trim());
  if (specs.length !== 2 || specs.some((s) => !s)) {
    if (process.env.UI_AB) throw new Error(`UI_AB="${process.env.UI_AB}": give two builds, "A,B" (git commits, renderer folders or ".")`);
    console.log('UI_AB is not set: nothing to compare (UI_AB=A,B npm run bench -- ui-ab)');
    headline('ui-ab', { skipped: 'no_UI_AB' });
    return;
  }
  const pairs = Number(process.env.UI_AB_PAIRS ?? 5);
  const limit = Number(process.env.UI_AB_LOAD ?? 1.2);
  if (!Number.isInteger(pairs) || pairs < 1) throw new Error(`UI_AB_PAIRS=${process.env.UI_AB_PAIRS}: a whole number of pairs, 1 or more`);
  if (!(limit > 0)) throw new Error(`UI_AB_LOAD=${process.env.UI_AB_LOAD}: a load average above 0`);
  try {
    const dirs = specs.map(rendererFor);
    const runs: [Figures, Figures][] = [];
    for (let p = 0; p < pairs; p++) {
      const order = p % 2 ? [1, 0] : [0, 1];
      const got: Figures[] = [];
      for (const i of order) {
        got[i] = runUi(dirs[i], await quiet(limit)).figures;
        console.log(`pair ${p + 1} ${'AB'[i]} (${specs[i]}): ${show(got[i])}`);
      }
      runs.push([got[0], got[1]]);
    }
    const summary: Record<string, number> = { pairs };
    console.log(`\nA = ${specs[0]}, B = ${specs[1]}: medians of ${pairs} runs each, and the pairs in which B was lower`);
    for (const k of [...FIGURES, 'ratio', 'cpu_ratio'] as const) {
      const a = median(runs.map((r) => r[0][k]));
      const b = median(runs.map((r) => r[1][k]));
      const lower = runs.filter((r) => r[1][k] < r[0][k]).length;
      const diff = median(runs.map((r) => r[1][k] - r[0][k]));
      console.log(
        `  ${k.padEnd(18)} A ${a.toFixed(2).padStart(8)}  B ${b.toFixed(2).padStart(8)}  B-A in a pair (median) ${diff.toFixed(2).padStart(7)}  B lower in ${lower} of ${pairs}`,
      );
      summary[`${k}_a`] = a;
      summary[`${k}_b`] = b;
      summary[`${k}_b_lower`] = lower;
    }
    headline('ui-ab', summary);
  } finally {
    removeTemps();
  }
}

void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
