import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: '.',
    include: ['test/**/*.test.ts'],
    // 2 cores and ~1 GB per embedded PGlite instance: a modest pool keeps the suite fast and within memory
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 60_000,
    env: { TZ: 'UTC' },
  },
});
