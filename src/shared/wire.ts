/**
 * The one conversion between a domain record and what a transport carries: typed arrays (a
 * member's token ids, log-probs and mask) become number arrays, float ones with non-finite values
 * as null (JSON has no NaN, and the IPC transport must read the same). Everything else passes
 * through as is, shared where nothing inside changed. LabService.call applies it to every result,
 * so both transports (HTTP's JSON and Electron's IPC) carry the same values; `Wire<T>` is the
 * type the renderer receives.
 *
 * Not here: validation of inputs (api.ts's schemas), NaN in plain numbers (series points keep
 * their own null, api.ts SeriesPoint). Browser-safe. Tested by test/shared/wire.test.ts.
 */

type FloatArray = Float32Array | Float64Array;
type IntArray = Int8Array | Uint8Array | Uint8ClampedArray | Int16Array | Uint16Array | Int32Array | Uint32Array;

/** `T` as a transport carries it: typed arrays as arrays, recursively. */
export type Wire<T> = T extends FloatArray
  ? (number | null)[]
  : T extends IntArray
    ? number[]
    : T extends readonly (infer E)[]
      ? Wire<E>[]
      : T extends object
        ? { [K in keyof T]: Wire<T[K]> }
        : T;

/** `value` with every typed array inside it as a number array (floats: non-finite as null). */
export function toWire<T>(value: T): Wire<T> {
  return encode(value) as Wire<T>;
}

function encode(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Float32Array || value instanceof Float64Array) return Array.from(value, (v) => (Number.isFinite(v) ? v : null));
  if (ArrayBuffer.isView(value)) {
    if (value instanceof DataView || value instanceof BigInt64Array || value instanceof BigUint64Array)
      throw new Error('toWire: a DataView or 64-bit integer array cannot be carried');
    return Array.from(value as unknown as ArrayLike<number>);
  }
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const e = encode(value[i]);
      if (!Object.is(e, value[i])) (out ??= value.slice())[i] = e;
    }
    return out ?? value;
  }
  let out: Record<string, unknown> | null = null;
  for (const [k, v] of Object.entries(value)) {
    const e = encode(v);
    if (!Object.is(e, v)) (out ??= { ...(value as Record<string, unknown>) })[k] = e;
  }
  return out ?? value;
}
