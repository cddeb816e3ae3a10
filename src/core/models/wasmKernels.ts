/**
 * Kernel overrides for tfjs's wasm backend, registered by backend.ts when wasm starts.
 *
 * Identity: the engine clones every tensor it keeps for a backward (a kernel's inputs under a
 * tape, a custom-gradient op's `save`) through the Identity kernel, and wasm's copies the buffer:
 * a training step copied every saved activation once more, in time and in heap. Tensors are
 * immutable (a variable's assign swaps its buffer, it never writes into it), so the clone shares
 * the buffer under a reference count, as the cpu backend's Identity and wasm's own Reshape do.
 *
 * Tests: test/core/models/wasmKernels.test.ts (a clone shares no mutable state: values survive
 * disposing either side, a variable assigned after a clone leaves the clone's values; gradients
 * of a training step equal the copying kernel's).
 */
import * as tf from '@tensorflow/tfjs';

interface RefCountedBackend {
  incRef(dataId: object): void;
}

/** Identity that shares x's buffer (string tensors, which wasm keeps outside its heap, are copied as before). */
function sharedIdentity(copying: tf.KernelFunc): tf.KernelFunc {
  return (args) => {
    const x = (args.inputs as { x: tf.TensorInfo }).x;
    if (x.dtype === 'string') return copying(args);
    (args.backend as unknown as RefCountedBackend).incRef(x.dataId);
    return { dataId: x.dataId, shape: x.shape, dtype: x.dtype };
  };
}

let installed = false;

/** Replaces wasm's Identity with `sharedIdentity` (once per process; a no-op when wasm's kernel is not registered). */
export function installWasmKernels(): void {
  if (installed) return;
  const original = tf.getKernel('Identity', 'wasm');
  if (!original) return;
  tf.unregisterKernel('Identity', 'wasm');
  tf.registerKernel({ kernelName: 'Identity', backendName: 'wasm', kernelFunc: sharedIdentity(original.kernelFunc) });
  installed = true;
}
