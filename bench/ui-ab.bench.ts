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
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { headline, keyValues, median } from './lib';

/** The ui bench's headline figures compared here, and the two ratios made from them. */
const FIGURES = ['dashboard_ms', 'render_ms', 'update_ms', 'dashboard_cpu_ms', 'echarts_floor_ms', 'first_open_ms', 'trace_step_ms'] as const;
type Figures = Record<(typeof FIGURES)[number] | 'ratio' | 'cpu_ratio' | 'load', number>;

const root = resolve(__dirname, '..');
const temps: string[] = [];

/** The renderer folder for one UI_AB entry (see the header). */
function rendererFor(spec: string): string {
  if (spec === '.') {
    if (!existsSync(join(root, 'out/renderer/index.html'))) execFileSync('npx', ['electron-vite', 'build'], { cwd: root, stdio: 'inherit' });
    return join(root, 'out/renderer');
  }
  if (existsSync(join(spec, 'index.html'))) return resolve(spec);
  let sha: string;
  try {
    sha = execFileSync('git', ['rev-parse', '--verify', `${spec}^{commit}`], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    throw new Error(`UI_AB: "${spec}" is neither a folder with a built renderer (index.html), ".", nor a git commit of this checkout`);
  }
  const into = mkdtempSync(join(tmpdir(), `srpo-ui-ab-${sha.slice(0, 8)}-`));
  temps.push(into);
  const tree = spawnSync('git', ['archive', '--format=tar', sha], { cwd: root, maxBuffer: 1 << 30 });
  if (tree.status !== 0) throw new Error(`UI_AB: git archive ${sha} failed: ${tree.stderr}`);
  const untar = spawnSync('tar', ['-x', '-C', into], { input: tree.stdout });
  if (untar.status !== 0) throw new Error(`UI_AB: unpacking ${sha} failed: ${untar.stderr}`);
  symlinkSync(join(root, 'node_modules'), join(into, 'node_modules'), 'dir');
  console.log(`building the renderer of ${spec} (${sha.slice(0, 12)}) in ${into}`);
  execFileSync('npx', ['electron-vite', 'build'], { cwd: into, stdio: ['ignore', 'ignore', 'inherit'] });
  return join(into, 'out/renderer');
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Waits until the 1-minute load is under `limit` (3 minutes at most); returns the load then. */
async function quiet(limit: number): Promise<number> {
  const until = Date.now() + 180_000;
  while (loadavg()[0] >= limit && Date.now() < until) await sleep(5000);
  return loadavg()[0];
}

/** One ui bench run against `renderer`: its headline's figures. */
function runUi(renderer: string, load: number): Figures {
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
  return f;
}

const show = (f: Figures) =>
  `dashboard_ms=${f.dashboard_ms.toFixed(1)} (render ${f.render_ms.toFixed(1)} + update ${f.update_ms.toFixed(1)}) floor=${f.echarts_floor_ms.toFixed(1)} ` +
  `ratio=${f.ratio.toFixed(2)} cpu_ratio=${f.cpu_ratio.toFixed(2)} first_open_ms=${f.first_open_ms.toFixed(0)} trace_step_ms=${f.trace_step_ms.toFixed(1)} (load ${f.load.toFixed(2)})`;

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
        got[i] = runUi(dirs[i], await quiet(limit));
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
    for (const t of temps) rmSync(t, { recursive: true, force: true });
  }
}

void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
