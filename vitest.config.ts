import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Two cores: system tests start daemons and namespaces; keep parallelism modest.
    maxWorkers: 2,
    pool: 'forks',
  },
});
