// The KV-cache decoding step of the HF family (src/core/models/hf/decode.ts) beyond what
// model.test.ts and sampler.test.ts check through HfModel: both tied-embedding lookups against
// the float64 reference, the derived constants (row-major embedding copy, joint q/k norm
// weights) following their weights after an assign, the sampler's log-softmax through softmax,
// rows that stopped leaving the batch, and no leaks.
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { HfDecoder, type HfKvCache } from '../../../../src/core/models/hf/decode';
import { rotateHalfMatrix } from '../../../../src/core/models/hf/layers';
import { HfModel, MASKED } from '../../../../src/core/models/hf/model';
import { ropeInvFreq } from '../../../../src/core/models/hf/rope';
import { logSoftmaxRows, sampleHf } from '../../../../src/core/models/hf/sampler';
import type { HfModelConfig } from '../../../../src/core/models/hf/types';
import { mulberry32 } from '../../../../src/core/models/random';
import { logSoftmax64, maxAbsDiff, memorySource, randomHfConfig, randomIds, randomWeights, reference64 } from './randomModel';

const prompts = [randomIds(5, 1), randomIds(2, 2), randomIds(4, 3)];
const cont = [randomIds(3, 11), randomIds(3, 12), randomIds(3, 13)];
const L = 5;
const pads = prompts.map((p) => L - p.length);

function disposeCache(c: HfKvCache): void {
  tf.dispose([...c.k.flat(), ...c.v.flat()]);
}

/** Prefill with the model, then `cont` one token per step with `decoder`; the last logits of every row after each step. */
function decodeWith(model: HfModel, decoder: HfDecoder): number[][][] {
  const first = tf.tidy(() =>
    model.prefill(
      tf.tensor2d(
        prompts.flatMap((p, i) => [...Array<number>(pads[i]).fill(0), ...p]),
        [3, L],
        'int32',
      ),
      pads,
    ),
  );
  first.logits.dispose();
  let cache = first.cache;
  const out: number[][][] = [];
  for (let step = 0; step < cont[0].length; step++) {
    const t = L + step + 1;
    const keyBias = new Float32Array(3 * t);
    pads.forEach((p, r) => keyBias.fill(MASKED, r * t, r * t + p));
    const next = decoder.step(
      cont.map((c) => c[step]),
      pads.map((p) => L + step - p),
      cache,
      keyBias,
      null,
      256,
    );
    disposeCache(cache);
    cache = next.cache;
    out.push(next.logits.arraySync() as number[][]);
    next.logits.dispose();
  }
  disposeCache(cache);
  return out;
}

function decoderOf(model: HfModel, config: HfModelConfig): { decoder: HfDecoder; rot: tf.Tensor2D } {
  const rot = tf.tensor2d(rotateHalfMatrix(config.headDim), [config.headDim, config.headDim]);
  return { decoder: new HfDecoder(config, model.params, rot, ropeInvFreq(config.rope, config.headDim)), rot };
}

/** Largest difference between the decoded logits and the float64 reference of each prefix. */
function worstAgainstReference(config: HfModelConfig, weights: Map<string, Float32Array>, logits: number[][][]): number {
  let worst = 0;
  logits.forEach((rows, step) =>
    prompts.forEach((p, i) => {
      const seq = [...p, ...cont[i].slice(0, step + 1)];
      worst = Math.max(worst, maxAbsDiff(rows[i], reference64(config, weights, seq)[seq.length - 1]));
    }),
  );
  return worst;
}

describe('HfDecoder', () => {
  it('both tied-embedding lookups (rows of a copy, columns of the [d, V] table) equal the float64 reference within 1e-4, and each other', () => {
    const config = randomHfConfig();
    const weights = randomWeights(config, 21);
    const model = HfModel.fromSource(config, memorySource(config, weights));
    const { decoder, rot } = decoderOf(model, config);
    try {
      decoder.tiedLookup = 'rows';
      const rows = decodeWith(model, decoder);
      decoder.tiedLookup = 'columns';
      const cols = decodeWith(model, decoder);
      expect(worstAgainstReference(config, weights, rows)).toBeLessThan(1e-4);
      expect(worstAgainstReference(config, weights, cols)).toBeLessThan(1e-4);
      expect(maxAbsDiff(rows.flat(2), cols.flat(2))).toBeLessThan(1e-6);
    } finally {
      decoder.dispose();
      rot.dispose();
      model.dispose();
    }
  });

  it('derived constants follow their weights: after assigning the embedding and the q/k norm weights (full fine-tuning), a step equals the reference with the new weights', () => {
    const config = randomHfConfig();
    const weights = randomWeights(config, 22);
    const model = HfModel.fromSource(config, memorySource(config, weights), { trainable: true }); // every base weight trainable
    const { decoder, rot } = decoderOf(model, config);
    try {
      decoder.tiedLookup = 'rows';
      decodeWith(model, decoder); // builds the constants from the loaded weights
      const changed = new Map(weights);
      const rand = mulberry32(7);
      for (const name of ['model.embed_tokens.weight', 'model.layers.0.self_attn.q_norm.weight', 'model.layers.1.self_attn.k_norm.weight']) {
        const w = weights.get(name)!.map((v) => v * (0.5 + rand()));
        changed.set(name, w);
        const v = model.params.get(name)!;
        // The model stores the tied table transposed, [d, V]; the norm weights as they are.
        const value =
          name === 'model.embed_tokens.weight' ? tf.tidy(() => tf.transpose(tf.tensor2d(w, [config.vocabSize, config.hiddenSize]))) : tf.tensor1d(w);
        v.assign(value);
        value.dispose();
      }
      const after = decodeWith(model, decoder);
      expect(worstAgainstReference(config, changed, after)).toBeLessThan(1e-4);
      expect(worstAgainstReference(config, weights, after)).toBeGreaterThan(1e-2); // stale constants would match the old weights instead
    } finally {
      decoder.dispose();
      rot.dispose();
      model.dispose();
    }
  });

  it('steps and a rebuild of the constants leak nothing; dispose frees the constants', () => {
    const config = randomHfConfig();
    const model = HfModel.fromSource(config, memorySource(config, randomWeights(config, 23)), { trainable: true });
    const before = tf.memory().numTensors;
    const { decoder, rot } = decoderOf(model, config);
    try {
      decoder.tiedLookup = 'rows';
      decodeWith(model, decoder);
      const n = tf.memory().numTensors;
      const table = model.params.get('model.embed_tokens.weight')!;
      const copy = tf.clone(table);
      table.assign(copy); // a new dataId: the next step rebuilds the row copy
      copy.dispose();
      decodeWith(model, decoder);
      expect(tf.memory().numTensors).toBe(n);
    } finally {
      decoder.dispose();
      rot.dispose();
    }
    expect(tf.memory().numTensors).toBe(before);
    model.dispose();
  });
});

describe('logSoftmaxRows (the sampler log-softmax through softmax)', () => {
  it('equals a float64 log-softmax within 2e-5: logits spread over +-40, a row with one dominant logit, a flat row', () => {
    const rand = mulberry32(3);
    const V = 5000;
    const rows = [
      Float32Array.from({ length: V }, () => (rand() - 0.5) * 80),
      Float32Array.from({ length: V }, (_, i) => (i === 17 ? 60 : rand() - 0.5)),
      new Float32Array(V).fill(2.5),
    ];
    const got = tf.tidy(() =>
      logSoftmaxRows(
        tf.tensor2d(
          rows.flatMap((r) => [...r]),
          [rows.length, V],
        ),
      ).arraySync(),
    );
    rows.forEach((r, i) => expect(maxAbsDiff(got[i], logSoftmax64(r))).toBeLessThan(2e-5));
    expect(Math.abs(got[2][0] + Math.log(V))).toBeLessThan(1e-5); // flat: every entry -log V
  });
});

describe('sampleHf drops rows that stopped', () => {
  it('later steps run only the rows still going; ids and log-probs equal full recomputation and each row sampled alone', () => {
    const config = randomHfConfig();
    const weights = randomWeights(config, 4);
    const soft = new Map([...weights].map(([n, w]) => [n, n.endsWith('norm.weight') ? w : w.map((v) => v * 0.6)]));
    const model = HfModel.fromSource(config, memorySource(config, soft));
    const ps = [randomIds(4, 1), randomIds(9, 2), randomIds(1, 3), randomIds(6, 4)];
    try {
      const free = sampleHf(model, ps, { maxNewTokens: 8, temperature: 0, seed: 1 });
      const stopIds = [free[0].ids[1], free[2].ids[3]]; // rows 0 and 2 (at least) stop early
      const rowsPerStep: number[] = [];
      const step = model.decodeStep.bind(model);
      model.decodeStep = (ids, ...rest) => {
        rowsPerStep.push(ids.length);
        return step(ids, ...rest);
      };
      const opts = { maxNewTokens: 8, temperature: 0, seed: 1, stopIds };
      const kv = sampleHf(model, ps, opts);
      model.decodeStep = step;
      expect(kv[0].stopReason).toBe('end');
      expect(kv[2].stopReason).toBe('end');
      const running = (s: number) => kv.filter((r) => r.ids.length > s + 1).length; // rows that need step s + 1
      expect(rowsPerStep).toEqual(rowsPerStep.map((_, s) => running(s)));
      expect(Math.min(...rowsPerStep)).toBeLessThan(ps.length); // the check is not vacuous: rows did leave
      const full = sampleHf(model, ps, { ...opts, decode: 'full' });
      expect(full.map((r) => r.ids)).toEqual(kv.map((r) => r.ids));
      ps.forEach((p, r) => {
        const alone = sampleHf(model, [p], opts)[0];
        expect(alone.ids).toEqual(kv[r].ids);
        expect(maxAbsDiff(alone.logp, kv[r].logp)).toBeLessThan(1e-4);
        expect(maxAbsDiff(full[r].logp, kv[r].logp)).toBeLessThan(1e-4);
      });
    } finally {
      model.dispose();
    }
  });
});
