/**
 * Built-in task generators: determinism, fixed disjoint splits, answers checked by an
 * independent evaluator (the grader's expression evaluator) or by reading the corpus, growing
 * difficulty across arithmetic tiers, and the knowledge-base corpus loaded into the retriever.
 */
import { describe, expect, it } from 'vitest';
import { Bm25Retriever, TASK_NAMES, createRng, getTaskGenerator, type KbHop } from '../../../src/core/data';
import { compileExpression } from '../../../src/core/eval';

describe('seeded PRNG', () => {
  it('same seed, same stream; different seed, different stream; ints within bounds', () => {
    const a = createRng('x');
    const b = createRng('x');
    const c = createRng('y');
    const sa = Array.from({ length: 20 }, () => a.int(0, 9));
    expect(Array.from({ length: 20 }, () => b.int(0, 9))).toEqual(sa);
    expect(Array.from({ length: 20 }, () => c.int(0, 9))).not.toEqual(sa);
    for (const v of sa) expect(v >= 0 && v <= 9).toBe(true);
  });
});

describe('task generators', () => {
  for (const name of TASK_NAMES) {
    it(`${name}: deterministic, prefix-stable, train and test disjoint`, () => {
      const g1 = getTaskGenerator(name);
      const g2 = getTaskGenerator(name);
      const test = g1.rows('test');
      expect(test.length).toBe(g1.sizes.test);
      expect(test.length).toBeGreaterThanOrEqual(40);
      expect(g2.rows('test')).toEqual(test);
      expect(g1.rows('train', 10)).toEqual(g2.rows('train').slice(0, 10));
      const testQ = new Set(test.map((r) => r.question));
      const train = g1.rows('train');
      expect(train.length).toBeGreaterThan(test.length);
      for (const r of train) expect(testQ.has(r.question)).toBe(false);
      expect(new Set(train.map((r) => r.id)).size).toBe(train.length);
      // Short prompts and answers for tiny character-level models.
      for (const r of [...train, ...test]) {
        expect(r.question.length).toBeLessThanOrEqual(64);
        expect(r.answers[0].length).toBeLessThanOrEqual(24);
      }
      expect(getTaskGenerator(name, { seed: 'other' }).rows('test', 20)).not.toEqual(g1.rows('test', 20));
    });
  }

  it('unknown task names list the valid ones', () => {
    expect(() => getTaskGenerator('arith-impossible')).toThrow(/valid tasks: arith-digits, arith-chain, arith-easy, arith-medium/);
  });

  it('arithmetic answers agree with an independent evaluator, and the tiers grow harder', () => {
    const meanLen: number[] = [];
    for (const name of ['arith-digits', 'arith-easy', 'arith-medium', 'arith-hard'] as const) {
      const rows = getTaskGenerator(name).rows('train', 500);
      for (const r of rows) {
        const e = compileExpression(r.question);
        expect(e, r.question).not.toBeNull();
        expect(e!.evaluate({})).toBe(Number(r.answers[0]));
        const steps = r.meta.steps as string[];
        expect(steps.at(-1)!.endsWith(`=${r.answers[0]}`)).toBe(true);
      }
      meanLen.push(rows.reduce((s, r) => s + (r.meta.steps as string[]).length + r.answers[0].length, 0) / rows.length);
      if (name === 'arith-hard') expect(rows.some((r) => r.question.includes('('))).toBe(true);
    }
    expect(meanLen[0]).toBeLessThan(meanLen[1]);
    expect(meanLen[1]).toBeLessThan(meanLen[2]);
    expect(meanLen[2]).toBeLessThan(meanLen[3]);
  });

  it('arith-chain: test questions are unseen, but nearly every one-step fact they need is in training', () => {
    const g = getTaskGenerator('arith-chain');
    const train = g.rows('train');
    const test = g.rows('test');
    for (const r of [...train, ...test]) {
      const e = compileExpression(r.question);
      expect(e!.evaluate({})).toBe(Number(r.answers[0]));
      expect(r.meta.steps as string[]).toHaveLength(2);
    }
    const trainQuestions = new Set(train.map((r) => r.question));
    expect(test.some((r) => trainQuestions.has(r.question))).toBe(false);
    const trainFacts = new Set(train.flatMap((r) => r.meta.steps as string[]));
    const needed = test.flatMap((r) => r.meta.steps as string[]);
    expect(needed.filter((s) => trainFacts.has(s)).length / needed.length).toBeGreaterThan(0.97);
  });

  it('knowledge-base answers are read from the documents named by the hops; multi-hop needs both', () => {
    for (const name of ['kb-single', 'kb-multi'] as const) {
      const g = getTaskGenerator(name);
      const byTitle = new Map(g.corpus!().map((p) => [p.title, p.text]));
      for (const r of [...g.rows('train', 200), ...g.rows('test')]) {
        const hops = r.meta.hops as KbHop[];
        expect(hops.length).toBe(name === 'kb-single' ? 1 : 2);
        for (const h of hops) expect(byTitle.get(h.entity)).toContain(h.fact);
        expect(hops.at(-1)!.fact).toBe(r.answers[0]);
        if (name === 'kb-multi') expect(byTitle.get(hops[0].entity)).not.toContain(r.answers[0]);
      }
    }
  });

  it('test questions are about entities no train question mentions', () => {
    const g = getTaskGenerator('kb-multi');
    const trainSubjects = new Set(g.rows('train').map((r) => (r.meta.hops as KbHop[])[0].entity));
    for (const r of g.rows('test')) expect(trainSubjects.has((r.meta.hops as KbHop[])[0].entity)).toBe(false);
  });

  it('the knowledge-base corpus loads into the retriever, which finds the first hop of most questions', () => {
    const g = getTaskGenerator('kb-multi');
    const r = Bm25Retriever.open(g.corpus!());
    const rows = g.rows('test');
    let hit = 0;
    for (const q of rows) {
      const first = (q.meta.hops as KbHop[])[0].entity;
      if (r.search(q.question, 3).some((h) => h.title === first)) hit++;
    }
    console.log(`kb-multi test: first-hop document in top 3 for ${hit}/${rows.length} questions`);
    expect(hit / rows.length).toBeGreaterThanOrEqual(0.9);
  });
});
