/**
 * Benchmark runner: `npm run bench` runs every `bench/<name>.bench.ts`, `npm run bench -- NAME
 * [NAME ...]` runs the named ones. Each benchmark runs in its own process (tfjs keeps one global
 * engine) and prints its headline as its last line: `BENCH name key=value ...`. The runner
 * repeats the headlines at the end. Benchmarks report ratios measured side by side in one run,
 * because these machines are shared and noisy; nothing here asserts on time.
 *
 * Backend: wasm unless SRPO_LAB_BACKEND names another, so figures stay comparable whichever
 * optional native package is installed. train-step, rollout and sampler also run on the native
 * backend when it starts, in the same process, and print `native_vs_wasm=` (bench/backends.ts).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const dir = __dirname;
const available = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .map((f) => f.slice(0, -'.bench.ts'.length))
  .sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !available.includes(w));
if (unknown.length) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; available: ${available.join(', ')}`);
  process.exit(2);
}
const headlines: string[] = [];
let failed = 0;
for (const name of wanted.length ? wanted : available) {
  console.log(`\n== ${name}`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(dir, `${name}.bench.ts`)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, SRPO_LAB_BACKEND: process.env.SRPO_LAB_BACKEND || 'wasm' },
  });
  process.stdout.write(r.stdout ?? '');
  const last = (r.stdout ?? '').trim().split('\n').pop() ?? '';
  if (r.status !== 0 || !last.startsWith('BENCH ')) {
    failed++;
    headlines.push(`BENCH ${name} FAILED (exit ${r.status})`);
  } else headlines.push(last);
}
console.log('\n== summary');
for (const h of headlines) console.log(h);
process.exit(failed ? 1 : 0);
