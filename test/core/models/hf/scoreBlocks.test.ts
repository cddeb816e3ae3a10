// The scorer's checkpointed gradient pass (logprobs.ts `checkpointedLogp`): with or without
// per-layer recomputation, a gradient pass over more rows than fit the tape budget runs in row blocks,
// each re-run under its own tape in the backward. Its log-probs and gradients against the plain
// pass (LoRA with dropout, full fine-tuning, within 1e-5), and its peak tensor bytes: bounded by
// one block, not growing with the rows (issue 27: a math-ablation pass of ~48k chat tokens held
// gigabytes).
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { scoreHf, type HfScoreOptions } from '../../../../src/core/models/hf/logprobs';
import { HfModel } from '../../../../src/core/models/hf/model';
import { blockPlan } from '../../../../src/core/models/hf/memory';
import { maxAbsDiff, memorySource, randomHfConfig, randomIds, randomLora, randomWeights } from './randomModel';

type Pair = { prompt: number[]; completion: number[] };

const pairsOf = (n: number, seed: number, prompt = 6, completion = 4): Pair[] =>
  Array.from({ length: n }, (_, r) => ({
    prompt: randomIds(prompt - (r % 3), seed + 2 * r),
    completion: randomIds(completion - (r % 2), seed + 2 * r + 1),
  }));

/** Value and gradients (by variable name) of a weighted sum of the log-probs. */
function gradsOf(model: HfModel, vars: tf.Variable[], pairs: Pair[], options: HfScoreOptions) {
  const { value, grads } = tf.variableGrads(() => {
    const s = scoreHf(model, pairs, options);
    return tf.sum(tf.mul(s.logp, tf.reshape(tf.linspace(-1, 2, s.logp.size), s.logp.shape))) as tf.Scalar;
  }, vars);
  const out = { value: value.dataSync()[0], grads: new Map(Object.entries(grads).map(([k, g]) => [k, g.dataSync().slice() as Float32Array])) };
  tf.dispose([value, ...Object.values(grads)]);
  return out;
}

function expectSame(a: ReturnType<typeof gradsOf>, b: ReturnType<typeof gradsOf>) {
  expect(b.value).toBeCloseTo(a.value, 4);
  expect([...b.grads.keys()].sort()).toEqual([...a.grads.keys()].sort());
  let nonZero = 0;
  for (const [k, g] of a.grads) {
    expect(maxAbsDiff(b.grads.get(k)!, g), k).toBeLessThan(1e-5 * Math.max(1, ...[...g].map(Math.abs)));
    if (g.some((v) => Math.abs(v) > 1e-4)) nonZero++;
  }
  expect(nonZero).toBeGreaterThan(a.grads.size / 2); // not a comparison of zeros
}

describe('checkpointed scoring in row blocks', () => {
  it('LoRA with dropout: log-probs and gradients equal the plain pass (blocks of one row, and with per-layer recomputation inside)', () => {
    const config = randomHfConfig();
    const model = HfModel.fromSource(config, memorySource(config, randomWeights(config, 3)), { trainable: 'lora', lora: randomLora(config, 2, 0.5, 4) });
    try {
      const pairs = pairsOf(5, 10);
      const vars = model.variables();
      const dropout = { p: 0.3, seed: 7, rowKeys: [11, 3, 5, 8, 2] };
      const plain = gradsOf(model, vars, pairs, { dropout });
      model.recompute = true;
      const before = tf.memory().numTensors;
      // 1 byte: not even one row fits without per-layer recomputation, so blocks of one row re-run with it.
      const blocks = gradsOf(model, vars, pairs, { dropout, passBytes: 1 });
      expect(tf.memory().numTensors).toBe(before);
      // ~Two rows' tape (memory.ts's estimate: ~20 KB a token here, 9 tokens a row): blocks of two rows re-run without it.
      const pairsBytes = gradsOf(model, vars, pairs, { dropout, passBytes: 400_000 });
      model.recompute = false;
      expectSame(plain, blocks);
      expectSame(plain, pairsBytes);
    } finally {
      model.dispose();
    }
  });

  it('a budget no row fits without per-layer recomputation but every row fits with it: one pass, recomputed per layer, the same gradients', async () => {
    const config = randomHfConfig({ numLayers: 8 });
    const model = HfModel.fromSource(config, memorySource(config, randomWeights(config, 4)), { trainable: 'lora', lora: randomLora(config, 2, 0.5, 6) });
    try {
      const pairs = pairsOf(3, 20);
      const vars = model.variables();
      const L = Math.max(...pairs.map((p) => p.prompt.length + p.completion.length));
      let budget = 1;
      const plan = () => blockPlan(config, L, pairs.length, budget);
      while (plan()?.layerRecompute && plan()!.rows < pairs.length) budget = Math.ceil(budget * 1.05);
      expect(plan()).toEqual({ rows: expect.any(Number), layerRecompute: true });
      const plain = gradsOf(model, vars, pairs, { passBytes: 0 });
      const recomputed = gradsOf(model, vars, pairs, { passBytes: budget });
      expect(model.recompute).toBe(false); // restored
      expectSame(plain, recomputed);
      // And it ran recomputed: its peak is below the plain pass's.
      const peak = async (passBytes: number) => {
        const start = tf.memory().numBytes;
        const info = await tf.profile(() => {
          const { value, grads } = tf.variableGrads(() => tf.sum(scoreHf(model, pairs, { passBytes }).logp) as tf.Scalar, vars);
          tf.dispose([value, ...Object.values(grads)]);
        });
        return info.peakBytes - start;
      };
      expect(await peak(budget)).toBeLessThan(0.8 * (await peak(0)));
    } finally {
      model.dispose();
    }
  });

  it('full fine-tuning: gradients of every base weight equal the plain pass', () => {
    const config = randomHfConfig({ tieWordEmbeddings: false });
    const model = HfModel.fromSource(config, memorySource(config, randomWeights(config, 5)), { trainable: true });
    try {
      const pairs = pairsOf(4, 30);
      const plain = gradsOf(model, model.variables(), pairs, {});
      model.recompute = true;
      const blocks = gradsOf(model, model.variables(), pairs, { passBytes: 1 });
      model.recompute = false;
      expectSame(plain, blocks);
    } finally {
      model.dispose();
    }
  });

  it.each([true, false])(
    'with recomputation %s, the peak bytes of a gradient pass do not grow with the rows',
    async (recompute) => {
      const config = randomHfConfig({ hiddenSize: 32, intermediateSize: 64, numLayers: 2, maxPositions: 256 });
      const model = HfModel.fromSource(config, memorySource(config, randomWeights(config, 9)), {
        trainable: 'lora',
        lora: randomLora(config, 2, 0.5, 10),
        recompute,
      });
      try {
        const vars = model.variables();
        const peak = async (rows: number) => {
          const pairs = pairsOf(rows, 50, 60, 20);
          const start = tf.memory().numBytes;
          const info = await tf.profile(() => {
            const { value, grads } = tf.variableGrads(() => tf.sum(scoreHf(model, pairs, { passBytes: 4 << 20 }).logp) as tf.Scalar, vars);
            tf.dispose([value, ...Object.values(grads)]);
          });
          return info.peakBytes - start;
        };
        const few = await peak(4);
        const many = await peak(32);
        // One pass over 32 rows kept 8x the tape of 4 rows (every row's layer inputs, one layer re-run over all rows).
        expect(many).toBeLessThan(2 * few);
      } finally {
        model.dispose();
      }
    },
    120_000,
  );
});
