/**
 * Side by side in one process: a benchmark's measurement on wasm, then, when the native backend
 * (`node`: tfjs-node, TensorFlow's CPU kernels) starts, the same measurement on it, with fresh
 * models (weights live on the backend that made them). wasm runs first because loading tfjs-node
 * switches the engine to it. Used by train-step, rollout and sampler, which print
 * `native_vs_wasm=` (wasm time / native time; > 1: native is faster; `native_vs_wasm_cpu=` the
 * same from CPU time) or `native=absent`.
 *
 * Not a backend chooser for the lab (src/core/models/backend.ts is). Run through bench/run.ts;
 * the native backend exists here only after `npm run native:wheel`.
 */
import { initBackend, type BackendName } from '../src/core/models/backend';

export interface SideBySide<R> {
  wasm: R;
  /** Null when the native backend did not start; `absentReason` says why. */
  native: R | null;
  absentReason?: string;
}

export async function onWasmThenNative<R>(measure: (backend: BackendName) => Promise<R>): Promise<SideBySide<R>> {
  await initBackend({ requested: 'wasm' });
  console.log('-- backend: wasm');
  const wasm = await measure('wasm');
  try {
    await initBackend({ requested: 'node' });
  } catch (err) {
    const absentReason = (err as Error).message;
    console.log(`-- backend: node absent (${absentReason}); no native_vs_wasm`);
    return { wasm, native: null, absentReason };
  }
  console.log('-- backend: node (tfjs-node)');
  return { wasm, native: await measure('node') };
}

interface Pair {
  wasm: number;
  native: number;
}

/**
 * The headline's side-by-side keys from the two backends' wall milliseconds, and from their
 * process CPU milliseconds (`native_vs_wasm_cpu`: other processes' load on these shared machines
 * inflates wall times, not this process's CPU time; with 2 cores both backends use both).
 */
export function nativeKeys(wallMs: Pair | null, cpuMs?: Pair | null): Record<string, number | string> {
  if (!wallMs) return { native: 'absent' };
  return { native_vs_wasm: wallMs.wasm / wallMs.native, ...(cpuMs ? { native_vs_wasm_cpu: cpuMs.wasm / cpuMs.native } : {}) };
}
