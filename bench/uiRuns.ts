/**
 * Runs of the ui bench (bench/ui.bench.ts) as child processes, shared by the benches that repeat
 * it: ui-ab (two builds in alternation) and ui-set (one build, a set of runs, as the README and
 * issue 30 quote it). Here: which renderer a spec names (a git commit built in a temporary
 * folder, a built renderer folder, or `.`), the wait for a quiet machine, one run's headline
 * figures with the two ratios, and a set's medians and ranges (`setSummary`, pure).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { keyValues, median } from './lib';

/**
 * Issue 30's goals for the ui bench's figures (upper bounds, each the median of a set of runs): the
 * ui bench prints them beside its figures, ui-set beside a set's medians.
 */
export const UI_GOALS = { ratio: 1.25, cpu_ratio: 1.25, first_open_ms: 300, trace_step_ms: 40 } as const;

/**
 * The ui bench's headline figures read here, and the two ratios made from them. `excess_ms` is
 * dashboard_ms - echarts_floor_ms, the app's own cost in ms: in decision 082's runs it stayed near
 * 18 ms while the floor, the ratio's denominator, followed the machine's speed.
 */
export const FIGURES = [
  'dashboard_ms',
  'render_ms',
  'update_ms',
  'dashboard_cpu_ms',
  'echarts_floor_ms',
  'excess_ms',
  'first_open_ms',
  'trace_step_ms',
] as const;
export type Figures = Record<(typeof FIGURES)[number] | 'ratio' | 'cpu_ratio' | 'load', number>;

const root = resolve(__dirname, '..');
/** Temporary folders of renderers built from commits (removeTemps deletes them). */
const temps: string[] = [];

export function removeTemps(): void {
  for (const t of temps.splice(0)) rmSync(t, { recursive: true, force: true });
}

/**
 * The renderer folder a spec names: a git commit (built from its tree in a temporary folder, with
 * this checkout's node_modules), a folder holding a built renderer, or `.` (out/renderer, built
 * first if missing).
 */
export function rendererFor(spec: string): string {
  if (spec === '.') {
    if (!existsSync(join(root, 'out/renderer/index.html'))) execFileSync('npx', ['electron-vite', 'build'], { cwd: root, stdio: 'inherit' });
    return join(root, 'out/renderer');
  }
  if (existsSync(join(spec, 'index.html'))) return resolve(spec);
  let sha: string;
  try {
    sha = execFileSync('git', ['rev-parse', '--verify', `${spec}^{commit}`], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    throw new Error(`"${spec}" is neither a folder with a built renderer (index.html), ".", nor a git commit of this checkout`);
  }
  const into = mkdtempSync(join(tmpdir(), `srpo-ui-build-${sha.slice(0, 8)}-`));
  temps.push(into);
  const tree = spawnSync('git', ['archive', '--format=tar', sha], { cwd: root, maxBuffer: 1 << 30 });
  if (tree.status !== 0) throw new Error(`git archive ${sha} failed: ${tree.stderr}`);
  const untar = spawnSync('tar', ['-x', '-C', into], { input: tree.stdout });
  if (untar.status !== 0) throw new Error(`unpacking ${sha} failed: ${untar.stderr}`);
  symlinkSync(join(root, 'node_modules'), join(into, 'node_modules'), 'dir');
  console.log(`building the renderer of ${spec} (${sha.slice(0, 12)}) in ${into}`);
  execFileSync('npx', ['electron-vite', 'build'], { cwd: into, stdio: ['ignore', 'ignore', 'inherit'] });
  return join(into, 'out/renderer');
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Waits until the 1-minute load is under `limit` (3 minutes at most); returns the load then. */
export async function quiet(limit: number): Promise<number> {
  const until = Date.now() + 180_000;
  while (loadavg()[0] >= limit && Date.now() < until) await sleep(5000);
  return loadavg()[0];
}

/** One ui bench run: its headline's figures, and how its browser drew (the bench's `chromium draws on ...` line). */
export interface UiRun {
  figures: Figures;
  draws: string;
}

/** One ui bench run against `renderer`, started at the 1-minute load `load`. */
export function runUi(renderer: string, load: number): UiRun {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, 'ui.bench.ts')], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, UI_BENCH_RENDERER: renderer },
    maxBuffer: 1 << 26,
  });
  const line = (r.stdout ?? '').trim().split('\n').pop() ?? '';
  if (r.status !== 0 || !line.startsWith('BENCH ui '))
    throw new Error(`ui bench failed (exit ${r.status}): ${(r.stderr ?? '').trim().split('\n').slice(-5).join(' | ')}`);
  const kv = Object.fromEntries(Object.entries(keyValues(line)).map(([k, v]) => [k, Number(v)]));
  if (kv.skipped !== undefined || !Number.isFinite(kv.dashboard_ms)) throw new Error(`ui bench gave no figures: ${line}`);
  const f = Object.fromEntries(FIGURES.map((k) => [k, kv[k]])) as Figures;
  f.ratio = kv.dashboard_ms / kv.echarts_floor_ms;
  f.cpu_ratio = kv.dashboard_cpu_ms / kv.echarts_floor_cpu_ms;
  f.load = load;
  const draws = (r.stdout ?? '').split('\n').find((l) => l.startsWith('chromium draws on ')) ?? 'chromium draws on: not reported';
  return { figures: f, draws };
}

export const show = (f: Figures): string =>
  `dashboard_ms=${f.dashboard_ms.toFixed(1)} (render ${f.render_ms.toFixed(1)} + update ${f.update_ms.toFixed(1)}) floor=${f.echarts_floor_ms.toFixed(1)} ` +
  `ratio=${f.ratio.toFixed(2)} cpu_ratio=${f.cpu_ratio.toFixed(2)} excess_ms=${f.excess_ms.toFixed(1)} first_open_ms=${f.first_open_ms.toFixed(0)} trace_step_ms=${f.trace_step_ms.toFixed(1)} (load ${f.load.toFixed(2)})`;

/** A figure over a set of runs: its median and range. */
export interface SetFigure {
  median: number;
  min: number;
  max: number;
}

/** Each figure's median and range over `runs` (and the load's, as measured before each run). */
export function setSummary(runs: readonly Figures[]): Record<keyof Figures, SetFigure> {
  if (!runs.length) throw new Error('setSummary: no runs');
  const keys = Object.keys(runs[0]) as (keyof Figures)[];
  return Object.fromEntries(
    keys.map((k) => {
      const xs = runs.map((r) => r[k]);
      return [k, { median: median(xs), min: Math.min(...xs), max: Math.max(...xs) }];
    }),
  ) as Record<keyof Figures, SetFigure>;
}
