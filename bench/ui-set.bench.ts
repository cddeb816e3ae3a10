/**
 * `ui-set`: a set of ui bench runs (bench/ui.bench.ts) on one build, each started on a quiet
 * machine, and each figure's median and range over the set beside its goal (issue 30: the median
 * of three runs at a 1-minute load under 1.5, the load said). This is the figure the README's
 * UI-bench table quotes, as one command another machine can rerun.
 *
 *   npm run bench -- ui-set
 *
 * UI_SET: the build (a git commit, a folder holding a built renderer, or `.`, this checkout's
 * out/renderer, built first if missing; default `.`). UI_SET_RUNS runs (default 3). Each run starts
 * once the 1-minute load average is under UI_SET_LOAD (default 1.5; at most 3 minutes' wait), and
 * the load it started at is printed. The ui bench's own variables (UI_BENCH_GPU,
 * UI_BENCH_CHROMIUM_ARGS, CHROMIUM_PATH, ...) pass through to every run.
 */
import { headline } from './lib';
import { quiet, removeTemps, rendererFor, runUi, setSummary, show, UI_GOALS, type Figures, type SetFigure } from './uiRuns';

const GOALS: Partial<Record<keyof Figures, number>> = UI_GOALS;
/** Printed, in this order, with the digits each is printed to. */
const PRINTED: [keyof Figures, number][] = [
  ['ratio', 2],
  ['cpu_ratio', 2],
  ['echarts_floor_ms', 1],
  ['dashboard_ms', 1],
  ['excess_ms', 1],
  ['first_open_ms', 0],
  ['trace_step_ms', 1],
];

const range = (f: SetFigure, digits: number) => `${f.median.toFixed(digits)} (${f.min.toFixed(digits)}-${f.max.toFixed(digits)})`;

async function main(): Promise<void> {
  const spec = process.env.UI_SET?.trim() || '.';
  const runs = Number(process.env.UI_SET_RUNS ?? 3);
  const limit = Number(process.env.UI_SET_LOAD ?? 1.5);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`UI_SET_RUNS=${process.env.UI_SET_RUNS}: a whole number of runs, 1 or more`);
  if (!(limit > 0)) throw new Error(`UI_SET_LOAD=${process.env.UI_SET_LOAD}: a load average above 0`);
  try {
    const renderer = rendererFor(spec);
    const got: Figures[] = [];
    const draws = new Set<string>();
    for (let i = 0; i < runs; i++) {
      const run = runUi(renderer, await quiet(limit));
      got.push(run.figures);
      draws.add(run.draws);
      console.log(`run ${i + 1} (${spec}): ${show(run.figures)}`);
    }
    const s = setSummary(got);
    console.log(`\n${spec}: medians of ${runs} runs (range); load before each run ${got.map((f) => f.load.toFixed(2)).join(', ')}`);
    for (const d of draws) console.log(`  ${d}`);
    const out: Record<string, number> = { runs };
    for (const [k, digits] of PRINTED) {
      const goal = GOALS[k];
      const verdict = goal === undefined ? '' : `  goal <= ${goal}: ${s[k].median <= goal ? 'met' : 'not met'}`;
      console.log(`  ${k.padEnd(18)} ${range(s[k], digits)}${verdict}`);
      Object.assign(out, { [k]: s[k].median, [`${k}_min`]: s[k].min, [`${k}_max`]: s[k].max });
    }
    out.load_max = s.load.max;
    headline('ui-set', out);
  } finally {
    removeTemps();
  }
}

void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
