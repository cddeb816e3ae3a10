/**
 * `sampler`: generation throughput of the tiny preset, batch 32 prompts of 16..32 tokens, 48 new
 * tokens each (no end token, so every row runs the full 48), with the KV cache against
 * re-running the full forward pass every step, in the same run. Headline: tokens/s of each and
 * `speedup` = kv / full (goal >= 20).
 */
import { modelConfig } from '../src/core/models/config';
import { mulberry32 } from '../src/core/models/random';
import { sample, type DecodeMode } from '../src/core/models/sampler';
import { Transformer } from '../src/core/models/transformer';
import { benchBackend, headline, timeMedian } from './lib';

async function main(): Promise<void> {
  await benchBackend();
  const model = new Transformer(modelConfig('tiny'));
  const rand = mulberry32(3);
  const prompts = Array.from({ length: 32 }, () => Array.from({ length: 16 + Math.floor(rand() * 17) }, () => 12 + Math.floor(rand() * 96)));
  const tokens = 32 * 48;
  const run = (decode: DecodeMode) => () => sample(model, prompts, { maxNewTokens: 48, seed: 1, endId: null, decode });
  const kvMs = await timeMedian(run('kv'), 5, 1);
  const fullMs = await timeMedian(run('full'), 1, 0);
  console.log(`kv ${kvMs.toFixed(0)} ms, full ${fullMs.toFixed(0)} ms for ${tokens} tokens`);
  model.dispose();
  headline('sampler', { kv_tok_s: (tokens / kvMs) * 1e3, full_tok_s: (tokens / fullMs) * 1e3, speedup: fullMs / kvMs });
}

void main();
