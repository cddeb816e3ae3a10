// Per test file: start the tfjs backend the way the lab does (auto order, or SRPO_LAB_BACKEND).
// On the build machines this lands on wasm; the report is printed once so CI logs say so.
import { beforeAll } from 'vitest';
import { currentBackend, initBackend } from '../src/core/models/backend';

beforeAll(async () => {
  if (currentBackend()) return;
  const report = await initBackend();
  if (process.env.SRPO_LAB_VERBOSE) console.log('tfjs backend:', report);
});
