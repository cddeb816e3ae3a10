/**
 * Chat prompts for a chat model (a Hugging Face policy): each member's prompt becomes a list of
 * messages rendered by the model's own chat template (models/hf/tokenizer.ts). The system
 * message is the role's instructions, as the paper's appendix B prompts give them: who the agent
 * is in the team, what the state it sees holds, and the exact output format the parser accepts
 * (parsers.ts). The user message is the state the role sees: the task observation, the visible
 * team context and the short per-member instruction of prompts.ts (which carries the member's
 * index and the router's K). A shared policy learns its role from the system message (the lab's
 * own models read a role marker token instead).
 *
 * Differs from appendix B: the paper's templates put observation, context and instruction in one
 * composite prompt; here the role's standing instructions are the system turn, so a chat model
 * sees them where its post-training put instructions. Formats are the same tags.
 *
 * Not here: the lab's own prompt assembly (prompts.ts), parsing (parsers.ts).
 * Tests: test/core/train/hfPolicies.test.ts (every instruction has a system message naming its format).
 */
import type { ChatMessage } from '../models/hf/tokenizer';
import type { InstructionName } from './prompts';

const TEAM = 'You are one agent of a team of language-model agents that solves a task together. ';
const MATH = 'The team solves a math problem: solvers propose solutions, a verifier checks them, an aggregator gives the final answer. ';
const SEARCH =
  'The team answers a question from a document collection: searchers write search queries, a router decides which searchers act and when the evidence suffices, a verifier judges the evidence, an answer agent answers. ';
const BOXED = 'Put the final answer alone inside \\boxed{} at the end of your reply, e.g. \\boxed{42}. ';
const BRIEF = 'Keep the reply short: only what is asked, in the format asked.';

/** The system message of each instruction template (the parser-visible format is named in every one). */
export const CHAT_SYSTEM_PROMPTS = {
  router:
    TEAM +
    MATH +
    'You are the router: read the problem and decide how many solvers should work on it in parallel (more for harder problems). Reply with the number only, as <solvers>N</solvers>, N within the range you are given. ' +
    BRIEF,
  solver: TEAM + MATH + 'You are a solver: solve the problem step by step, using the team context when it helps. ' + BOXED + BRIEF,
  verifier:
    TEAM +
    MATH +
    "You are the verifier: check the solvers' work above for errors. Reply <verdict>accept</verdict> when a proposed answer is right, or <verdict>revise</verdict> when the solutions must be revised. " +
    BRIEF,
  reviser: TEAM + MATH + 'You are the reviser: the verifier asked for a revision. Fix the solution above step by step. ' + BOXED + BRIEF,
  aggregator: TEAM + MATH + "You are the aggregator: read the solutions and the verdict above and give the team's final answer. " + BOXED + BRIEF,
  search_router:
    TEAM +
    SEARCH +
    'You are the router: if the evidence retrieved so far answers the question, reply <route>STOP</route>; otherwise name the searchers that should search next, as <route>i,j</route> with indices from the range you are given. ' +
    BRIEF,
  searcher:
    TEAM +
    SEARCH +
    'You are a searcher: think briefly about what is still missing, then write one search query. Reply <think>your reasoning</think><search>your query</search>. ' +
    BRIEF,
  search_verifier:
    TEAM +
    SEARCH +
    'You are the evidence verifier: judge whether the retrieved documents suffice to answer the question. Reply <verdict>sufficient</verdict> or <verdict>insufficient</verdict>. ' +
    BRIEF,
  answerer:
    TEAM +
    SEARCH +
    'You are the answer agent: answer the question from the evidence above. Reply <think>your reasoning</think><answer>a short answer, a few words</answer>. ' +
    BRIEF,
  single_math: 'You solve math problems. Solve the problem step by step. ' + BOXED + BRIEF,
  single_qa: 'You answer questions. Reply with a short answer of a few words as <answer>answer</answer>. ' + BRIEF,
} satisfies Record<InstructionName, string>;

/** The messages of one member's prompt: its role's instructions, then the state it sees. */
export function chatMessages(instruction: InstructionName, prompt: string): ChatMessage[] {
  if (!Object.hasOwn(CHAT_SYSTEM_PROMPTS, instruction))
    throw new Error(`chat prompt: unknown instruction "${instruction}"; valid: ${Object.keys(CHAT_SYSTEM_PROMPTS).join(', ')}`);
  return [
    { role: 'system', content: CHAT_SYSTEM_PROMPTS[instruction] },
    { role: 'user', content: prompt },
  ];
}
