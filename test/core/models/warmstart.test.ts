import { describe, expect, it } from 'vitest';
import { PolicySet } from '../../../src/core/models/policySet';
import { CharTokenizer } from '../../../src/core/models/tokenizer';
import { readParameters } from '../../../src/core/models/transformer';
import { encodeDemonstration, parseDemonstrations, warmStart, type Demonstration } from '../../../src/core/models/warmstart';
import { maxAbsDiff, microConfig } from './helpers';

const tok = new CharTokenizer();
const demos: Demonstration[] = [
  { role: 'solver', prompt: 'add 2 3', completion: '5' },
  { role: 'solver', prompt: 'add 4 1', completion: '5' },
  { role: 'solver', prompt: 'add 1 1', completion: '2' },
  { role: 'verifier', prompt: 'check 5', completion: 'ok' },
  { role: 'verifier', prompt: 'check 7', completion: 'no' },
];

describe('demonstration parsing', () => {
  it('reads JSONL, skipping blank lines', () => {
    const text = demos.map((d) => JSON.stringify(d)).join('\n') + '\n\n';
    expect(parseDemonstrations(text, 'demo.jsonl')).toEqual(demos);
  });

  it('a bad line is an error naming the file and the line', () => {
    const good = JSON.stringify(demos[0]);
    expect(() => parseDemonstrations(`${good}\n{"role": "solver"`, 'd.jsonl')).toThrow(/^d\.jsonl:2: invalid JSON/);
    expect(() => parseDemonstrations(`${good}\n\n{"role":"judge","prompt":"a","completion":"b"}`, 'd.jsonl')).toThrow(/^d\.jsonl:3: .*role/);
    expect(() => parseDemonstrations('{"role":"solver","prompt":"a"}', 'd.jsonl')).toThrow(/^d\.jsonl:1: .*completion/);
  });

  it('shared prompts start with <bos><role>; completions end with <eos>', () => {
    const p = encodeDemonstration(tok, demos[0], true);
    expect(p.prompt.slice(0, 2)).toEqual([tok.bosId, tok.roleId('solver')]);
    expect(p.completion.at(-1)).toBe(tok.eosId);
    expect(encodeDemonstration(tok, demos[0], false).prompt[1]).toBe(tok.id('a'));
  });
});

describe('warmStart (tiny run)', () => {
  it('shared: loss finite and falling, accuracy rising, every parameter moved', () => {
    const set = new PolicySet('shared', microConfig());
    const before = readParameters(set.get('shared').model);
    const reports = warmStart(set, tok, demos, { epochs: 12, batchSize: 5, learningRate: 1e-2, seed: 1 });
    expect(reports).toHaveLength(12);
    expect(reports.every((r) => Number.isFinite(r.loss))).toBe(true);
    expect(reports.at(-1)!.loss).toBeLessThan(reports[0].loss * 0.6);
    expect(reports.at(-1)!.accuracy).toBeGreaterThan(reports[0].accuracy);
    const after = readParameters(set.get('shared').model);
    for (const [name, v] of before) expect(maxAbsDiff(v, after.get(name)!), name).toBeGreaterThan(0);
    expect(set.get('shared').version).toBe(12);
    set.dispose();
  });

  it('per-role: each policy trains on its own rows; a policy without rows is untouched', () => {
    const set = new PolicySet('per-role', microConfig(), ['solver', 'verifier', 'router']);
    const routerBefore = readParameters(set.get('router').model);
    const reports = warmStart(set, tok, demos, { epochs: 2, batchSize: 4, learningRate: 1e-2, seed: 1 });
    expect(new Set(reports.map((r) => r.policyId))).toEqual(new Set(['solver', 'verifier']));
    expect(reports.find((r) => r.policyId === 'solver')!.tokens).toBe(3 * 2); // 3 rows x ("5"|"2" + <eos>)
    expect(reports.find((r) => r.policyId === 'verifier')!.tokens).toBe(2 * 3);
    const routerAfter = readParameters(set.get('router').model);
    for (const [name, v] of routerBefore) expect(maxAbsDiff(v, routerAfter.get(name)!)).toBe(0);
    expect(set.get('router').version).toBe(0);
    set.dispose();
  });
});
