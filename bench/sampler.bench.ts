/**
 * `sampler`: generation throughput of the tiny preset (its seeded lab folder, bench/labModel.ts,
 * through models/hf/sampler.ts `sampleHf`), batch 32 prompts of 16..32 tokens, 48 new tokens
 * each (no stop id, so every row runs the full 48), with the KV cache against re-running the full
 * forward pass every step, in the same run. Headline: tokens/s of each and
 * `speedup` = kv / full (goal >= 20). The machines are shared, so the KV runs are split around
 * the full run (median of all) to see the same load, and `speedup_cpu` gives the same ratio from
 * this process's CPU time (process.cpuUsage), which other processes' load does not inflate.
 *
 * Runs on wasm, then on the native backend when it starts (bench/backends.ts): the wasm keys
 * keep their names, `native_kv_tok_s` / `native_full_tok_s` follow, and `native_vs_wasm` = wasm
 * ms / native ms of the KV-cache sampler (`native_vs_wasm_cpu`: from CPU time).
 * `SAMPLER_BENCH_TOKENS` sets the new tokens per row (default 48; a small value only checks that
 * the bench runs).
 */
import { sampleHf, type DecodeMode } from '../src/core/models/hf/sampler';
import { mulberry32 } from '../src/core/models/random';
import { nativeKeys, onWasmThenNative } from './backends';
import { loadLabPreset, randomCharRows } from './labModel';
import { headline, median } from './lib';

const NEW_TOKENS = Number(process.env.SAMPLER_BENCH_TOKENS ?? 48);

async function measure(backend: string) {
  const loaded = loadLabPreset('tiny', { trainable: false });
  const rand = mulberry32(3);
  const prompts = Array.from({ length: 32 }, () => randomCharRows(1, 16 + Math.floor(rand() * 17), rand)[0]);
  const tokens = 32 * NEW_TOKENS;
  const run = (decode: DecodeMode) => () => sampleHf(loaded.model, prompts, { maxNewTokens: NEW_TOKENS, seed: 1, stopIds: [], decode });
  const timed = (decode: DecodeMode) => {
    const c = process.cpuUsage();
    const t = performance.now();
    run(decode)();
    const d = process.cpuUsage(c);
    return { ms: performance.now() - t, cpu: (d.user + d.system) / 1e3 };
  };
  run('kv')(); // warm-up
  const kv = [timed('kv'), timed('kv'), timed('kv')];
  const full = timed('full');
  kv.push(timed('kv'), timed('kv'), timed('kv'));
  const kvMs = median(kv.map((k) => k.ms));
  const kvCpu = median(kv.map((k) => k.cpu));
  console.log(
    `${backend}: kv ${kvMs.toFixed(0)} ms (cpu ${kvCpu.toFixed(0)}), full ${full.ms.toFixed(0)} ms (cpu ${full.cpu.toFixed(0)}) for ${tokens} tokens`,
  );
  loaded.dispose();
  return {
    kvMs,
    kvCpu,
    fullMs: full.ms,
    kv_tok_s: (tokens / kvMs) * 1e3,
    full_tok_s: (tokens / full.ms) * 1e3,
    speedup: full.ms / kvMs,
    speedup_cpu: full.cpu / kvCpu,
  };
}

async function main(): Promise<void> {
  const { wasm, native } = await onWasmThenNative(measure);
  headline('sampler', {
    kv_tok_s: wasm.kv_tok_s,
    full_tok_s: wasm.full_tok_s,
    speedup: wasm.speedup,
    speedup_cpu: wasm.speedup_cpu,
    ...(native ? { native_kv_tok_s: native.kv_tok_s, native_full_tok_s: native.full_tok_s } : {}),
    ...nativeKeys(native && { wasm: wasm.kvMs, native: native.kvMs }, native && { wasm: wasm.kvCpu, native: native.kvCpu }),
  });
}

void main();
