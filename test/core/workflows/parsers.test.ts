/**
 * Output parsers: the accepted formats, the rejected near misses with their reasons, and
 * fuzzing with random and adversarial strings (a parser never throws, and always returns
 * either a value or an error message).
 */
import { describe, expect, it } from 'vitest';
import {
  parseAnswerAction,
  parseBoxedAnswer,
  parseEvidenceVerdict,
  parseMathVerdict,
  parseRoute,
  parseSearchAction,
  parseSolverCount,
  type ParseResult,
} from '../../../src/core/workflows';

describe('parsers: accepted and rejected outputs', () => {
  it('boxed answers: the last box counts', () => {
    expect(parseBoxedAnswer('\\boxed{1} ... \\boxed{2}')).toEqual({ valid: true, value: '2' });
    expect(parseBoxedAnswer('\\boxed{1} ... \\boxed{2').valid).toBe(false);
  });
  it('math verdict: exactly one recognised tag', () => {
    expect(parseMathVerdict('ok <verdict> Accept </verdict>')).toEqual({ valid: true, value: 'accept' });
    expect(parseMathVerdict('<verdict>revise</verdict>')).toEqual({ valid: true, value: 'revise' });
    expect(parseMathVerdict('<verdict>maybe</verdict>')).toEqual({ valid: false, error: '<verdict> must be one of accept / revise, got "maybe"' });
    expect(parseMathVerdict('<verdict>accept</verdict> <verdict>accept</verdict>').valid).toBe(false);
    expect(parseMathVerdict('accept')).toEqual({ valid: false, error: 'no <verdict> tag' });
    expect(parseMathVerdict('<verdict>accept')).toEqual({ valid: false, error: 'unclosed <verdict> tag' });
  });
  it('evidence verdict', () => {
    expect(parseEvidenceVerdict('<verdict>insufficient</verdict>')).toEqual({ valid: true, value: 'insufficient' });
    expect(parseEvidenceVerdict('<verdict>accept</verdict>').valid).toBe(false);
  });
  it('solver count: an integer in 1..maxK', () => {
    expect(parseSolverCount('<solvers>3</solvers>', 4)).toEqual({ valid: true, value: 3 });
    expect(parseSolverCount('<solvers>0</solvers>', 4).valid).toBe(false);
    expect(parseSolverCount('<solvers>5</solvers>', 4).valid).toBe(false);
    expect(parseSolverCount('<solvers>2.5</solvers>', 4).valid).toBe(false);
    expect(parseSolverCount('<solvers>two</solvers>', 4).valid).toBe(false);
  });
  it('route: STOP or deduplicated in-range indices; anything else is invalid', () => {
    expect(parseRoute('<route>STOP</route>', 3)).toEqual({ valid: true, value: { stop: true } });
    expect(parseRoute('<route>stop</route>', 3)).toEqual({ valid: true, value: { stop: true } });
    expect(parseRoute('<route>2, 0, 2</route>', 3)).toEqual({ valid: true, value: { stop: false, agents: [2, 0] } });
    expect(parseRoute('<route>1 2</route>', 3)).toEqual({ valid: true, value: { stop: false, agents: [1, 2] } });
    for (const bad of [
      '<route></route>',
      '<route>3</route>',
      '<route>all</route>',
      '<route>-1</route>',
      '<route>0,</route>',
      '<route>STOP,0</route>',
      'STOP',
      '<route>0</route><route>1</route>',
    ]) {
      expect(parseRoute(bad, 3).valid, bad).toBe(false);
    }
  });
  it('search action: a closed think block and exactly one non-empty search tag', () => {
    expect(parseSearchAction('<think>x</think><search> capital of Quendor </search>')).toEqual({ valid: true, value: 'capital of Quendor' });
    expect(parseSearchAction('<search>q</search>')).toEqual({ valid: false, error: 'no <think> block' });
    expect(parseSearchAction('<think>x<search>q</search>')).toEqual({ valid: false, error: 'unclosed <think> block' });
    expect(parseSearchAction('<think>x</think><search>a</search><search>b</search>').valid).toBe(false);
    expect(parseSearchAction('<think>x</think><search> ?! </search>')).toEqual({ valid: false, error: 'empty search query' });
  });
  it('answer action: think block, last answer tag counts', () => {
    expect(parseAnswerAction('<think>x</think><answer>a</answer><answer>b</answer>')).toEqual({ valid: true, value: 'b' });
    expect(parseAnswerAction('<answer>b</answer>').valid).toBe(false);
    expect(parseAnswerAction('<answer>b</answer>', false)).toEqual({ valid: true, value: 'b' });
    expect(parseAnswerAction('<think>x</think><answer>a</answer><answer>b')).toEqual({ valid: false, error: 'the last <answer> tag is not closed' });
  });
});

describe('parsers never throw (fuzz)', () => {
  const parsers: [string, (s: unknown) => ParseResult][] = [
    ['boxed', parseBoxedAnswer],
    ['mathVerdict', parseMathVerdict],
    ['evidenceVerdict', parseEvidenceVerdict],
    ['solverCount', (s) => parseSolverCount(s, 4)],
    ['route', (s) => parseRoute(s, 3)],
    ['search', parseSearchAction],
    ['answer', (s) => parseAnswerAction(s)],
  ];
  const pieces = [
    '<think>',
    '</think>',
    '<search>',
    '</search>',
    '<answer>',
    '</answer>',
    '<verdict>',
    '</verdict>',
    '<route>',
    '</route>',
    '<solvers>',
    '</solvers>',
    'STOP',
    'accept',
    'revise',
    'sufficient',
    '0',
    '1',
    '2',
    '99',
    ',',
    ' ',
    '\n',
    '\\boxed{',
    '}',
    '{',
    '<',
    '>',
    '/',
    'x',
    '\u0000',
    '\uffff',
    '😀',
    '\\',
    '"',
    "'",
    '<<route>>',
    '</route',
    'ROUTE',
    '<Think>',
  ];
  let seed = 42;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };

  it('on 5000 random strings, hostile shapes and non-strings', () => {
    const inputs: unknown[] = [
      null,
      undefined,
      42,
      {},
      [],
      '',
      ' ',
      '<'.repeat(100000),
      '<think>'.repeat(20000),
      '</answer>'.repeat(20000),
      '<route>' + '1,'.repeat(50000) + '</route>',
      '<route>1' + ' '.repeat(20000) + 'x</route>',
      '1' + ' a'.repeat(1000) + '!',
      '<route>' + '1 ,'.repeat(100) + '</route>',
      '\\boxed{' + '{'.repeat(100000),
      'a'.repeat(300000),
    ];
    for (let i = 0; i < 5000; i++) inputs.push(Array.from({ length: rand(40) }, () => pieces[rand(pieces.length)]).join(''));
    const t0 = performance.now();
    for (const input of inputs) {
      for (const [, parse] of parsers) {
        let r: ParseResult | undefined;
        expect(() => (r = parse(input))).not.toThrow();
        expect(r!.valid ? 'value' in r! : typeof (r as { error: string }).error === 'string' && (r as { error: string }).error.length > 0).toBe(true);
      }
    }
    console.log(`parser fuzz: ${inputs.length} inputs x ${parsers.length} parsers in ${(performance.now() - t0).toFixed(0)} ms`);
  });
});
