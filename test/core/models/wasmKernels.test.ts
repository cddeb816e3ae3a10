// The wasm kernel overrides (src/core/models/wasmKernels.ts): Identity shares its input's buffer
// instead of copying it. A clone keeps its values whichever side is disposed or reassigned, no
// buffer outlives its last tensor, and a training step's loss and gradients are bit for bit those
// of a copying Identity (written here as wasm's own: a new output, the input's bytes copied in).
// Skipped on other backends (the override is wasm's only).
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { scoreHf } from '../../../src/core/models/hf/logprobs';
import { HfModel } from '../../../src/core/models/hf/model';
import { memorySource, randomHfConfig, randomIds, randomLora, randomWeights } from './hf/randomModel';

interface WasmHeapBackend {
  makeOutput(shape: number[], dtype: tf.DataType): tf.TensorInfo;
  typedArrayFromHeap(t: tf.TensorInfo): Float32Array | Int32Array | Uint8Array;
  numDataIds(): number;
}

const onWasm = process.env.SRPO_LAB_BACKEND === 'wasm'; // test/setup.ts starts that backend
const heap = () => tf.backend() as unknown as WasmHeapBackend;

/** Runs fn with a copying Identity registered for wasm (the kernel tfjs ships), then puts the lab's back. */
function withCopyingIdentity<T>(fn: () => T): T {
  const shared = tf.getKernel('Identity', 'wasm')!;
  tf.unregisterKernel('Identity', 'wasm');
  tf.registerKernel({
    kernelName: 'Identity',
    backendName: 'wasm',
    kernelFunc: ({ inputs, backend }) => {
      const x = (inputs as { x: tf.TensorInfo }).x;
      const b = backend as unknown as WasmHeapBackend;
      const out = b.makeOutput(x.shape, x.dtype);
      b.typedArrayFromHeap(out).set(b.typedArrayFromHeap(x));
      return out;
    },
  });
  try {
    return fn();
  } finally {
    tf.unregisterKernel('Identity', 'wasm');
    tf.registerKernel(shared);
  }
}

describe.skipIf(!onWasm)('wasm Identity shares the buffer', () => {
  it('a clone adds no buffer and keeps its values when either side is disposed', () => {
    const x = tf.tensor2d([1, 2, 3, 4], [2, 2]);
    const ids = heap().numDataIds();
    const c = tf.clone(x);
    expect(heap().numDataIds()).toBe(ids); // shared: no new buffer in the heap (tf.memory() counts tensors' bytes, not buffers)
    x.dispose();
    expect([...c.dataSync()]).toEqual([1, 2, 3, 4]);
    const d = tf.clone(c);
    d.dispose();
    expect([...c.dataSync()]).toEqual([1, 2, 3, 4]);
    c.dispose();
    expect(heap().numDataIds()).toBe(ids - 1); // the buffer went with its last tensor
  });

  it("a variable assigned after a clone leaves the clone's values", () => {
    const v = tf.variable(tf.tensor1d([1, 2, 3]));
    const c = tf.clone(v);
    v.assign(tf.tensor1d([7, 8, 9]));
    expect([...c.dataSync()]).toEqual([1, 2, 3]);
    expect([...v.dataSync()]).toEqual([7, 8, 9]);
    tf.dispose([v, c]);
  });

  it("a training step's loss and gradients equal a copying Identity's, and leave no buffer behind", () => {
    const config = randomHfConfig();
    const model = HfModel.fromSource(config, memorySource(config, randomWeights(config, 3)), { lora: randomLora(config, 2, 0.5, 4), trainable: 'lora' });
    const pairs = [
      { prompt: randomIds(3, 1), completion: randomIds(5, 2) },
      { prompt: randomIds(6, 3), completion: randomIds(2, 4) },
    ];
    const step = () => {
      const { value, grads } = tf.variableGrads(() => {
        const s = scoreHf(model, pairs);
        tf.dispose(s.mask);
        return tf.neg(tf.sum(s.logp)) as tf.Scalar;
      }, model.variables());
      const out = { loss: value.dataSync()[0], grads: Object.fromEntries(Object.entries(grads).map(([k, g]) => [k, [...g.dataSync()]])) };
      tf.dispose([value, ...Object.values(grads)]);
      return out;
    };
    try {
      step(); // warm-up
      const ids = heap().numDataIds();
      const shared = step();
      expect(heap().numDataIds()).toBe(ids);
      const copied = withCopyingIdentity(step);
      expect(Object.keys(shared.grads).length).toBeGreaterThan(0);
      expect(shared.loss).toBe(copied.loss);
      expect(shared.grads).toEqual(copied.grads);
    } finally {
      model.dispose();
    }
  });
});
