/**
 * toWire (src/shared/wire.ts): the one place typed arrays become number arrays for a transport.
 * Checks the conversion of each array kind, non-finite floats as null, that records without typed
 * arrays pass through as the same objects, and that a converted member survives JSON unchanged
 * (what the web transport does to it).
 */
import { describe, expect, it } from 'vitest';
import type { StoredMember } from '../../src/shared/records';
import { toWire } from '../../src/shared/wire';

const member: StoredMember = {
  id: 7,
  memberIndex: 1,
  role: 'solver',
  policyId: 'p0',
  policyVersion: 3,
  prompt: 'q',
  output: 'ab',
  valid: true,
  parseError: null,
  logRatio: 0.25,
  promptLength: 2,
  outputLength: 2,
  tokens: {
    promptTokens: new Int32Array([4, 5]),
    outputTokens: new Int32Array([6, 7]),
    logpOld: new Float32Array([-0.5, Number.NaN]),
    mask: new Uint8Array([1, 0]),
    logpCur: new Float32Array([Number.NEGATIVE_INFINITY, -0.25]),
  },
};

describe('toWire', () => {
  it('turns each typed array into a number array, non-finite floats into null', () => {
    const w = toWire(member);
    expect(w.tokens).toEqual({ promptTokens: [4, 5], outputTokens: [6, 7], logpOld: [-0.5, null], mask: [1, 0], logpCur: [null, -0.25] });
    expect(Array.isArray(w.tokens!.mask)).toBe(true);
    expect(JSON.parse(JSON.stringify(w))).toEqual(w);
  });

  it('leaves the input untouched and copies only what contains typed arrays', () => {
    const event = { id: 1, members: [member, { ...member, id: 8, tokens: null }], next: { step: 2, id: 3 } };
    const w = toWire(event);
    expect(member.tokens!.mask).toBeInstanceOf(Uint8Array);
    expect(w).not.toBe(event);
    expect(w.members[1]).toBe(event.members[1]);
    expect(w.next).toBe(event.next);
  });

  it('returns records without typed arrays as they are (NaN in plain numbers is not its business)', () => {
    const page = { events: [{ id: 1, advantage: null, reward: Number.NaN }], next: null };
    expect(toWire(page)).toBe(page);
    expect(toWire(null)).toBeNull();
    expect(toWire('x')).toBe('x');
  });
});
