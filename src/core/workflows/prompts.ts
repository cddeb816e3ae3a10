/**
 * Prompt assembly (paper appendix B): every prompt = task observation + the team context
 * visible before the role acts + the role instruction. Members of one active set get the same
 * observation and context (the pre-action state); only the instruction may name the member's
 * agent index. The templates are short on purpose: the lab's built-in policies are tiny
 * character-level models with small context windows.
 *
 * Instructions are entries of a typed registry, one per template, each naming the exact output
 * format its parser accepts (parsers.ts). Not here: parsing, state.
 */

/** One template per way a role is prompted (the math and search routers want different formats). */
export const INSTRUCTION_NAMES = [
  'router',
  'solver',
  'verifier',
  'reviser',
  'aggregator',
  'search_router',
  'searcher',
  'search_verifier',
  'answerer',
  'single_math',
  'single_qa',
] as const;
export type InstructionName = (typeof INSTRUCTION_NAMES)[number];

export interface InstructionArgs {
  /** Member's agent index (solvers, searchers). */
  index?: number;
  /** Cardinality of the set the member belongs to, or the pool size for routers. */
  k?: number;
}

export const INSTRUCTIONS = {
  router: (a) => `Router: how many solvers (1-${a.k})? Reply <solvers>N</solvers>.`,
  solver: (a) => `Solver ${a.index}: solve it. End with \\boxed{answer}.`,
  verifier: () => 'Verifier: check the work. Reply <verdict>accept</verdict> or <verdict>revise</verdict>.',
  reviser: () => 'Reviser: fix the solution. End with \\boxed{answer}.',
  aggregator: () => 'Aggregator: give the final answer. End with \\boxed{answer}.',
  search_router: (a) => `Router: reply <route>STOP</route> if the evidence suffices, else <route>i,j</route> with searchers 0-${(a.k ?? 1) - 1}.`,
  searcher: (a) => `Searcher ${a.index}: reply <think>...</think><search>query</search>.`,
  search_verifier: () => 'Verifier: is the evidence enough? Reply <verdict>sufficient</verdict> or <verdict>insufficient</verdict>.',
  answerer: () => 'Answerer: reply <think>...</think><answer>answer</answer>.',
  // The single-agent baseline is asked exactly what the team's first solver / the answerer is
  // asked, so a warm start made on team prompts serves it unchanged and the comparison measures
  // the team, not the wording (a think block stays optional for it: parsers.parseAnswerAction).
  single_math: () => 'Solver 0: solve it. End with \\boxed{answer}.',
  single_qa: () => 'Answerer: reply <think>...</think><answer>answer</answer>.',
} satisfies Record<InstructionName, (args: InstructionArgs) => string>;

/** One labelled block of team context ("Solver 0: ..."). */
export interface ContextEntry {
  label: string;
  text: string;
}

/** observation + context + instruction, separated by newlines; empty context is omitted. */
export function assemblePrompt(observation: string, context: readonly ContextEntry[], instruction: string): string {
  const parts = [observation.trim()];
  for (const c of context) parts.push(`${c.label}: ${c.text.trim()}`);
  parts.push(instruction);
  return parts.join('\n');
}
