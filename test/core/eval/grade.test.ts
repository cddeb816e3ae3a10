/**
 * Math and QA graders: spelling variants that must agree, near misses that must not, the
 * MATH500 agreement check on published data (each row's boxed solution against its answer),
 * and fuzzing (graders never throw and stay fast on hostile input).
 */
import { describe, expect, it } from 'vitest';
import { extractLastBoxed, gradeMath, gradeQA, normalizeMathAnswer, normalizeQA, tokenF1 } from '../../../src/core/eval';
import { HAS_SHARED_DATA, readJsonl, sharedPath } from '../data/sharedData';

const boxed = (s: string): string => `Reasoning... so the answer is $\\boxed{${s}}$.`;

describe('extractLastBoxed', () => {
  it('takes the last box, brace-matched, with nested braces', () => {
    expect(extractLastBoxed('\\boxed{1} then \\boxed{\\frac{a}{b^{2}}}')).toBe('\\frac{a}{b^{2}}');
  });
  it('reads \\boxed 5 and \\fbox{..}', () => {
    expect(extractLastBoxed('so $\\boxed 5$.')).toBe('5');
    expect(extractLastBoxed('\\fbox{12}')).toBe('12');
  });
  it('escaped braces do not close the box', () => {
    expect(extractLastBoxed('\\boxed{\\{1,2\\}}')).toBe('\\{1,2\\}');
  });
  it('an unclosed or empty last box gives null even after a complete one', () => {
    expect(extractLastBoxed('\\boxed{1} and \\boxed{2')).toBeNull();
    expect(extractLastBoxed('\\boxed{1} and \\boxed{ }')).toBeNull();
    expect(extractLastBoxed('no box here')).toBeNull();
  });
});

describe('gradeMath: equal answers in different spellings', () => {
  const same: [string, string][] = [
    ['\\dfrac{1}{2}', '\\frac12'],
    ['\\tfrac{1}{2}', '1/2'],
    ['0.5', '\\frac 12'],
    ['\\frac9{19}', '\\frac{9}{19}'],
    ['90', '90^\\circ'],
    ['90^{\\circ}', '90'],
    ['10080', '10,\\!080'],
    ['11111111100', '11,\\! 111,\\! 111,\\! 100'],
    ['5', 'x=5'],
    ['x = 5', '5'],
    ['5.4', '5.4 \\text{ cents}'],
    ['864', '864 \\mbox{ inches}^2'],
    ['\\frac{270}{7}', '\\frac{270}7\\text{ degrees}'],
    ['\\left( 3, \\frac{\\pi}{2} \\right)', '(3,\\pi/2)'],
    ['Evelyn', '\\text{Evelyn}'],
    ['evelyn', 'Evelyn'],
    ['3\\sqrt{13}', '\\sqrt{117}'],
    ['11\\sqrt2', '11\\sqrt{2}'],
    ['2(k+1)', '2k+2'],
    ['x^5 - x^4 + x^3 - x^2 + x - 1', '(x-1)(x^4+x^2+1)'],
    ['-2,1', '1,-2'],
    ['1\\pm\\sqrt{19}', '1+\\sqrt{19},1-\\sqrt{19}'],
    ['\\begin{pmatrix} -1/3 \\\\ 2/3 \\end{pmatrix}', '\\begin{pmatrix}-\\frac{1}{3}\\\\ \\frac{2}{3}\\end{pmatrix}'],
    ['25', '025'],
    ['27', '27.0'],
    ['C', '\\text{(C)}'],
    ['137.5', '137 \\frac{1}{2}'],
    ['32348', '\\$32,\\!348'],
    ['[-2,7]', 'x \\in [-2,7]'],
    ['0.0000672', '.0000672'],
    ['(0,9)\\cup(9,36)', '(0,9) \\cup (9,36)'],
    ['6-5i', '6 - 5i'],
    ['5x - 7y + 11z + 4 = 0', '-5x+7y-11z-4=0'],
    ['\\frac{\\sqrt{3}}{3}', '\\frac{1}{\\sqrt3}'],
    ['50\\%', '50'],
  ];
  for (const [response, gold] of same) {
    it(`${response}  ==  ${gold}`, () => {
      expect(gradeMath(boxed(response), gold).correct).toBe(true);
    });
  }
  it('gold answers in the published shapes: 27.0, "#### 18", a number', () => {
    expect(gradeMath(boxed('27'), 27.0).correct).toBe(true);
    expect(gradeMath(boxed('18'), 'so she makes 18 dollars\n#### 18').correct).toBe(true);
    expect(gradeMath(boxed('1,000'), '#### 1000').correct).toBe(true);
  });
});

describe('gradeMath: different answers', () => {
  const different: [string, string][] = [
    ['\\frac{15}{3}', '\\frac{14}{3}'],
    ['(3,4]', '(3,4)'],
    ['[3,4)', '(3,4)'],
    ['Evlyn', 'Evelyn'],
    ['4343_6', '4344_6'],
    ['2k+3', '2k+2'],
    ['x^2', 'y^2'],
    ['1,2', '1,2,3'],
    ['0.3333', '\\frac{1}{3}'],
    ['\\sqrt{2}', '\\sqrt{3}'],
    ['5x-7y+11z+4=0', '5x-7y+11z+5=0'],
    ['\\infty', '-\\infty'],
  ];
  for (const [response, gold] of different) {
    it(`${response}  !=  ${gold}`, () => {
      expect(gradeMath(boxed(response), gold).correct).toBe(false);
    });
  }
  it('no box means wrong, and nothing extracted', () => {
    expect(gradeMath('the answer is 5', '5')).toEqual({ correct: false, extracted: null });
  });
  it('the last box counts', () => {
    expect(gradeMath('\\boxed{5} wait, no: \\boxed{6}', '5').correct).toBe(false);
    expect(gradeMath('\\boxed{6} wait, no: \\boxed{5}', '5')).toEqual({ correct: true, extracted: '5' });
  });
});

/** Increment the first run of digits (keeping its width): `\frac{14}{3}` -> `\frac{15}{3}`. */
function bumpFirstNumber(s: string): string | null {
  const m = /\d+/.exec(s);
  if (!m) return null;
  const bumped = String(BigInt(m[0]) + 1n).padStart(m[0].length, '0');
  return s.slice(0, m.index) + bumped + s.slice(m.index + m[0].length);
}

/** Other spellings of the same answer, the way a model might write it. */
function respell(s: string): string {
  return s
    .replace(/\\frac\{(\d+)\}\{(\d+)\}/g, (_m, a: string, b: string) => `${a}/${b}`)
    .replace(/\\frac/g, '\\dfrac')
    .replace(/,\s*/g, ', ')
    .replace(/^\((.*)\)$/, '\\left($1\\right)')
    .replace(/\\text\{([^}]*)\}/g, '\\mbox{$1}');
}

describe.skipIf(!HAS_SHARED_DATA)('gradeMath on MATH500 (../shared/data/math/math500.jsonl)', () => {
  const rows = HAS_SHARED_DATA ? readJsonl(sharedPath('math/math500.jsonl')) : [];

  it('the boxed answer of each solution grades equal to its answer on >= 99% of rows', () => {
    expect(rows.length).toBe(500);
    const failures: string[] = [];
    for (const r of rows) {
      if (!gradeMath(String(r.solution), String(r.answer)).correct) failures.push(String(r.answer));
    }
    const agreement = 1 - failures.length / rows.length;
    console.log(`MATH500 grading agreement (solution box vs answer): ${(agreement * 100).toFixed(1)}% of ${rows.length}`, failures.slice(0, 10));
    expect(agreement).toBeGreaterThanOrEqual(0.99);
  });

  it('respelled answers (a/b, \\dfrac, \\left(, spaces, \\mbox) still grade equal on >= 97% of rows', () => {
    let agree = 0;
    const failures: string[] = [];
    for (const r of rows) {
      const gold = String(r.answer);
      if (gradeMath(boxed(respell(gold)), gold).correct) agree++;
      else failures.push(`${respell(gold)} vs ${gold}`);
    }
    console.log(`MATH500 respelled agreement: ${((agree / rows.length) * 100).toFixed(1)}%`, failures.slice(0, 10));
    expect(agree / rows.length).toBeGreaterThanOrEqual(0.97);
  });

  it('a perturbed answer (first number + 1) grades wrong on every row that has a number', () => {
    const wronglyAccepted: string[] = [];
    let tried = 0;
    for (const r of rows) {
      const gold = String(r.answer);
      const bumped = bumpFirstNumber(gold);
      if (bumped === null) continue;
      tried++;
      if (gradeMath(boxed(bumped), gold).correct) wronglyAccepted.push(`${bumped} vs ${gold}`);
    }
    console.log(`MATH500 perturbed answers tried: ${tried}, wrongly accepted: ${wronglyAccepted.length}`, wronglyAccepted);
    expect(tried).toBeGreaterThan(450);
    expect(wronglyAccepted).toEqual([]);
  });

  it("another row's answer grades wrong unless the two answers are the same text", () => {
    let wrong = 0;
    for (let i = 0; i < rows.length; i++) {
      const gold = String(rows[i].answer);
      const other = String(rows[(i + 1) % rows.length].answer);
      if (normalizeMathAnswer(other) === normalizeMathAnswer(gold)) continue;
      if (gradeMath(boxed(other), gold).correct) wrong++;
    }
    expect(wrong).toBe(0);
  });
});

describe('gradeQA', () => {
  it('SQuAD normalisation: case, punctuation, articles, whitespace', () => {
    expect(normalizeQA('  The  Home-Rule League! ')).toBe('homerule league');
    expect(normalizeQA('An apple a day')).toBe('apple day');
  });
  it('exact match over aliases, the last answer tag counts', () => {
    const g = gradeQA('<think>hmm</think><answer>Paris</answer> no: <answer>the Bobby Scott</answer>', ['Bob Russell', 'Bobby Scott']);
    expect(g).toEqual({ em: 1, f1: 1, extracted: 'the Bobby Scott' });
  });
  it('token F1 worked by hand: "december 1972" vs "14 december 1972 utc" = 2*(1*0.5)/(1.5)', () => {
    expect(tokenF1('December 1972', '14 December 1972 UTC')).toBeCloseTo(2 / 3, 12);
    const g = gradeQA('<answer>December 1972</answer>', ['14 December 1972 UTC', 'December 1972']);
    expect(g.em).toBe(1);
    const h = gradeQA('<answer>in December</answer>', ['14 December 1972 UTC']);
    expect(h.em).toBe(0);
    // tokens: {in, december} vs {14, december, 1972, utc}: p = 1/2, r = 1/4, F1 = 1/3
    expect(h.f1).toBeCloseTo(1 / 3, 12);
  });
  it('no tag, or an unclosed last tag, scores zero with nothing extracted', () => {
    expect(gradeQA('Paris', ['Paris'])).toEqual({ em: 0, f1: 0, extracted: null });
    expect(gradeQA('<answer>Paris</answer><answer>Lyon', ['Paris'])).toEqual({ em: 0, f1: 0, extracted: null });
  });
});

describe('graders never throw and stay fast (fuzz)', () => {
  const pieces = [
    '\\boxed{',
    '\\boxed',
    '}',
    '{',
    '\\frac',
    '\\sqrt',
    '^',
    '_',
    '(',
    ')',
    '[',
    ']',
    ',',
    '=',
    '\\pm',
    '\\cup',
    '\\left',
    '\\right',
    '\\text{',
    'x',
    'e',
    'i',
    '1',
    '0',
    '9',
    '.',
    '-',
    '+',
    '/',
    '\\',
    ' ',
    '$',
    '\\begin{pmatrix}',
    '\\\\',
    '&',
    '\\end{pmatrix}',
    '<answer>',
    '</answer>',
    '#### ',
    '\\infty',
    '\\pi',
    '%',
    '\\circ',
    '\u0000',
    '😀',
    '\\{',
    '\\}',
  ];
  let seed = 7;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const randomText = (): string => Array.from({ length: rand(60) }, () => pieces[rand(pieces.length)]).join('');

  it('on 3000 random and adversarial strings', () => {
    const adversarial = [
      '\\boxed{' + '{'.repeat(5000),
      '\\boxed{' + '('.repeat(3000) + '}',
      '\\boxed{' + 'x^'.repeat(2000) + '1}',
      '\\boxed{' + '\\frac{1}{'.repeat(500) + '}',
      '\\boxed{' + '1+'.repeat(5000) + '1}',
      '\\boxed{' + 'a,'.repeat(3000) + '}',
      '\\boxed{1' + ' a'.repeat(1000) + '!}',
    ];
    const t0 = performance.now();
    let worst = 0;
    for (let i = 0; i < 3000 + adversarial.length; i++) {
      const r = i < adversarial.length ? adversarial[i] : randomText();
      const g = i < adversarial.length ? '1' : randomText();
      const t = performance.now();
      expect(() => gradeMath(r, g)).not.toThrow();
      expect(() => gradeQA(r, [g])).not.toThrow();
      worst = Math.max(worst, performance.now() - t);
    }
    console.log(`grader fuzz: ${(performance.now() - t0).toFixed(0)} ms total, worst single case ${worst.toFixed(1)} ms`);
    expect(worst).toBeLessThan(1000);
  });

  it('normalisation is idempotent on MATH-style answers', () => {
    for (const s of ['\\dfrac{1}{2}', '10,\\!080', '\\left( 3, \\frac{\\pi}{2} \\right)', '5.4 \\text{ cents}', '\\frac 59', 'x \\in [-2,7]']) {
      const once = normalizeMathAnswer(s);
      expect(normalizeMathAnswer(once)).toBe(once);
    }
  });
});
