/**
 * Adam with decoupled weight decay (AdamW, Loshchilov & Hutter) for one policy, written in tfjs
 * ops so that its state is keyed by parameter name (`wte`, `h.0.attn.wq` …) and can be saved in
 * a checkpoint and restored in another process (tfjs's own Adam keys its state by the global
 * variable name, which differs between processes). The caller clips gradients first.
 *
 *   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
 *   p -= lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps) + lr * wd * p
 *
 * Tests: test/core/train/optimizer.test.ts (against a float64 loop, state round trip, no leaks).
 */
import * as tf from '@tensorflow/tfjs';
import type { NamedArray } from '../models/safetensors';

export interface AdamWOptions {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
}

export class AdamW {
  private readonly m = new Map<string, tf.Variable>();
  private readonly v = new Map<string, tf.Variable>();
  /** Updates applied so far. */
  step = 0;

  constructor(
    private readonly params: ReadonlyMap<string, tf.Variable>,
    private readonly options: AdamWOptions,
  ) {
    // Inside a tidy: a variable keeps the zeros' buffer, the temporary tensor handles go.
    tf.tidy(() => {
      for (const [name, p] of params) {
        this.m.set(name, tf.variable(tf.zerosLike(p), false));
        this.v.set(name, tf.variable(tf.zerosLike(p), false));
      }
    });
  }

  /** One update; `grads` by parameter name (missing names are left alone). */
  apply(grads: ReadonlyMap<string, tf.Tensor>): void {
    this.step++;
    const { lr, beta1: b1, beta2: b2, eps, weightDecay } = this.options;
    const stepSize = (lr * Math.sqrt(1 - b2 ** this.step)) / (1 - b1 ** this.step);
    tf.tidy(() => {
      for (const [name, g] of grads) {
        const p = this.params.get(name);
        if (!p) throw new Error(`AdamW: gradient for unknown parameter "${name}"`);
        const m = this.m.get(name)!;
        const v = this.v.get(name)!;
        m.assign(tf.add(tf.mul(m, b1), tf.mul(g, 1 - b1)));
        v.assign(tf.add(tf.mul(v, b2), tf.mul(tf.mul(g, g), 1 - b2)));
        let update = tf.mul(tf.div(m, tf.add(tf.sqrt(v), eps)), stepSize);
        if (weightDecay > 0) update = tf.add(update, tf.mul(p, lr * weightDecay));
        p.assign(tf.sub(p, update));
      }
    });
  }

  /** The state as named arrays (`m/<param>`, `v/<param>`, `step`); reads back from the device. */
  state(): Map<string, NamedArray> {
    const out = new Map<string, NamedArray>();
    for (const [name, t] of this.m) out.set(`m/${name}`, { shape: t.shape, data: t.dataSync() as Float32Array });
    for (const [name, t] of this.v) out.set(`v/${name}`, { shape: t.shape, data: t.dataSync() as Float32Array });
    out.set('step', { shape: [1], data: new Float32Array([this.step]) });
    return out;
  }

  /** Restores a state written by `state()`; `source` names the file in errors. */
  load(state: ReadonlyMap<string, NamedArray>, source: string): void {
    for (const [kind, vars] of [
      ['m', this.m],
      ['v', this.v],
    ] as const) {
      for (const [name, variable] of vars) {
        const t = state.get(`${kind}/${name}`);
        if (!t) throw new Error(`${source}: optimizer tensor "${kind}/${name}" is missing`);
        if (t.data.length !== variable.size)
          throw new Error(`${source}: optimizer tensor "${kind}/${name}" has ${t.data.length} values, expected ${variable.size}`);
        variable.assign(tf.tensor(t.data, variable.shape));
      }
    }
    const step = state.get('step');
    if (!step) throw new Error(`${source}: optimizer tensor "step" is missing`);
    this.step = step.data[0];
  }

  dispose(): void {
    for (const t of [...this.m.values(), ...this.v.values()]) t.dispose();
  }
}
