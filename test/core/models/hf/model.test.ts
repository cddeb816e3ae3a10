// The tfjs fast path of the HF family (src/core/models/hf/model.ts) against float64 references:
// our own loops (randomModel.ts `reference64`) on random configs of each architecture, and
// hf-loader's reference.ts plus transformers' own logits (expected.json) on the committed fixtures.
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { HfModel, leftPadLayout, MASKED } from '../../../../src/core/models/hf/model';
import { referenceLogits } from '../../../../src/core/models/hf/reference';
import type { HfModelConfig, LoraPair } from '../../../../src/core/models/hf/types';
import {
  FIXTURES,
  loadFixture,
  maxAbsDiff,
  memorySource,
  randomHfConfig,
  randomIds,
  randomLora,
  randomQwen2Config,
  randomWeights,
  reference64,
} from './randomModel';

const ARCHS: Record<string, HfModelConfig> = {
  'qwen3 (head_dim 8 != 16/4, GQA 4:2, q/k norms, tied head)': randomHfConfig(),
  'qwen2 (q/k/v biases, untied head)': randomQwen2Config(),
  'llama (no biases, no q/k norms, MHA, untied)': randomHfConfig({
    architecture: 'llama',
    qkNorm: false,
    numKvHeads: 4,
    headDim: 4,
    tieWordEmbeddings: false,
    rmsNormEps: 1e-5,
  }),
};

function load(config: HfModelConfig, seed: number, lora?: LoraPair[], trainable = false) {
  const weights = randomWeights(config, seed);
  const model = HfModel.fromSource(config, memorySource(config, weights), { lora, trainable });
  return { model, weights };
}

/** logits [T][V] of one row through `forward`. */
function forwardRows(model: HfModel, ids: number[]): number[][] {
  const out = tf.tidy(() => model.forward(tf.tensor2d(ids, [1, ids.length], 'int32')));
  const rows = (out.arraySync() as number[][][])[0];
  out.dispose();
  return rows;
}

describe('HfModel.forward against the float64 reference', () => {
  for (const [label, config] of Object.entries(ARCHS)) {
    it(`${label}: logits within 1e-4`, () => {
      const { model, weights } = load(config, 7);
      try {
        const ids = randomIds(9, 3);
        const ref = reference64(config, weights, ids);
        const got = forwardRows(model, ids);
        const scale = Math.max(...ref.map((r) => Math.max(...r.map(Math.abs))));
        expect(scale).toBeGreaterThan(1); // peaked outputs: the comparison has something to miss
        got.forEach((row, t) => expect(maxAbsDiff(row, ref[t])).toBeLessThan(1e-4));
      } finally {
        model.dispose();
      }
    });
  }

  it('the check is not vacuous: q/k norm weights, biases and LoRA each move the logits by far more than 1e-4', () => {
    const ids = randomIds(6, 4);
    const q3 = randomHfConfig();
    const w3 = randomWeights(q3, 1);
    const flat = new Map(w3);
    for (const n of w3.keys()) if (n.includes('q_norm') || n.includes('k_norm')) flat.set(n, new Float32Array(q3.headDim).fill(1));
    expect(maxAbsDiff(reference64(q3, w3, ids)[5], reference64(q3, flat, ids)[5])).toBeGreaterThan(1e-2);
    const q2 = randomQwen2Config();
    const w2 = randomWeights(q2, 1);
    const noBias = new Map(w2);
    for (const n of w2.keys()) if (n.endsWith('.bias')) noBias.set(n, new Float32Array(w2.get(n)!.length));
    expect(maxAbsDiff(reference64(q2, w2, ids)[5], reference64(q2, noBias, ids)[5])).toBeGreaterThan(1e-2);
    expect(maxAbsDiff(reference64(q3, w3, ids)[5], reference64(q3, w3, ids, randomLora(q3, 2, 0.5, 9))[5])).toBeGreaterThan(1e-2);
  });

  it('LoRA (q, v, down; non-zero B, scale 0.5) matches the reference with the adapter', () => {
    const config = randomHfConfig();
    const lora = randomLora(config, 2, 0.5, 9);
    const { model, weights } = load(config, 5, lora);
    try {
      const ids = randomIds(7, 8);
      const ref = reference64(config, weights, ids, lora);
      forwardRows(model, ids).forEach((row, t) => expect(maxAbsDiff(row, ref[t])).toBeLessThan(1e-4));
    } finally {
      model.dispose();
    }
  });

  it('readLora gives back the adapter in peft layout (A [r, in], B [out, r])', () => {
    const config = randomQwen2Config();
    const lora = randomLora(config, 3, 0.25, 2);
    const { model } = load(config, 5, lora);
    try {
      const back = model.readLora();
      expect(back.map((p) => p.target)).toEqual(lora.map((p) => p.target));
      back.forEach((p, i) => {
        expect({ ...p, a: [...p.a], b: [...p.b] }).toEqual({ ...lora[i], a: [...lora[i].a], b: [...lora[i].b] });
      });
    } finally {
      model.dispose();
    }
  });

  it('left-padded rows (explicit positions and key mask) equal the same rows alone', () => {
    const config = randomHfConfig();
    const { model, weights } = load(config, 2);
    try {
      const rows = [randomIds(8, 1), randomIds(3, 2), randomIds(6, 3)];
      const T = 8;
      const pads = rows.map((r) => T - r.length);
      const ids = rows.flatMap((r, i) => [...Array<number>(pads[i]).fill(0), ...r]);
      const out = tf.tidy(() => model.forward(tf.tensor2d(ids, [3, T], 'int32'), leftPadLayout(pads, T)));
      const got = out.arraySync() as number[][][];
      out.dispose();
      rows.forEach((r, i) => {
        const ref = reference64(config, weights, r);
        r.forEach((_, t) => expect(maxAbsDiff(got[i][pads[i] + t], ref[t])).toBeLessThan(1e-4));
      });
    } finally {
      model.dispose();
    }
  });

  it('refuses positions beyond max_position_embeddings', () => {
    const config = randomHfConfig({ maxPositions: 8 });
    const { model } = load(config, 2);
    try {
      expect(() => tf.tidy(() => model.forward(tf.tensor2d(randomIds(9, 1), [1, 9], 'int32')))).toThrow(/max_position_embeddings 8/);
    } finally {
      model.dispose();
    }
  });
});

describe('HfModel KV cache', () => {
  for (const [label, config, kvChunk] of [
    ...Object.entries(ARCHS).map(([l, c]) => [l, c, undefined] as const),
    ['qwen3, cache chunks of 2 positions (several chunks, old caches disposed each step)', ARCHS[Object.keys(ARCHS)[0]], 2] as const,
  ]) {
    it(`${label}: prefill + decodeStep equal the full forward within 1e-4, left-padded batch`, () => {
      const { model, weights } = load(config, 11);
      if (kvChunk) model.kvChunk = kvChunk;
      try {
        const prompts = [randomIds(5, 1), randomIds(2, 2), randomIds(4, 3)];
        const cont = [randomIds(4, 11), randomIds(4, 12), randomIds(4, 13)];
        const L = 5;
        const pads = prompts.map((p) => L - p.length);
        let out = tf.tidy(() =>
          model.prefill(
            tf.tensor2d(
              prompts.flatMap((p, i) => [...Array<number>(pads[i]).fill(0), ...p]),
              [3, L],
              'int32',
            ),
            pads,
          ),
        );
        for (let step = 0; step <= cont[0].length; step++) {
          const logits = out.logits.arraySync() as number[][];
          prompts.forEach((p, i) => {
            const seq = [...p, ...cont[i].slice(0, step)];
            expect(maxAbsDiff(logits[i], reference64(config, weights, seq)[seq.length - 1])).toBeLessThan(1e-4);
          });
          if (step === cont[0].length) break;
          const t = L + step + 1;
          const keyBias = new Float32Array(3 * t);
          pads.forEach((p, r) => keyBias.fill(MASKED, r * t, r * t + p));
          const next = model.decodeStep(
            cont.map((c) => c[step]),
            pads.map((p) => L + step - p),
            out.cache,
            keyBias,
          );
          tf.dispose([out.logits, ...out.cache.k, ...out.cache.v]);
          out = next;
        }
        if (kvChunk) expect(out.cache.k[0].map((c) => c.shape[1])).toEqual([5, 2, 2]); // the prompt's chunk, then chunks of kvChunk
        tf.dispose([out.logits, ...out.cache.k, ...out.cache.v]);
      } finally {
        model.dispose();
      }
    });
  }
});

describe('HfModel gradients (custom ops) against finite differences of the float64 reference', () => {
  // f = sum_t sum_v logits[t][v] * R[t][v]; d f / d theta for a few coordinates of each parameter kind.
  const probe = (config: HfModelConfig, weights: Map<string, Float32Array>, ids: number[], R: number[][], lora: LoraPair[] = []) =>
    reference64(config, weights, ids, lora).reduce((s, row, t) => s + row.reduce((a, v, j) => a + v * R[t][j], 0), 0);

  function check(config: HfModelConfig, lora: LoraPair[] | undefined, names: string[]) {
    const weights = randomWeights(config, 21);
    const model = HfModel.fromSource(config, memorySource(config, weights), { lora, trainable: true });
    try {
      const ids = randomIds(6, 5);
      const rand = randomIds(6 * config.vocabSize, 6, 0, 1000).map((v) => v / 1000 - 0.5);
      const R = ids.map((_, t) => rand.slice(t * config.vocabSize, (t + 1) * config.vocabSize));
      const vars = new Map(model.variables().map((v) => [v.name.replace(/^hf\d+\//, ''), v]));
      const { grads } = tf.variableGrads(
        () => tf.sum(tf.mul(model.forward(tf.tensor2d(ids, [1, 6], 'int32')), tf.tensor3d([R]))) as tf.Scalar,
        names.map((n) => vars.get(n)!),
      );
      for (const name of names) {
        const g = grads[vars.get(name)!.name].dataSync();
        const v = vars.get(name)!;
        // Stored layout: linears and a tied embedding are transposed; LoRA factors are A^T, B^T.
        const [rows, cols] = v.shape.length === 2 ? v.shape : [1, v.shape[0]];
        let checked = 0;
        for (const flatIdx of [0, 3, Math.floor(g.length / 2) + 1, g.length - 2]) {
          const [i, j] = [Math.floor(flatIdx / cols), flatIdx % cols];
          const h = 1e-4;
          const bump = (delta: number) => {
            if (name.endsWith('.lora_A') || name.endsWith('.lora_B')) {
              const base = lora!.find((p) => name.startsWith(p.target))!;
              const isA = name.endsWith('.lora_A');
              const arr = Float32Array.from(isA ? base.a : base.b);
              const k = isA ? j * rows + i : j * rows + i; // stored [in, r] = A^T, [r, out] = B^T: back to row-major A [r, in], B [out, r]
              arr[k] += delta;
              const moved = lora!.map((p) => (p === base ? { ...p, [isA ? 'a' : 'b']: arr } : p));
              return probe(config, weights, ids, R, moved);
            }
            const w = new Map(weights);
            const arr = Float32Array.from(w.get(name)!);
            const transposed =
              v.shape.length === 2 &&
              (name.endsWith('_proj.weight') || (name === 'model.embed_tokens.weight' && config.tieWordEmbeddings) || name === 'lm_head.weight');
            arr[transposed ? j * rows + i : flatIdx] += delta;
            w.set(name, arr);
            return probe(config, w, ids, R, lora);
          };
          const fd = (bump(h) - bump(-h)) / (2 * h);
          expect(Math.abs(g[flatIdx] - fd), `${name}[${flatIdx}]: tfjs ${g[flatIdx]} vs finite difference ${fd}`).toBeLessThan(
            2e-3 * Math.max(1, Math.abs(fd)),
          );
          checked++;
        }
        expect(checked).toBe(4);
        expect(g.some((x) => x !== 0)).toBe(true);
      }
    } finally {
      model.dispose();
    }
  }

  it('qwen3: tied embedding (one-hot path), q/k norms, q/k/o/MLP weights, final norm', () => {
    check(randomHfConfig(), undefined, [
      'model.embed_tokens.weight',
      'model.layers.0.self_attn.q_norm.weight',
      'model.layers.0.self_attn.k_norm.weight',
      'model.layers.0.self_attn.q_proj.weight',
      'model.layers.1.self_attn.k_proj.weight',
      'model.layers.0.self_attn.v_proj.weight',
      'model.layers.0.self_attn.o_proj.weight',
      'model.layers.1.mlp.gate_proj.weight',
      'model.layers.0.mlp.down_proj.weight',
      'model.norm.weight',
    ]);
  });

  it('qwen2: untied embedding and head, q/k/v biases', () => {
    check(randomQwen2Config(), undefined, [
      'model.embed_tokens.weight',
      'lm_head.weight',
      'model.layers.0.self_attn.q_proj.bias',
      'model.layers.1.self_attn.v_proj.bias',
    ]);
  });

  it('LoRA: only the factors are trainable, and their gradients are right', () => {
    const config = randomHfConfig();
    const lora = randomLora(config, 2, 0.5, 3);
    const weights = randomWeights(config, 21);
    const model = HfModel.fromSource(config, memorySource(config, weights), { lora, trainable: true });
    const names = model.variables().map((v) => v.name.replace(/^hf\d+\//, ''));
    model.dispose();
    expect(names.length).toBe(2 * lora.length);
    expect(names.every((n) => n.endsWith('.lora_A') || n.endsWith('.lora_B'))).toBe(true);
    check(config, lora, [
      'model.layers.0.self_attn.q_proj.weight.lora_A',
      'model.layers.1.self_attn.v_proj.weight.lora_B',
      'model.layers.0.mlp.down_proj.weight.lora_A',
    ]);
  });
});

describe('HfModel on the fixtures made with transformers', () => {
  for (const f of FIXTURES) {
    it(`${f.name}: logits equal transformers' (expected.json) and reference.ts within 1e-4`, () => {
      const { config, model, expected, lora, weight } = loadFixture(f);
      try {
        for (const seq of expected.sequences) {
          const got = forwardRows(model, seq.ids);
          const ref = referenceLogits(config, weight, seq.ids, lora);
          got.forEach((row, t) => {
            expect(maxAbsDiff(row, seq.logits[t])).toBeLessThan(1e-4);
            expect(maxAbsDiff(row, ref[t])).toBeLessThan(1e-4);
          });
        }
      } finally {
        model.dispose();
      }
    });
  }

  for (const f of FIXTURES.filter((x) => x.dir !== 'qwen3-tiny')) {
    it(`${f.name}: prefill of a prefix + decodeStep per token equal transformers' logits within 1e-4`, () => {
      const { model, expected } = loadFixture(f);
      try {
        const seq = expected.sequences[expected.sequences.length - 1];
        const P = 5;
        let out = tf.tidy(() => model.prefill(tf.tensor2d(seq.ids.slice(0, P), [1, P], 'int32'), [0]));
        for (let t = P; ; t++) {
          expect(maxAbsDiff(out.logits.dataSync(), seq.logits[t - 1])).toBeLessThan(1e-4);
          if (t === seq.ids.length) break;
          const next = model.decodeStep([seq.ids[t]], [t], out.cache, new Float32Array(t + 1));
          tf.dispose([out.logits, ...out.cache.k, ...out.cache.v]);
          out = next;
        }
        tf.dispose([out.logits, ...out.cache.k, ...out.cache.v]);
      } finally {
        model.dispose();
      }
    });
  }
});
