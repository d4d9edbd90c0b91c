import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    passWithNoTests: true,
    // A hang guard, not a speed bar: browser tests that wait out a challenge (15 s) took 23–30 s in loaded CI runs.
    testTimeout: 90_000,
    hookTimeout: 60_000,
    reporters: ['default', ['json', { outputFile: '../../.test-reports/fetchers.json' }]],
  },
});
