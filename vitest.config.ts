import { defineConfig } from 'vitest/config';

// Three projects. `unit` needs no root and is quick (npm run test:unit). `slow` needs no
// root but takes long whatever its size: packing and installing the npm package, a listing
// large enough for the worker thread through the real process, every built module loaded
// alone, the type checker run over a widened union (npm run test:slow).
// `system` loads real nft and Open vSwitch in private network namespaces and needs root
// (npm run test:system). `npm test` runs all three. A test that needs root is named
// *.system.test.ts; one that is slow without it, *.slow.test.ts.
const SYSTEM = 'test/**/*.system.test.ts';
const SLOW = 'test/**/*.slow.test.ts';

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
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts', 'test/**/*.test.ts'], exclude: [SYSTEM, SLOW], isolate: false } },
      { extends: true, test: { name: 'slow', include: [SLOW] } },
      { extends: true, test: { name: 'system', include: [SYSTEM] } },
    ],
  },
});
