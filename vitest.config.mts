// Two tiers of tests under plain Node (no Electron, no GPU), one config:
// - `npm test` (project `fast`): unit and integration tests, a few minutes on 2 cores; run it
//   while working.
// - `npm run test:all` (both projects): also the `slow` tier below: headless-Chromium end-to-end
//   tests, the desktop bundles under a stand-in Electron, engines killed with -9, real training
//   runs through forked engines and external agent programs. CI runs this one.
// Which files are slow was measured (per-file durations of a whole run, README "Tests").
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Files of the slow tier: each starts engines, a browser or a training run, or takes 20 s and more
 * on 2 cores (per-file durations of a whole `npm test`: the Hugging Face training tests, the
 * read-only database tests run as another user, the corpus top-k's 400 random queries).
 */
export const SLOW_TESTS = [
  'test/e2e/**',
  'test/desktop/**',
  'test/engine/**',
  'test/external/**',
  'test/cli/train.test.ts',
  'test/core/train/hf*.test.ts',
  'test/core/store/readonly.test.ts',
  'test/core/data/corpusTopK.test.ts',
];

const shared = {
  environment: 'node' as const,
  setupFiles: ['test/setup.ts'],
  testTimeout: 60_000,
  hookTimeout: 60_000,
  // tfjs keeps one global engine per process: give each test file its own.
  pool: 'forks' as const,
};

export default defineConfig({
  test: {
    projects: [
      { test: { ...shared, name: 'fast', include: ['test/**/*.test.ts', 'src/**/*.test.ts'], exclude: [...configDefaults.exclude, ...SLOW_TESTS] } },
      { test: { ...shared, name: 'slow', include: SLOW_TESTS.map((p) => (p.endsWith('**') ? `${p}/*.test.ts` : p)) } },
    ],
  },
});
