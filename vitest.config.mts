// Unit and integration tests under plain Node (no Electron, no GPU): `npm test`.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    environment: 'node',
    setupFiles: ['test/setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // tfjs keeps one global engine per process: give each test file its own.
    pool: 'forks',
  },
});
