/**
 * The gold dry run (src/core/workflows/gold.ts through src/core/train/evaluate.ts): every output
 * the gold policy writes parses in every workflow and cardinality mode, and on every math and QA
 * file of ../shared/data (and the HotpotQA mini corpus) it scores >= 98% Avg@1, which proves
 * loaders, prompts, parsers and graders together. Not vacuous: the same run with each query's
 * gold taken from another row scores near zero.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveRunConfig } from '../../../src/core/config';
import { Bm25Retriever, type Passage } from '../../../src/core/data';
import { buildEnvironment } from '../../../src/core/train/environment';
import { evaluateGold, evaluateWith } from '../../../src/core/train/evaluate';
import { runEpisode } from '../../../src/core/workflows/drive';
import { GOLD_OUTPUTS, goldPolicy } from '../../../src/core/workflows/gold';
import { getWorkflow } from '../../../src/core/workflows/registry';
import { HAS_SHARED_DATA, sharedPath } from '../data/sharedData';

const corpus: Passage[] = [
  { id: 'a', title: 'Tellmar', text: 'Tellmar is a city in Orvania.' },
  { id: 'b', title: 'Zarvo Quill', text: 'Zarvo Quill was born in Tellmar.' },
];
const tools = { search: Bm25Retriever.open(corpus) };
const mathTask = { id: 'm', question: 'What is 1/2 + 1/4?', answers: ['\\frac{3}{4}'] };
const qaTask = { id: 'q', question: 'Where was Zarvo Quill born?', answers: ['Tellmar', 'Tellmar city'] };

const CASES: [string, unknown, typeof mathTask][] = [
  ['math', { solvers: { mode: 'fixed', k: 3 }, maxLoops: 2 }, mathTask],
  ['math', { solvers: { mode: 'router', maxK: 3 }, revisionOrder: 'after-aggregate' }, mathTask],
  ['math', { solvers: { mode: 'mixed', ks: [1, 2] } }, mathTask],
  ['search', { searchers: { mode: 'fixed', k: 2 } }, qaTask],
  ['search', { searchers: { mode: 'router', maxK: 3 }, maxTurns: 4 }, qaTask],
  ['search', { searchers: { mode: 'mixed', ks: [1, 3] }, verifier: false, maxTurns: 2 }, qaTask],
  ['single', { domain: 'math' }, mathTask],
  ['single', { domain: 'qa' }, qaTask],
];

describe('the gold policy', () => {
  for (const [name, config, task] of CASES) {
    it(`${name} ${JSON.stringify(config)}: every output parses and the episode is correct`, () => {
      const result = runEpisode(getWorkflow(name).createEpisode(task, { episodeId: 'e', config, tools }), goldPolicy);
      expect(result.invalidActions).toBe(0);
      for (const e of result.events) for (const m of e.members) expect(m.parse, `${m.instruction}: ${m.output}`).toMatchObject({ valid: true });
      expect(result.correct).toBe(true);
      // Without a verifier, fixed and mixed searchers run every turn, then answer (max-turns).
      expect(result.termination).toBe(name === 'search' && (config as { verifier?: boolean }).verifier === false ? 'max-turns' : 'answered');
    });
  }

  it('the router picks the largest K offered, then (search) stops once it has searched', () => {
    const math = runEpisode(getWorkflow('math').createEpisode(mathTask, { episodeId: 'r', config: { solvers: { mode: 'router', maxK: 3 } } }), goldPolicy);
    expect(math.events.map((e) => [e.kind, e.expectedK])).toEqual([
      ['router', 1],
      ['solve', 3],
      ['verify', 1],
      ['aggregate', 1],
    ]);
    const search = runEpisode(
      getWorkflow('search').createEpisode(qaTask, { episodeId: 's', config: { searchers: { mode: 'router', maxK: 2 } }, tools }),
      goldPolicy,
    );
    expect(search.events.map((e) => e.kind)).toEqual(['router', 'search', 'verify', 'router', 'answer']);
    expect(search.toolCalls).toBe(2);
    expect(GOLD_OUTPUTS.answerer(search.events[4].members[0], qaTask)).toContain('<answer>Tellmar</answer>');
  });
});

const MATH_FILES = ['math500', 'aime24', 'aime25', 'amc23', 'gsm8k_test'].map((f) => sharedPath(`math/${f}.jsonl`));
const QA_FILES = ['nq_open_dev', 'hotpotqa_500', 'bamboogle'].map((f) => sharedPath(`qa/${f}.jsonl`));
const indexDir = mkdtempSync(join(tmpdir(), 'srpo-gold-'));

describe.skipIf(!HAS_SHARED_DATA)('gold dry run on ../shared/data: >= 98% Avg@1 on every file', () => {
  it('math files through the math workflow (router, K <= 3)', () => {
    const config = resolveRunConfig({
      workflow: { name: 'math', options: { solvers: { mode: 'router', maxK: 3 } } },
      tasks: { train: [{ dataset: MATH_FILES[0] }], eval: MATH_FILES.map((dataset) => ({ dataset })) },
      eval: { n: 1 },
    });
    const { summary } = evaluateGold(buildEnvironment(config, { purpose: 'eval' }), config);
    expect(summary.benchmarks.map((b) => [b.benchmark, b.queries])).toEqual([
      ['math500', 500],
      ['aime24', 30],
      ['aime25', 30],
      ['amc23', 40],
      ['gsm8k_test', 1319],
    ]);
    for (const b of summary.benchmarks) expect(b.avgAtN, b.benchmark).toBeGreaterThanOrEqual(0.98);
  });

  it('QA files through the search workflow over the HotpotQA mini corpus file, and the mini questions over their own paragraphs', () => {
    const config = resolveRunConfig({
      workflow: { name: 'search', options: { corpus: sharedPath('corpus/hotpotqa_mini_corpus.json') } },
      tasks: { train: [{ dataset: QA_FILES[2] }], eval: QA_FILES.map((dataset) => ({ dataset })) },
      eval: { n: 1 },
    });
    const { summary } = evaluateGold(buildEnvironment(config, { purpose: 'eval', indexDir }), config);
    expect(summary.benchmarks.map((b) => [b.benchmark, b.queries])).toEqual([
      ['nq_open_dev', 3610],
      ['hotpotqa_500', 500],
      ['bamboogle', 125],
    ]);
    for (const b of summary.benchmarks) {
      expect(b.avgAtN, b.benchmark).toBeGreaterThanOrEqual(0.98);
      expect(b.toolCallsPerQuery).toBe(2); // both searchers ran a query
    }
    const mini = resolveRunConfig({
      workflow: { name: 'search' },
      tasks: {
        train: [{ dataset: sharedPath('corpus/hotpotqa_mini_questions.json') }],
        eval: [{ dataset: sharedPath('corpus/hotpotqa_mini_questions.json') }],
      },
      eval: { n: 1 },
    });
    const m = evaluateGold(buildEnvironment(mini, { purpose: 'eval' }), mini).summary.benchmarks[0];
    expect([m.benchmark, m.queries]).toEqual(['hotpotqa_mini_questions', 100]);
    expect(m.avgAtN).toBeGreaterThanOrEqual(0.98);
  });

  it('QA files through the single agent', () => {
    const config = resolveRunConfig({
      workflow: { name: 'single', options: { domain: 'qa' } },
      tasks: { train: [{ dataset: QA_FILES[2] }], eval: QA_FILES.map((dataset) => ({ dataset })) },
      eval: { n: 1 },
    });
    for (const b of evaluateGold(buildEnvironment(config, { purpose: 'eval' }), config).summary.benchmarks)
      expect(b.avgAtN, b.benchmark).toBeGreaterThanOrEqual(0.98);
  });

  it("not vacuous: answering each query with the next row's gold scores near zero", () => {
    const config = resolveRunConfig({
      workflow: { name: 'math' },
      tasks: { train: [{ dataset: MATH_FILES[0] }], eval: [{ dataset: MATH_FILES[0] }] },
      eval: { n: 1 },
    });
    const env = buildEnvironment(config, { purpose: 'eval' });
    const rows = env.evalSets[0].rows;
    const next = new Map(rows.map((r, i) => [r.id, rows[(i + 1) % rows.length].answers]));
    const { summary } = evaluateWith(
      env,
      config,
      (episodes) =>
        episodes.map((ep) => ({
          result: runEpisode(ep, (member, _set, e) => GOLD_OUTPUTS[member.instruction](member, { ...e.task, answers: next.get(e.task.id)! })),
          generatedTokens: 1,
          latencyMs: 0,
        })),
      0,
    );
    expect(summary.benchmarks[0].avgAtN).toBeLessThan(0.1);
  });
});
