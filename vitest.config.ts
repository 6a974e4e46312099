import { configDefaults, defineConfig } from 'vitest/config';

const PACING = 'test/integration/pacing-limits.test.ts';

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // The JSON report feeds the one-line summary .ci/run prints.
    reporters: ['default', ['json', { outputFile: 'dist/test-results.json' }]],
    projects: [
      {
        // Pure logic with injected clocks: two at a time, first. The pacing test runs beside them:
        // it waits 48 s on SMSCs in processes of their own and holds up against a busy core.
        extends: true,
        test: {
          name: 'unit', include: ['test/unit/**/*.test.ts', 'test/regression/**/*.test.ts', PACING], maxWorkers: 2, sequence: { groupOrder: 0 },
        },
      },
      {
        // Real sockets, processes, servers and timings: one at a time, so none waits for a core
        // another test is holding.
        extends: true,
        test: {
          name: 'integration', include: ['test/integration/**/*.test.ts', 'test/interop/**/*.test.ts', 'bench/test/**/*.test.ts'], exclude: [...configDefaults.exclude, PACING],
          maxWorkers: 1, sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
