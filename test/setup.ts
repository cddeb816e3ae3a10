// Per test file: start the tfjs backend. `npm test` runs on wasm, the backend every install has,
// so its results do not depend on which optional native package happened to install;
// SRPO_LAB_BACKEND picks another (`npm run test:native` runs the model, objective and trainer
// tests on `node`, tfjs-node; .ci/run builds it from a local TensorFlow wheel when it can, and
// says so when it cannot). A requested backend that cannot start fails the file with the reason.
// The report is printed once per file with SRPO_LAB_VERBOSE, so CI logs say which backend ran.
import { beforeAll } from 'vitest';
import { backendFromEnv, currentBackend, initBackend } from '../src/core/models/backend';

// Exported to the environment so that the engine processes the tests spawn (run config backend
// `auto`, which defers to SRPO_LAB_BACKEND) run on the same backend.
process.env.SRPO_LAB_BACKEND = backendFromEnv() ?? 'wasm';

beforeAll(async () => {
  if (currentBackend()) return;
  const report = await initBackend();
  if (process.env.SRPO_LAB_VERBOSE) console.log('tfjs backend:', report);
});
