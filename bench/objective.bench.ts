/**
 * `objective`: loss plus gradient with respect to the current log-probs for `srpo` against
 * `grpo_token` on the same batch (256 members x 256 tokens, K mixed 1..5), median of several
 * runs each, interleaved. Headline `ratio=` is SRPO time / token-level GRPO time (goal <= 1.1).
 */
import * as tf from '@tensorflow/tfjs';
import { objectiveConfig, objectiveForTraining, prepareObjectiveBatch, type ObjectiveBatch } from '../src/core/srpo';
import { benchBackend, headline, median } from './lib';

function makeBatch(members: number, tokens: number, seed: number): ObjectiveBatch {
  let s = seed >>> 0;
  const rand = () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
  const batch: ObjectiveBatch = { events: [], members: [] };
  let m = 0;
  for (let e = 0; m < members; e++) {
    const k = Math.min(1 + Math.floor(rand() * 5), members - m);
    batch.events.push({ id: `e${e}`, group: `g${e % 16}`, reward: rand() < 0.5 ? 1 : 0, expectedK: k });
    for (let j = 0; j < k; j++, m++) {
      const logpOld = Array.from({ length: tokens }, () => -3 * rand());
      const logpCur = logpOld.map((v) => v + 0.01 * (rand() - 0.5));
      const len = 1 + Math.floor(rand() * tokens);
      const mask = Array.from({ length: tokens }, (_, t) => (t < len ? 1 : 0));
      batch.members.push({ event: `e${e}`, role: 'solver', logpCur, logpOld, mask });
    }
  }
  return batch;
}

async function main(): Promise<void> {
  await benchBackend();
  const batch = makeBatch(256, 256, 7);
  const setups = (['srpo', 'grpo_token'] as const).map((algorithm) => {
    const config = objectiveConfig({ algorithm });
    const prepared = prepareObjectiveBatch(batch, config);
    return { algorithm, config, prepared };
  });
  const logpCur = tf.tensor2d(
    batch.members.flatMap((m) => m.logpCur),
    [batch.members.length, 256],
  );
  const step = async (i: number): Promise<number> => {
    const { config, prepared } = setups[i];
    const t0 = performance.now();
    const grad = tf.tidy(() => tf.grad((x: tf.Tensor) => objectiveForTraining(prepared, x as tf.Tensor2D, config).loss)(logpCur));
    await grad.data(); // waits for the device
    grad.dispose();
    return performance.now() - t0;
  };
  for (let w = 0; w < 3; w++) for (let i = 0; i < 2; i++) await step(i);
  const times: number[][] = [[], []];
  for (let r = 0; r < 15; r++) for (let i = 0; i < 2; i++) times[i].push(await step(i));
  const [srpoMs, tokenMs] = times.map(median);
  logpCur.dispose();
  console.log(`srpo ${srpoMs.toFixed(2)} ms, grpo_token ${tokenMs.toFixed(2)} ms (median of 15, interleaved)`);
  headline('objective', { srpo_ms: srpoMs, grpo_token_ms: tokenMs, ratio: srpoMs / tokenMs, tensors: tf.memory().numTensors });
}

void main();
