/**
 * Workflows driven by scripted policies. The first block reproduces the event audit table of
 * the paper's appendix E (which outputs form one set, which are singletons, K per event); the
 * rest checks fixed / mixed / routed K, what each role may see, invalid outputs (recorded,
 * penalised, followed without repair), rewards, and lockstep driving.
 */
import { describe, expect, it } from 'vitest';
import { Bm25Retriever, type Passage } from '../../../src/core/data';
import { getWorkflow, runEpisode, runLockstep, type EpisodeResult, type EventRecord, type WorkflowTask } from '../../../src/core/workflows';
import { ROLES as VOCAB_ROLES } from '../../../src/core/models/vocab';
import { POLICY_ROLES, WORKFLOWS } from '../../../src/core/workflows';
import { scripted } from './scripted';

const kinds = (r: EpisodeResult): string[] => r.events.map((e) => e.kind);
const ks = (r: EpisodeResult): number[] => r.events.map((e) => e.expectedK);
const searchKs = (r: EpisodeResult): number[] => r.events.filter((e) => e.kind === 'search').map((e) => e.expectedK);

const hexagon: WorkflowTask = { id: 'hexagon', question: 'How many triangles use vertices of a regular hexagon?', answers: ['20'] };
const modular: WorkflowTask = { id: 'modular', question: 'What is 7^100 mod 13?', answers: ['9'] };

// A tiny corpus for the search traces of appendix E.1 (director -> country -> capital; person -> birthplace -> county).
const corpus: Passage[] = [
  { id: 'd1', title: 'Moonfall Harbor', text: 'Moonfall Harbor is a film directed by Ilsa Varn.' },
  { id: 'd2', title: 'Ilsa Varn', text: 'Ilsa Varn is a film director from Quendor.' },
  { id: 'd3', title: 'Quendor', text: 'Quendor is a country whose capital is Belhaven.' },
  { id: 'd4', title: 'Tomas Reed (painter)', text: 'Tomas Reed the painter was born in Ashby.' },
  { id: 'd5', title: 'Tomas Reed (footballer)', text: 'Tomas Reed the footballer was born in Corran.' },
  { id: 'd6', title: 'Ashby', text: 'Ashby is a town in Wexmoor County.' },
];
const retriever = Bm25Retriever.open(corpus);
const tools = { search: retriever };

const think = (t: string, q: string): string => `<think>${t}</think><search>${q}</search>`;

describe('policy roles', () => {
  it('are the role markers of the character vocabulary (models/vocab.ts), and every workflow uses only them', () => {
    expect([...POLICY_ROLES]).toEqual([...VOCAB_ROLES]);
    for (const wf of Object.values(WORKFLOWS)) for (const r of wf.roles) expect(POLICY_ROLES).toContain(r);
  });
});

describe('appendix E event audit, reproduced with scripted policies', () => {
  it('Math e1-e3: two candidate solutions (K=2), one verification (K=1), one terminal revision (K=1)', () => {
    const ep = getWorkflow('math').createEpisode(hexagon, {
      episodeId: 'm1',
      config: { solvers: { mode: 'fixed', k: 2 }, maxLoops: 1, revisionOrder: 'before-aggregate' },
    });
    const policy = scripted({
      'solver#0': ['Choose 3 of 6 vertices: \\boxed{20}'],
      'solver#1': ['Count by sides, twice: \\boxed{40}'],
      verifier: ['Solver 1 double counts. <verdict>revise</verdict>'],
      reviser: ['Each triangle was counted twice, 40/2: \\boxed{20}'],
    });
    const r = runEpisode(ep, policy);
    expect(kinds(r)).toEqual(['solve', 'verify', 'revise']);
    expect(ks(r)).toEqual([2, 1, 1]);
    expect(r.finalAnswer).toBe('20');
    expect(r.correct).toBe(true);
    expect(r.calls).toBe(4);
    expect(policy.remaining()).toEqual({ 'solver#0': 0, 'solver#1': 0, verifier: 0, reviser: 0 });
    // The revision is a singleton written by the solver role (the paper has no reviser agent).
    expect(r.events[2].members.map((m) => [m.role, m.agent, m.instruction])).toEqual([['solver', 'reviser', 'reviser']]);
  });

  it('Math 2, e1-e4: three derivations (K=3), verification, answer selection, terminal revision', () => {
    const ep = getWorkflow('math').createEpisode(modular, {
      episodeId: 'm2',
      config: { solvers: { mode: 'fixed', k: 3 }, maxLoops: 1, revisionOrder: 'after-aggregate' },
    });
    const r = runEpisode(
      ep,
      scripted({
        'solver#0': ['7^2 = 49 = 10, ... \\boxed{3}'],
        'solver#1': ['7^12 = 1 by Fermat, 7^4 = 9: \\boxed{9}'],
        'solver#2': ['order of 7 is 12, 100 = 8*12+4: \\boxed{9}'],
        verifier: ['Solver 0 slips at 7^3. <verdict>revise</verdict>'],
        aggregator: ['Two derivations agree: \\boxed{9}'],
        reviser: ['7^4 = 2401 = 184*13 + 9, so \\boxed{9}'],
      }),
    );
    expect(kinds(r)).toEqual(['solve', 'verify', 'aggregate', 'revise']);
    expect(ks(r)).toEqual([3, 1, 1, 1]);
    expect(r.finalAnswer).toBe('9');
    expect(r.score).toBe(1);
  });

  it('Search e1-e2: two focused queries (K=2), then one capital query (K=1); documents are not members', () => {
    const task: WorkflowTask = {
      id: 'capital',
      question: 'What is the capital of the country the director of Moonfall Harbor is from?',
      answers: ['Belhaven'],
    };
    const ep = getWorkflow('search').createEpisode(task, { episodeId: 's1', tools, config: { searchers: { mode: 'router', maxK: 3 }, topK: 3, maxTurns: 4 } });
    const r = runEpisode(
      ep,
      scripted({
        search_router: ['<route>0,1</route>', '<route>2</route>', '<route>STOP</route>'],
        'searcher#0': [think('who directed it', 'Moonfall Harbor director')],
        'searcher#1': [think('which country', 'Ilsa Varn country')],
        'searcher#2': [think('capital now', 'Quendor capital')],
        search_verifier: ['<verdict>insufficient</verdict>', '<verdict>sufficient</verdict>'],
        answerer: ['<think>Quendor -> Belhaven</think><answer>Belhaven</answer>'],
      }),
    );
    expect(searchKs(r)).toEqual([2, 1]);
    expect(kinds(r)).toEqual(['router', 'search', 'verify', 'router', 'search', 'verify', 'router', 'answer']);
    for (const e of r.events.filter((x) => x.kind !== 'search')) expect(e.expectedK).toBe(1);
    // Three documents per query came back, yet K counts queries only; tool calls = queries.
    expect(r.events[1].members).toHaveLength(2);
    expect(r.events[1].toolCalls).toBe(2);
    expect(r.toolCalls).toBe(3);
    expect(r.correct).toBe(true);
    // The retrieved documents reached later prompts as observations.
    expect(r.events[2].members[0].prompt).toContain('Ilsa Varn is a film director from Quendor');
  });

  it('Search 2, e1-e2: three identity queries (K=3), then two county queries (K=2)', () => {
    const task: WorkflowTask = { id: 'county', question: 'In which county was the painter Tomas Reed born?', answers: ['Wexmoor County'] };
    const ep = getWorkflow('search').createEpisode(task, { episodeId: 's2', tools, config: { searchers: { mode: 'router', maxK: 3 } } });
    const r = runEpisode(
      ep,
      scripted({
        search_router: ['<route>0, 1, 2</route>', '<route>1 0</route>', '<route>STOP</route>'],
        'searcher#0': [think('a', 'Tomas Reed painter'), think('c', 'Ashby county')],
        'searcher#1': [think('b', 'Tomas Reed footballer'), think('d', 'Ashby town')],
        'searcher#2': [think('c', 'Tomas Reed born')],
        search_verifier: ['<verdict>insufficient</verdict>', '<verdict>sufficient</verdict>'],
        answerer: ['<think>Ashby is in Wexmoor County</think><answer>Wexmoor County</answer>'],
      }),
    );
    expect(searchKs(r)).toEqual([3, 2]);
    expect(r.events[4].members.map((m) => m.agent)).toEqual(['searcher#1', 'searcher#0']);
    expect(r.correct).toBe(true);
  });

  it('event-atomic identity: members share event and pre-action state; every event has its own', () => {
    const ep = getWorkflow('math').createEpisode(modular, { episodeId: 'm3', config: { solvers: { mode: 'fixed', k: 3 }, maxLoops: 2 } });
    const r = runEpisode(
      ep,
      scripted({
        solver: ['\\boxed{9}', '\\boxed{9}', '\\boxed{3}'],
        verifier: ['<verdict>revise</verdict>', '<verdict>accept</verdict>'],
        reviser: ['\\boxed{9}'],
        aggregator: ['\\boxed{9}'],
      }),
    );
    expect(kinds(r)).toEqual(['solve', 'verify', 'revise', 'verify', 'aggregate']);
    expect(new Set(r.events.map((e) => e.eventId)).size).toBe(r.events.length);
    expect(new Set(r.events.map((e) => e.stateId)).size).toBe(r.events.length);
    for (const e of r.events) {
      expect(e.members.map((m) => m.memberIndex)).toEqual(e.members.map((_, j) => j));
      expect(e.groupKey).toBe(`modular/${e.kind}`);
    }
  });
});

describe('cardinality: fixed, mixed and routed K in both multi-agent workflows', () => {
  const always = (text: Record<string, string>) => (m: { instruction: string }) => text[m.instruction] ?? '';
  const mathTexts = { solver: '\\boxed{9}', verifier: '<verdict>accept</verdict>', aggregator: '\\boxed{9}', router: '<solvers>3</solvers>' };
  const searchTexts = {
    searcher: think('t', 'Quendor capital'),
    search_verifier: '<verdict>sufficient</verdict>',
    answerer: '<think>t</think><answer>Belhaven</answer>',
  };
  const capital: WorkflowTask = { id: 'c', question: 'Capital of Quendor?', answers: ['Belhaven'] };

  it('math: fixed K=4; router picks K=3; mixed draws K from its list, reproducibly per seed', () => {
    const run = (config: unknown, id: string) => runEpisode(getWorkflow('math').createEpisode(modular, { episodeId: id, config }), always(mathTexts));
    expect(ks(run({ solvers: { mode: 'fixed', k: 4 } }, 'a'))).toEqual([4, 1, 1]);
    const routed = run({ solvers: { mode: 'router', maxK: 4 } }, 'b');
    expect(kinds(routed)).toEqual(['router', 'solve', 'verify', 'aggregate']);
    expect(ks(routed)).toEqual([1, 3, 1, 1]);
    const mixedKs = Array.from({ length: 30 }, (_, i) => run({ solvers: { mode: 'mixed', ks: [1, 2, 3] } }, `m${i}`).events[0].expectedK);
    expect(new Set(mixedKs)).toEqual(new Set([1, 2, 3]));
    expect(Array.from({ length: 30 }, (_, i) => run({ solvers: { mode: 'mixed', ks: [1, 2, 3] } }, `m${i}`).events[0].expectedK)).toEqual(mixedKs);
  });

  it('search: fixed K=3 each turn; mixed K per turn; the verifier ends searching without a router', () => {
    const run = (config: Record<string, unknown>, id: string, texts = searchTexts) =>
      runEpisode(getWorkflow('search').createEpisode(capital, { episodeId: id, tools, config }), always(texts));
    const fixed = run({ searchers: { mode: 'fixed', k: 3 } }, 'f');
    expect(kinds(fixed)).toEqual(['search', 'verify', 'answer']);
    expect(searchKs(fixed)).toEqual([3]);
    const unsure = { ...searchTexts, search_verifier: '<verdict>insufficient</verdict>' };
    const mixed = run({ searchers: { mode: 'mixed', ks: [1, 2, 3] }, maxTurns: 6 }, 'x', unsure);
    expect(searchKs(mixed)).toHaveLength(6);
    for (const k of searchKs(mixed)) expect([1, 2, 3]).toContain(k);
    expect(mixed.termination).toBe('max-turns');
    expect(mixed.events.at(-1)!.kind).toBe('answer'); // answered when turns ran out
  });

  it('config errors name the field', () => {
    expect(() => getWorkflow('math').createEpisode(modular, { episodeId: 'e', config: { solvers: { mode: 'fixed', k: 0 } } })).toThrow(
      /math workflow config: field "solvers.k"/,
    );
    expect(() => getWorkflow('search').createEpisode(capital, { episodeId: 'e', config: {} })).toThrow(/tools.search/);
    expect(() => getWorkflow('nope')).toThrow(/valid workflows: math, search, single/);
  });
});

describe('what each role sees', () => {
  it('parallel solvers share the pre-action state and never see each other; the verifier sees all of them', () => {
    const ep = getWorkflow('math').createEpisode(modular, { episodeId: 'v', config: { solvers: { mode: 'fixed', k: 3 } } });
    const set = ep.pending()!;
    const strip = (p: string) => p.slice(0, p.lastIndexOf('\n'));
    expect(new Set(set.members.map((m) => strip(m.prompt))).size).toBe(1); // same observation + context
    expect(set.members[0].prompt.startsWith('Problem: What is 7^100 mod 13?')).toBe(true);
    ep.submit(['ALPHA \\boxed{1}', 'BRAVO \\boxed{2}', 'CHARLIE \\boxed{3}']);
    const verify = ep.pending()!;
    for (const word of ['ALPHA', 'BRAVO', 'CHARLIE']) expect(verify.members[0].prompt).toContain(word);
    expect(verify.members[0].prompt.trimEnd().endsWith('<verdict>revise</verdict>.')).toBe(true);
  });

  it('parallel searchers get the same state; none sees a sibling query of the same set', () => {
    const ep = getWorkflow('search').createEpisode(
      { id: 'q', question: 'Capital of Quendor?', answers: ['Belhaven'] },
      { episodeId: 'p', tools, config: { searchers: { mode: 'fixed', k: 2 } } },
    );
    const first = ep.pending()!;
    expect(first.members[0].prompt).not.toContain('Queries:');
    ep.submit([think('a', 'UNIQUEQUERYONE'), think('b', 'UNIQUEQUERYTWO')]);
    const verify = ep.pending()!;
    expect(verify.members[0].prompt).toContain('UNIQUEQUERYONE; UNIQUEQUERYTWO');
  });
});

describe('invalid outputs: recorded, penalised, followed without repair', () => {
  it('a solver without a box is invalid; its event reward carries the penalty', () => {
    const ep = getWorkflow('math').createEpisode(modular, { episodeId: 'i1', config: { solvers: { mode: 'fixed', k: 2 }, invalidPenalty: 0.25 } });
    const r = runEpisode(
      ep,
      scripted({ 'solver#0': ['I think 9'], 'solver#1': ['\\boxed{9}'], verifier: ['<verdict>accept</verdict>'], aggregator: ['\\boxed{9}'] }),
    );
    const solve = r.events[0];
    expect(solve.members[0].parse).toEqual({ valid: false, error: expect.stringMatching(/boxed/) });
    expect(solve.members[0].penalty).toBe(0.25);
    expect(r.teamReward).toBe(1);
    expect(solve.reward).toBeCloseTo(0.75, 12);
    expect(r.events[2].reward).toBe(1);
    expect(r.invalidActions).toBe(1);
  });

  it('two verdict tags are invalid: no revision is requested, the aggregator answers', () => {
    const ep = getWorkflow('math').createEpisode(modular, { episodeId: 'i2', config: { solvers: { mode: 'fixed', k: 1 } } });
    const r = runEpisode(
      ep,
      scripted({ solver: ['\\boxed{9}'], verifier: ['<verdict>accept</verdict><verdict>revise</verdict>'], aggregator: ['\\boxed{9}'] }),
    );
    expect(kinds(r)).toEqual(['solve', 'verify', 'aggregate']);
    expect(r.events[1].members[0].parse.valid).toBe(false);
  });

  it('an aggregator without a box ends the episode unanswered: reward 0, not a repaired answer', () => {
    const ep = getWorkflow('math').createEpisode(modular, { episodeId: 'i3', config: { solvers: { mode: 'fixed', k: 1 } } });
    const r = runEpisode(ep, scripted({ solver: ['\\boxed{9}'], verifier: ['<verdict>accept</verdict>'], aggregator: ['the answer is 9'] }));
    expect(r.finalAnswer).toBeNull();
    expect(r.teamReward).toBe(0);
    expect(r.termination).toBe('no-answer');
    expect(r.events[2].reward).toBeCloseTo(-0.1, 12);
  });

  it('a math router that does not parse consumes a loop, then the episode ends unanswered', () => {
    const ep = getWorkflow('math').createEpisode(modular, { episodeId: 'i4', config: { solvers: { mode: 'router', maxK: 3 }, maxLoops: 2 } });
    const r = runEpisode(ep, scripted({ router: ['<solvers>7</solvers>', 'two please'] }));
    expect(kinds(r)).toEqual(['router', 'router']);
    expect(r.termination).toBe('max-loops');
    expect(r.events.map((e) => e.members[0].parse.valid)).toEqual([false, false]);
  });

  it('a search route that does not parse is neither STOP nor all searchers: the turn passes without search', () => {
    const ep = getWorkflow('search').createEpisode(
      { id: 'q', question: 'Capital of Quendor?', answers: ['Belhaven'] },
      {
        episodeId: 'i5',
        tools,
        config: { searchers: { mode: 'router', maxK: 3 }, maxTurns: 3 },
      },
    );
    const r = runEpisode(
      ep,
      scripted({
        search_router: ['<route>0,7</route>', '<route>all</route>', '<route>STOP</route>'],
        answerer: ['<think>guess</think><answer>Paris</answer><answer>Belhaven</answer>'],
      }),
    );
    expect(kinds(r)).toEqual(['router', 'router', 'router', 'answer']);
    expect(r.events[0].members[0].parse).toEqual({ valid: false, error: 'searcher index 7 outside 0..2' });
    expect(r.toolCalls).toBe(0);
    expect(r.finalAnswer).toBe('Belhaven'); // the last answer tag counts
    expect(r.correct).toBe(true);
  });

  it('an invalid searcher runs no query; its valid sibling still searches', () => {
    const ep = getWorkflow('search').createEpisode(
      { id: 'q', question: 'Capital of Quendor?', answers: ['Belhaven'] },
      {
        episodeId: 'i6',
        tools,
        config: { searchers: { mode: 'fixed', k: 2 }, verifier: false, maxTurns: 1 },
      },
    );
    const r = runEpisode(
      ep,
      scripted({
        'searcher#0': ['<search>Quendor</search>'],
        'searcher#1': [think('x', 'Quendor capital')],
        answerer: ['<think>x</think><answer>Belhaven</answer>'],
      }),
    );
    expect(r.events[0].members[0].parse).toEqual({ valid: false, error: 'no <think> block' });
    expect(r.events[0].toolCalls).toBe(1);
    expect(r.events[1].members[0].prompt).toContain('Queries: Quendor capital');
  });

  it('submit rejects a wrong number of outputs (orchestrator misuse), and a finished episode asks for nothing', () => {
    const ep = getWorkflow('single').createEpisode(modular, { episodeId: 'i7' });
    expect(() => ep.submit(['a', 'b'])).toThrow(/expected 1 outputs, got 2/);
    ep.submit(['\\boxed{9}']);
    expect(ep.done).toBe(true);
    expect(ep.pending()).toBeNull();
    expect(() => ep.submit(['x'])).toThrow(/no pending active set/);
  });
});

describe('single workflow and rewards', () => {
  it('asks exactly what the math team asks its first solver (so one warm start serves both)', () => {
    const single = getWorkflow('single').createEpisode(modular, { episodeId: 'p1' }).pending()!;
    const team = getWorkflow('math')
      .createEpisode(modular, { episodeId: 'p2', config: { solvers: { mode: 'fixed', k: 2 } } })
      .pending()!;
    expect(single.members[0].prompt).toBe('Problem: What is 7^100 mod 13?\nSolver 0: solve it. End with \\boxed{answer}.');
    expect(single.members[0].prompt).toBe(team.members[0].prompt);
    expect(single.members[0].role).toBe(team.members[0].role);
  });
  it('math: one singleton answer event graded by the math grader', () => {
    const r = runEpisode(getWorkflow('single').createEpisode(modular, { episodeId: 's' }), () => 'so \\boxed{9.0}');
    expect(kinds(r)).toEqual(['answer']);
    expect(ks(r)).toEqual([1]);
    expect(r.correct).toBe(true);
  });
  it('qa: EM or F1 against aliases', () => {
    const task: WorkflowTask = { id: 'nq', question: 'when?', answers: ['14 December 1972 UTC', 'December 1972'] };
    const em = runEpisode(getWorkflow('single').createEpisode(task, { episodeId: 'a', config: { domain: 'qa' } }), () => '<answer>in December</answer>');
    expect(em.score).toBe(0);
    const f1 = runEpisode(
      getWorkflow('single').createEpisode(task, { episodeId: 'b', config: { domain: 'qa', reward: 'f1' } }),
      () => '<answer>in December</answer>',
    );
    expect(f1.score).toBeCloseTo(0.5, 12); // vs "December 1972": p = 1/2, r = 1/2, F1 = 2pr/(p+r) = 1/2
  });
});

describe('lockstep driving', () => {
  it('many episodes of different workflows advance together and match one-at-a-time runs', () => {
    const texts: Record<string, string> = {
      solver: '\\boxed{9}',
      verifier: '<verdict>revise</verdict>',
      reviser: '\\boxed{9}',
      aggregator: '\\boxed{9}',
      router: '<solvers>2</solvers>',
      searcher: think('t', 'Quendor capital'),
      search_verifier: '<verdict>sufficient</verdict>',
      search_router: '<route>0</route>',
      answerer: '<think>t</think><answer>Belhaven</answer>',
      single_math: '\\boxed{8}',
    };
    const make = () => [
      getWorkflow('math').createEpisode(modular, { episodeId: 'L0', config: { solvers: { mode: 'router', maxK: 3 }, maxLoops: 2 } }),
      getWorkflow('math').createEpisode(hexagon, { episodeId: 'L1', config: { solvers: { mode: 'mixed', ks: [1, 3] } } }),
      getWorkflow('search').createEpisode(
        { id: 'c', question: 'Capital of Quendor?', answers: ['Belhaven'] },
        { episodeId: 'L2', tools, config: { searchers: { mode: 'router', maxK: 2 }, maxTurns: 2 } },
      ),
      getWorkflow('single').createEpisode(modular, { episodeId: 'L3' }),
    ];
    const lock = make();
    let batches = 0;
    const steps = runLockstep(lock, (reqs) => {
      batches++;
      return reqs.map((r) => texts[r.member.instruction]);
    });
    expect(steps).toBe(batches);
    expect(lock.every((e) => e.done)).toBe(true);
    const alone = make().map((e) => runEpisode(e, (m) => texts[m.instruction]));
    const strip = (r: EpisodeResult) => r.events.map((e: EventRecord) => [e.eventId, e.kind, e.expectedK, e.members.map((m) => m.prompt)]);
    expect(lock.map((e) => strip(e.result()))).toEqual(alone.map(strip));
    expect(steps).toBe(Math.max(...alone.map((r) => r.events.length)));
  });
});
