import { defineConfig } from 'vitest/config';

// Two projects: `unit` needs no root (npm run test:unit), `system` loads real nft and Open
// vSwitch in private network namespaces and needs root (npm run test:system). `npm test`
// runs both. A test that needs root is named *.system.test.ts.
const SYSTEM = 'test/**/*.system.test.ts';

export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Two cores: system tests start daemons and namespaces; keep parallelism modest.
    maxWorkers: 2,
    pool: 'forks',
    projects: [
      // The unit files share their workers' modules (no isolation): loading the sources
      // again for each of forty files cost a third of the project's time. None of them
      // mocks a module or leaves state that another reads.
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts', 'test/**/*.test.ts'], exclude: [SYSTEM], isolate: false } },
      { extends: true, test: { name: 'system', include: [SYSTEM] } },
    ],
  },
});
