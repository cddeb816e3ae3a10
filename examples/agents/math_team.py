"""A math team written with the official `openai` Python client, trained by SRPO Lab.

The same team as examples/agents/math_team.mjs (docs/EXTERNAL_AGENTS.md): two solvers called in
parallel with asyncio.gather and tagged as ONE active set (extra_body srpo_event "solve"), a
verifier (untagged: event "verifier#0"), then a reviser (the solver role, tag "revise") on a
"revise" verdict, else an aggregator ("aggregator#0"). Prompts are the built-in math workflow's,
so the lab's warm-started tiny model reads what it learned from. Training: reward 1 for a right
answer, else 0, each event lowered by 0.1 per malformed member (per-event rewards). Evaluation:
the program posts its answer and the lab grades it.

Run by the lab (workflow `external`): command ["python3", "examples/agents/math_team.py"].
Environment: SRPO_LAB_EPISODES, SRPO_LAB_MODE, OPENAI_BASE_URL, OPENAI_API_KEY.
Needs `pip install openai`. Test: test/external/mathTeamPython.test.ts (skipped without it).
"""

import asyncio
import json
import os
import re
import sys

import httpx
from openai import AsyncOpenAI

PENALTY = 0.1
MODE = os.environ.get("SRPO_LAB_MODE", "train")
KEY = os.environ["OPENAI_API_KEY"]


def prompt(question, context, instruction):
    """observation + team context + instruction, one per line (the built-in workflow's layout)."""
    lines = [f"Problem: {question.strip()}"]
    lines += [f"{label}: {text.strip()}" for label, text in context]
    lines.append(instruction)
    return "\n".join(lines)


def last_boxed(text):
    """The content of the last complete \\boxed{...}, or None."""
    at = text.rfind("\\boxed{")
    if at < 0:
        return None
    depth = 0
    for i in range(at + 7, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            if depth == 0:
                return text[at + 7 : i].strip()
            depth -= 1
    return None


def verdict(text):
    """accept | revise when exactly one well-formed verdict tag, else None (malformed)."""
    found = [m.strip().lower() for m in re.findall(r"<verdict>(.*?)</verdict>", text, re.S)]
    if len(found) == 1 and text.count("<verdict>") == 1 and found[0] in ("accept", "revise"):
        return found[0]
    return None


def same_answer(a, gold):
    try:
        return float(a.replace(" ", "")) == float(str(gold).replace(" ", ""))
    except ValueError:
        return a.strip() == str(gold).strip()


async def play(ep, http):
    client = AsyncOpenAI(base_url=ep["base_url"], api_key=KEY, max_retries=0, http_client=http)

    async def ask(model, content, tag=None):
        extra = {"srpo_event": tag} if tag else None
        r = await client.chat.completions.create(model=model, messages=[{"role": "user", "content": content}], extra_body=extra)
        return r.choices[0].message.content or ""

    q = ep["task"]["question"]
    invalid = {}
    # Two solvers in parallel, one active set: the same pre-action state, tag "solve".
    solutions = await asyncio.gather(
        *[ask("solver", prompt(q, [], f"Solver {j}: solve it. End with \\boxed{{answer}}."), "solve") for j in range(2)]
    )
    invalid["solve"] = sum(1 for s in solutions if last_boxed(s) is None)
    context = [(f"Solver {j}", s) for j, s in enumerate(solutions)]
    v = await ask("verifier", prompt(q, context, "Verifier: check the work. Reply <verdict>accept</verdict> or <verdict>revise</verdict>."))
    invalid["verifier#0"] = 1 if verdict(v) is None else 0
    context.append(("Verifier", v))
    if verdict(v) == "revise":
        final = await ask("solver", prompt(q, context, "Reviser: fix the solution. End with \\boxed{answer}."), "revise")
        last = "revise"
    else:
        final = await ask("aggregator", prompt(q, context, "Aggregator: give the final answer. End with \\boxed{answer}."))
        last = "aggregator#0"
    answer = last_boxed(final)
    invalid[last] = 1 if answer is None else 0
    if MODE == "train":
        reward = 1 if answer is not None and same_answer(answer, ep["task"]["answer"]) else 0
        body = {"reward": reward, "events": {name: reward - PENALTY * n for name, n in invalid.items()}}
    else:
        body = {"answer": answer or ""}
    r = await http.post(f"{ep['base_url']}/reward", json=body, headers={"Authorization": f"Bearer {KEY}"})
    r.raise_for_status()


async def main():
    with open(os.environ["SRPO_LAB_EPISODES"], encoding="utf-8") as f:
        episodes = [json.loads(line) for line in f if line.strip()]
    # Every episode at once: the lab batches the calls of all running episodes into one sampler call.
    async with httpx.AsyncClient(timeout=600) as http:
        results = await asyncio.gather(*[play(ep, http) for ep in episodes], return_exceptions=True)
    failed = [r for r in results if isinstance(r, Exception)]
    for e in failed:
        print(f"episode failed: {e}", file=sys.stderr)
    return 1 if episodes and len(failed) == len(episodes) else 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
