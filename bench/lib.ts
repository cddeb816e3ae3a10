/**
 * Helpers shared by the benchmarks: backend start-up, timing with warm-up and medians, and the
 * headline line. Times come from performance.now(); tfjs work is awaited (data()) inside the
 * timed function so the device has finished.
 */
import { initBackend, type BackendReport } from '../src/core/models/backend';

export async function benchBackend(): Promise<BackendReport> {
  const report = await initBackend();
  console.log(`backend: ${report.name}` + report.skipped.map((s) => `\n  skipped ${s.name}: ${s.reason}`).join(''));
  return report;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Median milliseconds of `runs` calls after `warmup` untimed ones. */
export async function timeMedian(fn: () => Promise<unknown> | unknown, runs = 7, warmup = 2): Promise<number> {
  for (let i = 0; i < warmup; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return median(times);
}

/** Prints the headline; must be the benchmark's last line of output. */
export function headline(name: string, values: Record<string, number | string>): void {
  const kv = Object.entries(values)
    .map(([k, v]) => `${k}=${typeof v === 'number' ? +v.toPrecision(4) : v}`)
    .join(' ');
  console.log(`BENCH ${name} ${kv}`);
}
