/**
 * examples/agents/math_team.py (the official `openai` Python client, asyncio.gather for the
 * parallel solvers) trains as a run: one step of the lab's warm-started tiny model, its tagged
 * solver pair stored as one K = 2 set in every episode, rewards in (no failed episode), and the
 * evaluations played by the same program. Runs where `python3 -c "import openai"` works (or the
 * interpreter named by SRPO_LAB_PYTHON); otherwise it is skipped, saying so.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { presetConfig } from '../../src/core/config';
import { trainExternalRun, useClosers } from './trainRun';

const PYTHON = process.env.SRPO_LAB_PYTHON || 'python3';
const hasOpenai = spawnSync(PYTHON, ['-c', 'import openai'], { stdio: 'ignore' }).status === 0;
if (!hasOpenai) console.warn(`test/external/mathTeamPython.test.ts skipped: "${PYTHON} -c 'import openai'" fails (pip install openai, or set SRPO_LAB_PYTHON)`);

const closers = useClosers();

describe('the Python example program trains as a run', () => {
  it.skipIf(!hasOpenai)(
    'tagged parallel calls (asyncio.gather) are one K = 2 set; rewards arrive; the step commits',
    async () => {
      const config = presetConfig('external-math-quick', {
        steps: 1,
        workflow: { options: { command: [PYTHON, 'examples/agents/math_team.py'] } },
        rollout: { tasksPerStep: 2, groupSize: 2 },
        eval: { every: 1, n: 2, queries: 2 },
        checkpointEvery: 0,
      });
      const { store, runId, steps, logs } = await trainExternalRun('py', config, closers);
      expect(store.committedSteps(runId)).toEqual([0, 1]);
      expect(steps[0].metrics['external/failed_episodes'], logs.join('\n')).toBe(0);
      expect(steps[1].metrics['eval/arith-chain/avg']).toBeGreaterThanOrEqual(0);
      const train = store.listEvents(runId, { fromStep: 0, toStep: 0, split: 'train' }, { limit: 1000, after: null }).events;
      const solve = train.filter((e) => e.key.endsWith('/solve'));
      expect(solve).toHaveLength(4);
      for (const e of solve) expect(e).toMatchObject({ expectedK: 2, memberCount: 2, complete: true });
    },
    240_000,
  );
});
