/**
 * Arithmetic benchmarks in difficulty tiers, the way MATH500, AMC and AIME spread:
 * `arith-easy` (a + b, a - b), `arith-medium` (three operands, + - *, precedence),
 * `arith-hard` (four operands, random bracketing). Short prompts ("17+5*3") and short integer
 * answers, for tiny character-level models. Each row's meta carries the evaluation steps
 * (`5*3=15`, `17+15=32`), which the warm-start demonstrations use.
 *
 * Deterministic (seeded PRNG); the test split is drawn first from its own stream and the train
 * stream skips every test question. Tested by test/core/data/tasks.test.ts.
 */
import { createRng, type Rng } from '../prng';
import type { DatasetRow } from '../types';
import type { TaskGenerator, TaskSplit } from './types';

type Op = '+' | '-' | '*';
type Node = { v: number } | { op: Op; l: Node; r: Node };

interface TierSpec {
  tier: number;
  description: string;
  operands: number;
  ops: readonly Op[];
  lo: number;
  hi: number;
  /** Random tree shapes (brackets) instead of left-to-right chains. */
  bracketed: boolean;
  sizes: Record<TaskSplit, number>;
}

export const ARITH_TIERS = {
  'arith-digits': {
    tier: 0,
    description: 'a+b or a-b, single digits 0..9 (for the quick CPU presets)',
    operands: 2,
    ops: ['+', '-'],
    lo: 0,
    hi: 9,
    bracketed: false,
    sizes: { train: 160, test: 40 },
  },
  // Three digits summed: 1000 questions, 200 held out. Every one-step fact a test question needs
  // (a+b, then s+c with s <= 18) also occurs in training questions, so a tiny policy can solve
  // unseen questions by composing memorised facts step by step (the quick CPU presets' tier).
  'arith-chain': {
    tier: 0,
    description: 'a+b+c, single digits 0..9: unseen questions, seen one-step facts (for the quick CPU presets)',
    operands: 3,
    ops: ['+'],
    lo: 0,
    hi: 9,
    bracketed: false,
    sizes: { train: 800, test: 200 },
  },
  'arith-easy': {
    tier: 1,
    description: 'a+b or a-b, operands 0..50',
    operands: 2,
    ops: ['+', '-'],
    lo: 0,
    hi: 50,
    bracketed: false,
    sizes: { train: 3000, test: 200 },
  },
  'arith-medium': {
    tier: 2,
    description: 'three operands 1..20 with + - * and precedence',
    operands: 3,
    ops: ['+', '-', '*'],
    lo: 1,
    hi: 20,
    bracketed: false,
    sizes: { train: 5000, test: 200 },
  },
  'arith-hard': {
    tier: 3,
    description: 'four operands 1..30 with + - * and brackets',
    operands: 4,
    ops: ['+', '-', '*'],
    lo: 1,
    hi: 30,
    bracketed: true,
    sizes: { train: 5000, test: 200 },
  },
} as const satisfies Record<string, TierSpec>;
export type ArithTier = keyof typeof ARITH_TIERS;

const PREC: Record<Op, number> = { '+': 1, '-': 1, '*': 2 };

function randomTree(rng: Rng, spec: TierSpec, n: number): Node {
  if (n === 1) return { v: rng.int(spec.lo, spec.hi) };
  const leftSize = spec.bracketed ? rng.int(1, n - 1) : n - 1; // chains grow to the left
  return { op: rng.pick(spec.ops), l: randomTree(rng, spec, leftSize), r: randomTree(rng, spec, n - leftSize) };
}

/** Print with the fewest brackets that keep the tree's meaning. */
export function formatExpression(node: Node): string {
  if ('v' in node) return String(node.v);
  const wrap = (child: Node, right: boolean): string => {
    const s = formatExpression(child);
    if ('v' in child) return s;
    // a-(b+c) and a-(b-c) keep their brackets on the right; a+(b-c) and a*(b*c) do not need them.
    const needs = PREC[child.op] < PREC[node.op] || (right && PREC[child.op] === PREC[node.op] && node.op === '-');
    return needs ? `(${s})` : s;
  };
  return `${wrap(node.l, false)}${node.op}${wrap(node.r, true)}`;
}

/** Value and the evaluation steps in post-order (`5*3=15`). */
export function evaluateTree(node: Node, steps: string[] = []): { value: number; steps: string[] } {
  if ('v' in node) return { value: node.v, steps };
  const l = evaluateTree(node.l, steps).value;
  const r = evaluateTree(node.r, steps).value;
  const value = node.op === '+' ? l + r : node.op === '-' ? l - r : l * r;
  steps.push(`${l}${node.op}${r}=${value}`);
  return { value, steps };
}

export function arithGenerator(name: ArithTier, seed: string | number = 'v1'): TaskGenerator {
  const spec: TierSpec = ARITH_TIERS[name];
  const cache: Partial<Record<TaskSplit, DatasetRow[]>> = {};

  const draw = (split: TaskSplit, exclude: ReadonlySet<string>): DatasetRow[] => {
    const rng = createRng(`${name}/${seed}/${split}`);
    const rows: DatasetRow[] = [];
    const seen = new Set<string>();
    const target = spec.sizes[split];
    for (let attempt = 0; rows.length < target && attempt < target * 50; attempt++) {
      const tree = randomTree(rng, spec, spec.operands);
      const question = formatExpression(tree);
      if (seen.has(question) || exclude.has(question)) continue;
      seen.add(question);
      const { value, steps } = evaluateTree(tree);
      rows.push({ id: `${name}/${split}/${rows.length}`, question, answers: [String(value)], benchmark: name, meta: { tier: spec.tier, steps } });
    }
    return rows;
  };
  const full = (split: TaskSplit): DatasetRow[] => {
    if (!cache[split]) {
      cache.test ??= draw('test', new Set());
      if (split === 'train') cache.train = draw('train', new Set(cache.test.map((r) => r.question)));
    }
    return cache[split]!;
  };
  return {
    name,
    description: spec.description,
    domain: 'math',
    tier: spec.tier,
    sizes: spec.sizes,
    rows: (split, count) =>
      full(split)
        .slice(0, count ?? undefined)
        .map((r) => ({ ...r, answers: [...r.answers], meta: { ...r.meta } })),
  };
}
