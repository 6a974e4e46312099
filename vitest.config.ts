import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'bench/test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // The JSON report feeds the one-line summary .ci/run prints.
    reporters: ['default', ['json', { outputFile: 'dist/test-results.json' }]],
  },
});
