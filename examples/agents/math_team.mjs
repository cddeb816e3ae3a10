/**
 * A math team written as an ordinary agent program with the official `openai` npm client, trained
 * by SRPO Lab through its OpenAI-compatible endpoint (docs/EXTERNAL_AGENTS.md). The program knows
 * nothing about RL: it reads its episodes, calls `chat.completions`, and reports a reward.
 *
 * The team mirrors the lab's built-in math workflow (K = 2, one verify round, revision before
 * aggregation) with the same prompt texts, so a policy warm-started on the built-in workflow reads
 * exactly what it learned from:
 *   two solvers, called in parallel and tagged as ONE active set (srpo_event "solve");
 *   a verifier (untagged: its event is named "verifier#0");
 *   on <verdict>revise</verdict> a reviser (the solver role, tagged "revise"), whose answer counts;
 *   otherwise an aggregator (untagged: "aggregator#0"), whose boxed answer counts.
 * Training: the reward is 1 for a right answer, else 0, and each event's reward is lowered by 0.1
 * per member whose output is malformed (as the built-in workflow's invalid-action penalty), sent
 * as per-event rewards. Evaluation: the program posts its answer and the lab grades it.
 *
 * Run by the lab (workflow `external`, preset external-math-quick):
 *   command: ["node", "examples/agents/math_team.mjs"]
 * Environment: SRPO_LAB_EPISODES (JSONL, one episode a line), SRPO_LAB_MODE (train | eval),
 * OPENAI_BASE_URL, OPENAI_API_KEY. Test: test/external/mathTeam.test.ts.
 */
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';

const PENALTY = 0.1;
const mode = process.env.SRPO_LAB_MODE ?? 'train';
const episodes = readFileSync(process.env.SRPO_LAB_EPISODES, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l));

/** observation + team context + instruction, one per line (the built-in workflow's prompt layout). */
function prompt(question, context, instruction) {
  return [`Problem: ${question.trim()}`, ...context.map(([label, text]) => `${label}: ${text.trim()}`), instruction].join('\n');
}

/** The content of the last complete \boxed{...}, or null. */
function lastBoxed(text) {
  const at = text.lastIndexOf('\\boxed{');
  if (at < 0) return null;
  let depth = 0;
  for (let i = at + 7; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}') {
      if (depth === 0) return text.slice(at + 7, i).trim();
      depth--;
    }
  }
  return null;
}

/** accept | revise when exactly one well-formed verdict tag, else null (malformed). */
function verdict(text) {
  const found = [...text.matchAll(/<verdict>(.*?)<\/verdict>/gs)].map((m) => m[1].trim().toLowerCase());
  const opened = (text.match(/<verdict>/g) ?? []).length;
  return found.length === 1 && opened === 1 && (found[0] === 'accept' || found[0] === 'revise') ? found[0] : null;
}

function sameAnswer(a, gold) {
  const x = Number(a.replace(/\s+/g, ''));
  const y = Number(String(gold).replace(/\s+/g, ''));
  return Number.isFinite(x) && Number.isFinite(y) ? x === y : a.trim() === String(gold).trim();
}

async function play(ep) {
  const client = new OpenAI({ baseURL: ep.base_url, apiKey: process.env.OPENAI_API_KEY, maxRetries: 0 });
  const ask = async (model, content, tag) => {
    const r = await client.chat.completions.create({ model, messages: [{ role: 'user', content }], ...(tag ? { srpo_event: tag } : {}) });
    return r.choices[0].message.content ?? '';
  };
  const q = ep.task.question;
  const invalid = {};
  // Two solvers in parallel, one active set: same pre-action state, tag "solve".
  const solutions = await Promise.all([0, 1].map((j) => ask('solver', prompt(q, [], `Solver ${j}: solve it. End with \\boxed{answer}.`), 'solve')));
  invalid.solve = solutions.filter((s) => lastBoxed(s) === null).length;
  const context = solutions.map((s, j) => [`Solver ${j}`, s]);
  const v = await ask('verifier', prompt(q, context, 'Verifier: check the work. Reply <verdict>accept</verdict> or <verdict>revise</verdict>.'));
  invalid['verifier#0'] = verdict(v) === null ? 1 : 0;
  context.push(['Verifier', v]);
  let final;
  let lastEvent;
  if (verdict(v) === 'revise') {
    final = await ask('solver', prompt(q, context, 'Reviser: fix the solution. End with \\boxed{answer}.'), 'revise');
    lastEvent = 'revise';
  } else {
    final = await ask('aggregator', prompt(q, context, 'Aggregator: give the final answer. End with \\boxed{answer}.'));
    lastEvent = 'aggregator#0';
  }
  const answer = lastBoxed(final);
  invalid[lastEvent] = answer === null ? 1 : 0;
  let body;
  if (mode === 'train') {
    const reward = answer !== null && sameAnswer(answer, ep.task.answer) ? 1 : 0;
    const events = Object.fromEntries(Object.entries(invalid).map(([name, n]) => [name, reward - PENALTY * n]));
    body = { reward, events, ...(answer !== null ? { answer } : {}) };
  } else {
    body = { answer: answer ?? '' };
  }
  const res = await fetch(`${ep.base_url}/reward`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${process.env.OPENAI_API_KEY}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`reward of ${ep.episode}: HTTP ${res.status} ${await res.text()}`);
}

// Every episode at once: the lab batches the calls of all running episodes into one sampler call.
const results = await Promise.allSettled(episodes.map(play));
const failed = results.filter((r) => r.status === 'rejected');
for (const f of failed) console.error(String(f.reason?.message ?? f.reason));
process.exit(failed.length === episodes.length && episodes.length > 0 ? 1 : 0);
