/**
 * The gold dry-run policy (`lab eval --policy gold`, `policies.kind = "gold"`): a scripted
 * policy that plays every role of every workflow correctly from the task's gold answers. The
 * router picks the largest K it is offered, solvers, reviser and aggregator answer the gold in
 * `\boxed{}`, the verifier accepts, the search router sends every searcher once and then says
 * STOP, searchers query with the question, the evidence verifier says sufficient, the answerer
 * answers the first gold alias.
 *
 * Its score on a file must be close to 100%: anything lower points at a loader (a gold answer
 * read wrongly), a parser or prompt (a well-formed output refused) or a grader (a gold answer
 * not equal to itself), before any GPU hour is spent. Unlike the noisy oracle of demos.ts it
 * reads nothing but the gold answers and the question, so it works on every dataset file.
 * Pure. Tested by test/core/eval/goldRun.test.ts (every output parses; >= 98% on ../shared/data).
 */
import type { MemberPolicy } from './drive';
import type { InstructionName } from './prompts';
import type { MemberRequest, WorkflowTask } from './types';

type GoldOutput = (member: MemberRequest, task: WorkflowTask) => string;

const gold = (task: WorkflowTask): string => task.answers[0];
const boxed: GoldOutput = (_m, task) => `The answer is \\boxed{${gold(task)}}`;
/** The pool size the router is offered, read from its instruction (prompts.ts). */
const offered = (prompt: string, re: RegExp): number => Number(re.exec(prompt)?.[1] ?? 1);

export const GOLD_OUTPUTS = {
  router: (m) => `<solvers>${offered(m.prompt, /solvers \(1-(\d+)\)/)}</solvers>`,
  solver: boxed,
  verifier: () => '<verdict>accept</verdict>',
  reviser: boxed,
  aggregator: boxed,
  // The observation lists "Queries: ..." once a search has run: then the evidence is in.
  search_router: (m) => {
    if (/^Queries: /m.test(m.prompt)) return '<route>STOP</route>';
    const last = offered(m.prompt, /searchers 0-(\d+)/);
    return `<route>${Array.from({ length: last + 1 }, (_, i) => i).join(',')}</route>`;
  },
  searcher: (_m, task) => `<think>look up the question</think><search>${task.question}</search>`,
  search_verifier: () => '<verdict>sufficient</verdict>',
  answerer: (_m, task) => `<think>the gold answer</think><answer>${gold(task)}</answer>`,
  single_math: boxed,
  single_qa: (_m, task) => `<answer>${gold(task)}</answer>`,
} satisfies Record<InstructionName, GoldOutput>;

/** The gold policy as a MemberPolicy for drive.ts. */
export const goldPolicy: MemberPolicy = (member, _set, episode) => GOLD_OUTPUTS[member.instruction](member, episode.task);
