import * as tf from '@tensorflow/tfjs';
import { afterAll, describe, expect, it } from 'vitest';
import { MASKED, readParameters, Transformer } from '../../../src/core/models/transformer';
import { maxAbsDiff, microConfig, randomIds } from './helpers';

/** Full-forward logits of one unpadded row: [T, V] as nested arrays. */
function rowLogits(model: Transformer, ids: number[]): number[][] {
  const y = model.forward(tf.tensor2d(ids, [1, ids.length], 'int32'));
  const out = (y.arraySync() as number[][][])[0];
  y.dispose();
  return out;
}

describe('Transformer', () => {
  const model = new Transformer(microConfig());
  afterAll(() => model.dispose());

  it('maps ids [B, T] to logits [B, T, V]', () => {
    const y = model.forward(tf.tensor2d(randomIds(3 * 7, 1), [3, 7], 'int32'));
    expect(y.shape).toEqual([3, 7, 108]);
    expect(Array.from(y.dataSync()).every(Number.isFinite)).toBe(true);
    y.dispose();
  });

  it('initialises deterministically from the seed', () => {
    const again = new Transformer(microConfig());
    const other = new Transformer(microConfig({ seed: 99 }));
    const [a, b, c] = [model, again, other].map(readParameters);
    for (const [name, v] of a) expect(maxAbsDiff(v, b.get(name)!)).toBe(0);
    expect(maxAbsDiff(a.get('h.0.attn.wq')!, c.get('h.0.attn.wq')!)).toBeGreaterThan(0);
    again.dispose();
    other.dispose();
  });

  it('is causal: changing a later token leaves earlier logits unchanged', () => {
    const ids = randomIds(10, 2);
    const changed = [...ids];
    changed[6] = ids[6] === 50 ? 51 : 50;
    const [a, b] = [ids, changed].map((x) => rowLogits(model, x));
    expect(maxAbsDiff(a.slice(0, 6).flat(), b.slice(0, 6).flat())).toBeLessThan(1e-6);
    expect(maxAbsDiff(a[6], b[6])).toBeGreaterThan(1e-4);
  });

  it('KV-cache decoding gives the full-forward logits, with left-padded rows of different lengths', () => {
    const prompts = [randomIds(5, 3), randomIds(9, 4), randomIds(1, 5)];
    const cont = [randomIds(4, 6), randomIds(4, 7), randomIds(4, 8)];
    const L = 9;
    const pads = prompts.map((p) => L - p.length);
    const padded = prompts.flatMap((p, r) => [...Array(pads[r]).fill(0), ...p]);
    let step = model.prefill(tf.tensor2d(padded, [3, L], 'int32'), pads);
    const got: number[][][] = [step.logits.arraySync() as number[][]];
    for (let s = 0; s < 3; s++) {
      const t = L + s;
      const bias = new Float32Array(3 * (t + 1));
      pads.forEach((p, r) => bias.fill(MASKED, r * (t + 1), r * (t + 1) + p));
      const next = model.decodeStep(
        cont.map((c) => c[s]),
        pads.map((p) => t - p),
        step.cache,
        bias,
      );
      tf.dispose([step.logits, ...step.cache.kT, ...step.cache.v]);
      step = next;
      got.push(step.logits.arraySync() as number[][]);
    }
    tf.dispose([step.logits, ...step.cache.kT, ...step.cache.v]);
    prompts.forEach((p, r) => {
      const full = rowLogits(model, [...p, ...cont[r].slice(0, 3)]);
      for (let s = 0; s < 4; s++) expect(maxAbsDiff(got[s][r], full[p.length - 1 + s])).toBeLessThan(1e-4);
    });
  });

  it('refuses sequences longer than the context', () => {
    expect(() => model.forward(tf.tensor2d(randomIds(65, 9), [1, 65], 'int32'))).toThrow(/contextLength 64/);
  });

  it('tied embeddings: no head parameter, logits still [B, T, V]', () => {
    const tied = new Transformer(microConfig({ tiedEmbeddings: true }));
    expect(tied.params.has('head')).toBe(false);
    const y = tied.forward(tf.tensor2d(randomIds(4, 10), [1, 4], 'int32'));
    expect(y.shape).toEqual([1, 4, 108]);
    y.dispose();
    tied.dispose();
  });
});
