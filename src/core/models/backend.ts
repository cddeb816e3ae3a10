/**
 * Compute-backend selection for tfjs: the only file of the core that loads optional native
 * packages. Order when nothing is requested: node-gpu (tfjs-node-gpu, CUDA) > node (tfjs-node,
 * native CPU) > wasm > cpu. A backend is named explicitly by the `backend` option (run config)
 * or the SRPO_LAB_BACKEND environment variable; the option wins unless it is `auto` (the run
 * config's default, "no preference"), which defers to the variable. An explicit request that
 * cannot be honoured is an error with the reason, never a silent fallback.
 *
 * Each candidate is loaded lazily, and `tf.setBackend`'s boolean is checked. The report names the
 * backend in use and, for every candidate skipped, why (not installed, failed to load, no GPU,
 * setBackend refused). tfjs-node-gpu happily runs on CPU kernels where there is no GPU, so the
 * GPU candidate first looks for an NVIDIA driver; otherwise "GPU" would be a lie.
 *
 * Tests: test/core/models/backend.test.ts (fallback order with injected loaders; here only wasm
 * and cpu exist).
 */
import * as fs from 'node:fs';
import * as tf from '@tensorflow/tfjs';
import { installWasmKernels } from './wasmKernels';

export const BACKEND_NAMES = ['node-gpu', 'node', 'wasm', 'cpu'] as const;
export type BackendName = (typeof BACKEND_NAMES)[number];
export type BackendRequest = BackendName | 'auto';

export interface BackendReport {
  /** The backend in use. */
  name: BackendName;
  /** tfjs's own name for it (`tensorflow`, `wasm`, `cpu`). */
  tfjsBackend: string;
  /** Candidates tried before it, and why each was skipped. */
  skipped: { name: BackendName; reason: string }[];
}

/** Loads a candidate's package; resolves to a skip reason, or null when loaded. */
export type BackendLoader = () => Promise<string | null>;

interface Candidate {
  tfjsBackend: string;
  load: BackendLoader;
}

/** Reads SRPO_LAB_BACKEND; throws on a value that is not a backend name or `auto`. */
export function backendFromEnv(env: NodeJS.ProcessEnv = process.env): BackendRequest | undefined {
  const v = env.SRPO_LAB_BACKEND?.trim();
  if (!v) return undefined;
  if (v === 'auto' || (BACKEND_NAMES as readonly string[]).includes(v)) return v as BackendRequest;
  throw new Error(`SRPO_LAB_BACKEND="${v}" is not a backend; valid: auto, ${BACKEND_NAMES.join(', ')}`);
}

/** True when an NVIDIA driver is visible (Linux: /proc/driver/nvidia/version or /dev/nvidia0). */
export function nvidiaDriverPresent(): boolean {
  return ['/proc/driver/nvidia/version', '/dev/nvidia0'].some((p) => fs.existsSync(p));
}

async function loadPackage(specifier: string): Promise<string | null> {
  // TensorFlow's C++ library logs its start-up (oneDNN, CPU features) at INFO on stderr in every
  // command; errors and warnings (level 2 and up) still show. Read once, when the library loads.
  if (specifier.startsWith('@tensorflow/tfjs-node')) process.env.TF_CPP_MIN_LOG_LEVEL ??= '2';
  try {
    await import(/* @vite-ignore */ specifier);
    return null;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e?.code === 'MODULE_NOT_FOUND' || e?.code === 'ERR_MODULE_NOT_FOUND') {
      return `not installed (${specifier} is an optional dependency)`;
    }
    return `failed to load ${specifier}: ${e?.message ?? String(err)}`;
  }
}

export function defaultCandidates(hasGpu: () => boolean = nvidiaDriverPresent): Record<BackendName, Candidate> {
  return {
    'node-gpu': {
      tfjsBackend: 'tensorflow',
      load: async () => (hasGpu() ? loadPackage('@tensorflow/tfjs-node-gpu') : 'no GPU (no NVIDIA driver found under /proc/driver/nvidia or /dev)'),
    },
    node: { tfjsBackend: 'tensorflow', load: () => loadPackage('@tensorflow/tfjs-node') },
    wasm: { tfjsBackend: 'wasm', load: () => loadPackage('@tensorflow/tfjs-backend-wasm') },
    cpu: { tfjsBackend: 'cpu', load: async () => null }, // bundled with @tensorflow/tfjs
  };
}

export interface InitBackendOptions {
  /** Choice of the run config: a name overrides SRPO_LAB_BACKEND; `auto` or absent defers to it, else the auto order. */
  requested?: BackendRequest;
  env?: NodeJS.ProcessEnv;
  /** Replace loaders (tests). */
  candidates?: Partial<Record<BackendName, Candidate>>;
}

let current: BackendReport | null = null;

/** The backend chosen by the last successful initBackend, if any. */
export function currentBackend(): BackendReport | null {
  return current;
}

export async function initBackend(options: InitBackendOptions = {}): Promise<BackendReport> {
  const requested = (options.requested !== 'auto' ? options.requested : undefined) ?? backendFromEnv(options.env) ?? 'auto';
  const candidates = { ...defaultCandidates(), ...options.candidates };
  const order: readonly BackendName[] = requested === 'auto' ? BACKEND_NAMES : [requested];
  const skipped: BackendReport['skipped'] = [];
  for (const name of order) {
    const c = candidates[name];
    const reason = (await c.load()) ?? (await trySetBackend(c.tfjsBackend));
    if (reason === null) {
      if (c.tfjsBackend === 'wasm') installWasmKernels();
      current = { name, tfjsBackend: c.tfjsBackend, skipped };
      return current;
    }
    skipped.push({ name, reason });
  }
  const why = skipped.map((s) => `${s.name}: ${s.reason}`).join('; ');
  throw new Error(requested === 'auto' ? `no tfjs backend could be started (${why})` : `backend "${requested}" was requested but cannot start: ${why}`);
}

async function trySetBackend(tfjsName: string): Promise<string | null> {
  try {
    const ok = await tf.setBackend(tfjsName);
    if (!ok) return `tf.setBackend('${tfjsName}') returned false`;
    await tf.ready();
    return tf.getBackend() === tfjsName ? null : `tf.getBackend() is '${tf.getBackend()}' after setBackend('${tfjsName}')`;
  } catch (err) {
    return `tf.setBackend('${tfjsName}') threw: ${(err as Error).message}`;
  }
}
