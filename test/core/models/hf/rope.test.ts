// RoPE inverse frequencies and attention factors (src/core/models/hf/rope.ts) against the values
// transformers 4.57 and 5.18 compute for the same config.json (test/fixtures/hf/rope/, written by
// scripts/fixtures/make_hf_rope_samples.py), and the rotate-half rotation's defining properties.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseHfConfig } from '../../../../src/core/models/hf/config';
import { applyRope, ropeInvFreq } from '../../../../src/core/models/hf/rope';
import type { RopeConfig } from '../../../../src/core/models/hf/types';

const FIXTURES = path.resolve(__dirname, '../../../fixtures/hf/rope');

interface RopeCase {
  name: string;
  config: Record<string, unknown>;
  invFreq: number[];
  attentionScale: number;
}

const load = (major: 4 | 5): RopeCase[] => JSON.parse(fs.readFileSync(path.join(FIXTURES, `transformers-${major}.json`), 'utf8')).cases;

/** transformers computes in float32: 1e-6 relative is its rounding, not a formula difference. */
const REL = 2e-6;

describe('ropeInvFreq = transformers', () => {
  for (const major of [4, 5] as const) {
    for (const c of load(major)) {
      it(`transformers ${major}: ${c.name}`, () => {
        const config = parseHfConfig(c.config, `${c.name}/config.json`);
        const { invFreq, attentionScale } = ropeInvFreq(config.rope, config.headDim);
        expect(invFreq.length).toBe(c.invFreq.length);
        expect(invFreq.length).toBe(config.headDim / 2);
        c.invFreq.forEach((v, i) => expect(Math.abs(invFreq[i] - v) / v, `${c.name} inv_freq[${i}]`).toBeLessThan(REL));
        expect(attentionScale).toBeCloseTo(c.attentionScale, 12);
      });
    }
  }

  it('the cases are not vacuous: scaled types differ from the default frequencies where they should', () => {
    for (const c of load(5)) {
      const config = parseHfConfig(c.config, 'config.json');
      if (config.rope.type === 'default') continue;
      const plain = ropeInvFreq({ type: 'default', theta: config.rope.theta }, config.headDim).invFreq;
      const changed = c.invFreq.filter((v, i) => Math.abs(v - plain[i]) / plain[i] > 1e-3).length;
      expect(changed, c.name).toBeGreaterThan(0);
    }
    // llama3 on a small original context puts frequencies in all three bands: kept, divided, blended.
    const small = load(5).find((c) => c.name === 'llama3-small-context')!;
    const config = parseHfConfig(small.config, 'config.json');
    const plain = ropeInvFreq({ type: 'default', theta: config.rope.theta }, config.headDim).invFreq;
    const ratios = small.invFreq.map((v, i) => plain[i] / v);
    expect(ratios.some((r) => Math.abs(r - 1) < 1e-5)).toBe(true);
    expect(ratios.some((r) => Math.abs(r - 8) < 1e-4)).toBe(true);
    expect(ratios.some((r) => r > 1.01 && r < 7.99)).toBe(true);
  });

  it('yarn attention factor: 0.1 ln(factor) + 1 by default, mscale ratio, or the explicit value', () => {
    const yarn = (over: Partial<RopeConfig>): number =>
      ropeInvFreq({ type: 'yarn', theta: 10000, factor: 4, originalMaxPositions: 64, ...over }, 16).attentionScale;
    expect(yarn({})).toBeCloseTo(0.1 * Math.log(4) + 1, 14);
    expect(yarn({ mscale: 2, mscaleAllDim: 1 })).toBeCloseTo((0.2 * Math.log(4) + 1) / (0.1 * Math.log(4) + 1), 14);
    expect(yarn({ attentionFactor: 1.5 })).toBe(1.5);
    expect(yarn({ factor: 1 })).toBe(1);
  });

  it('errors: unknown type, odd head_dim, a missing scaling key', () => {
    expect(() => ropeInvFreq({ type: 'dynamic' as never, theta: 1 }, 8)).toThrow(/unknown type "dynamic" \(supported: default, linear, llama3, yarn\)/);
    expect(() => ropeInvFreq({ type: 'default', theta: 1 }, 7)).toThrow(/head_dim 7/);
    expect(() => ropeInvFreq({ type: 'linear', theta: 1 }, 8)).toThrow(/linear scaling needs "factor"/);
  });
});

describe('applyRope (rotate-half)', () => {
  const freq = ropeInvFreq({ type: 'default', theta: 10000 }, 8);
  const vec = (seed: number) => Float64Array.from({ length: 8 }, (_, i) => Math.sin(seed * 7.1 + i * 1.3));
  const rotated = (x: Float64Array, pos: number) => {
    const y = Float64Array.from(x);
    applyRope(y, 0, pos, freq);
    return y;
  };
  const dot = (a: Float64Array, b: Float64Array) => a.reduce((s, v, i) => s + v * b[i], 0);

  it('position 0 is the identity and every position preserves the norm', () => {
    const x = vec(1);
    expect([...rotated(x, 0)]).toEqual([...x]);
    expect(dot(rotated(x, 37), rotated(x, 37))).toBeCloseTo(dot(x, x), 12);
  });
  it('pairs element i with i + head_dim/2 (not adjacent elements): x = e0 rotates into e4', () => {
    const e0 = new Float64Array(8);
    e0[0] = 1;
    const y = rotated(e0, 1);
    expect(y[0]).toBeCloseTo(Math.cos(1), 14);
    expect(y[4]).toBeCloseTo(Math.sin(1), 14);
    expect(y[1]).toBe(0);
  });
  it('scores depend only on the relative position', () => {
    const q = vec(2);
    const k = vec(3);
    expect(dot(rotated(q, 9), rotated(k, 4))).toBeCloseTo(dot(rotated(q, 105), rotated(k, 100)), 10);
  });
  it('the attention scale multiplies cos and sin (yarn)', () => {
    const scaled = { ...freq, attentionScale: 1.5 };
    const x = vec(4);
    const y = Float64Array.from(x);
    applyRope(y, 0, 3, scaled);
    rotated(x, 3).forEach((v, i) => expect(y[i]).toBeCloseTo(1.5 * v, 12));
  });
});
