/**
 * Warm-start demonstrations: `{ role, prompt, completion }` rows for every role of a workflow,
 * made by running the real workflow state machine on built-in tasks with a noisy oracle
 * policy. The prompts are therefore exactly what the workflow will show the policy; the
 * completions are deliberately imperfect (`errorRate`: wrong answers, wrong verdicts, wrong
 * routes, off-target queries; `formatErrorRate`: malformed outputs), so a policy fine-tuned on
 * them is partly competent and still has something to learn from RL.
 *
 * The oracle reads what a built-in generator put in each row's meta: `steps` (arithmetic) and
 * `hops` (knowledge base); it reads the evidence from the prompt it is given, as a policy
 * would. It lives here rather than in data/ because it drives the workflows (data/ must not
 * import workflows/). Node-only for `writeDemosJsonl`. Tested by test/core/workflows/demos.test.ts.
 */
import { writeFileSync } from 'node:fs';
import { createRng, type Rng } from '../data/prng';
import type { KbHop } from '../data/tasks/kb';
import type { TaskGenerator, TaskSplit } from '../data/tasks/types';
import { runEpisode, type MemberPolicy } from './drive';
import { getWorkflow, type WorkflowName } from './registry';
import type { EpisodeOptions, MemberRequest, PolicyRole, WorkflowTask, WorkflowTools } from './types';

export interface DemoRow {
  role: PolicyRole;
  prompt: string;
  completion: string;
}

export interface DemoOptions {
  generator: TaskGenerator;
  workflow: WorkflowName;
  /** Workflow configuration for the episodes (default: the workflow's defaults). */
  config?: unknown;
  /** Episodes to run (each yields one row per member of each event). Default 200. */
  episodes?: number;
  split?: TaskSplit;
  /** Probability that an output is wrong in content. [0, 1], default 0.2. */
  errorRate?: number;
  /** Probability that an output is malformed (fails its parser). [0, 1], default 0.03. */
  formatErrorRate?: number;
  seed?: string | number;
  /** Needed by the search workflow. */
  tools?: WorkflowTools;
}

/** Run episodes with the noisy oracle and collect every member's prompt and output. */
export function warmStartDemos(options: DemoOptions): DemoRow[] {
  const errorRate = options.errorRate ?? 0.2;
  const formatErrorRate = options.formatErrorRate ?? 0.03;
  for (const [name, v] of [
    ['errorRate', errorRate],
    ['formatErrorRate', formatErrorRate],
  ] as const) {
    if (!(v >= 0 && v <= 1)) throw new Error(`warmStartDemos: ${name} must be in [0, 1], got ${v}`);
  }
  const workflow = getWorkflow(options.workflow);
  const { generator } = options;
  if (!workflow.domains.includes(generator.domain)) {
    throw new Error(`warmStartDemos: workflow "${options.workflow}" does not take ${generator.domain} tasks (${generator.name})`);
  }
  const rows = generator.rows(options.split ?? 'train', options.episodes ?? 200);
  const rng = createRng(`demos/${generator.name}/${options.workflow}/${options.seed ?? 'v1'}`);
  const oracle = noisyOracle(rng, errorRate, formatErrorRate);
  const config = options.workflow === 'single' && options.config === undefined ? { domain: generator.domain } : options.config;
  const demos: DemoRow[] = [];
  rows.forEach((row, i) => {
    const task: WorkflowTask = { ...row, split: options.split ?? 'train' };
    const epOptions: EpisodeOptions = { episodeId: `demo-${i}`, config, tools: options.tools, seed: `${options.seed ?? 'v1'}/${i}` };
    const result = runEpisode(workflow.createEpisode(task, epOptions), oracle);
    for (const e of result.events) for (const m of e.members) demos.push({ role: m.role, prompt: m.prompt, completion: m.output });
  });
  return demos;
}

/** One JSON object per line. */
export function demosToJsonl(demos: readonly DemoRow[]): string {
  return demos.map((d) => JSON.stringify({ role: d.role, prompt: d.prompt, completion: d.completion })).join('\n') + '\n';
}

export function writeDemosJsonl(path: string, demos: readonly DemoRow[]): void {
  writeFileSync(path, demosToJsonl(demos));
}

// ---------------------------------------------------------------------------------------------
// The oracle

function wrongNumber(rng: Rng, answer: string): string {
  const n = Number(answer);
  if (!Number.isFinite(n)) return `${answer}1`;
  return String(n + (rng.chance(0.5) ? 1 : -1) * rng.int(1, 10));
}

/**
 * The evidence phrase for `fact` in the shown documents: the two words before it in the first
 * sentence that states it, and the fact ("born in Gorra", "works for Rabrico"). Two words name
 * the relation the question asks about; the subject's name is left out, because copying a
 * long invented name again is where a tiny character model garbles the answer.
 */
function evidencePhrase(prompt: string, fact: string): string | null {
  const sentences = prompt
    .split('\n')
    .filter((line) => line.startsWith('Doc '))
    .flatMap((line) => line.replace(/^Doc \[[^\]]*\]\s*/, '').split(/(?<=\.)\s+/))
    .filter((x) => x.includes(fact));
  // A sentence that states the fact about something else ("... works for Rabrico") before one
  // whose subject it is ("Rabrico is a company ..."), which has no relation before it.
  const sentence = sentences.find((x) => x.indexOf(fact) > 0) ?? sentences[0];
  if (!sentence) return null;
  const before = sentence.slice(0, sentence.indexOf(fact)).trim().split(/\s+/).filter(Boolean);
  return [...before.slice(-2), fact].join(' ');
}

/** Facts of the task's hops that appear in the prompt's evidence (documents shown). */
function hopsFound(prompt: string, hops: readonly KbHop[]): number {
  const docs = prompt
    .split('\n')
    .filter((l) => l.startsWith('Doc '))
    .join('\n');
  let n = 0;
  while (n < hops.length && docs.includes(hops[n].fact)) n++;
  return n;
}

function noisyOracle(rng: Rng, errorRate: number, formatErrorRate: number): MemberPolicy {
  const err = (): boolean => rng.chance(errorRate);
  return (member: MemberRequest, _set, episode) => {
    const task = episode.task;
    const gold = task.answers[0];
    const meta = task.meta ?? {};
    const malformed = rng.chance(formatErrorRate);
    const steps = Array.isArray(meta.steps) ? (meta.steps as string[]) : [];
    const hops = Array.isArray(meta.hops) ? (meta.hops as KbHop[]) : [];
    const tier = typeof meta.tier === 'number' ? meta.tier : 1;
    const solution = (): string => {
      if (err()) {
        const wrong = wrongNumber(rng, gold);
        const shown = steps.length > 0 ? [...steps.slice(0, -1), steps[steps.length - 1].replace(/=[^=]*$/, `=${wrong}`)] : [];
        return `${shown.join(', ')} \\boxed{${wrong}}`.trim();
      }
      return `${steps.join(', ')} \\boxed{${gold}}`.trim();
    };
    const boxedAnswers = (prompt: string): string[] => [...prompt.matchAll(/\\boxed\{([^{}]*)\}/g)].map((m) => m[1]);
    switch (member.instruction) {
      case 'router': {
        const maxK = Number(/solvers \(1-(\d+)\)/.exec(member.prompt)?.[1] ?? 1);
        const k = err() ? rng.int(1, maxK) : Math.min(maxK, tier);
        return malformed ? `${k} solvers` : `<solvers>${k}</solvers>`;
      }
      case 'solver':
      case 'reviser':
      case 'aggregator':
      case 'single_math':
        return malformed ? `the answer is ${gold}` : solution();
      case 'verifier': {
        const allRight = boxedAnswers(member.prompt).every((a) => a === gold);
        const verdict = allRight !== err() ? 'accept' : 'revise';
        return malformed ? `${verdict}` : `<verdict>${verdict}</verdict>`;
      }
      case 'search_router': {
        const done = hopsFound(member.prompt, hops) >= hops.length;
        const stop = done !== err();
        return malformed ? 'search more' : stop ? '<route>STOP</route>' : '<route>0</route>';
      }
      case 'searcher': {
        const found = hopsFound(member.prompt, hops);
        const target = hops[Math.min(found, hops.length - 1)]?.entity ?? task.question;
        const index = Number(/Searcher (\d+)/.exec(member.prompt)?.[1] ?? 0);
        // Searcher 0 looks up the next entity; others look up the question itself.
        const query = err() ? task.question.split(' ').slice(0, 2).join(' ') : index === 0 ? target : task.question;
        const think = `find ${target}`;
        return malformed ? `<search>${query}</search>` : `<think>${think}</think><search>${query}</search>`;
      }
      case 'search_verifier': {
        const enough = hopsFound(member.prompt, hops) >= hops.length;
        return malformed ? 'enough' : `<verdict>${enough !== err() ? 'sufficient' : 'insufficient'}</verdict>`;
      }
      case 'answerer':
      case 'single_qa': {
        const known = member.instruction === 'single_qa' || member.prompt.includes(gold);
        const answer = known && !err() ? gold : (hops[0]?.entity ?? 'unknown');
        // The answerer's think quotes the evidence phrase that holds the answer (what it can see,
        // never the hidden hop facts): writing the relation the question asks about, then
        // copying the word that follows it in a document, is how a tiny character model gets the
        // answer out of a long prompt.
        const think = member.instruction === 'answerer' ? `<think>${evidencePhrase(member.prompt, gold) ?? 'no document has it'}</think>` : '';
        return malformed ? answer : `${think}<answer>${answer}</answer>`;
      }
      default:
        return '';
    }
  };
}
