import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    passWithNoTests: true,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // One module graph per worker, not one per file: importing the workspace's packages again for every file was 60 s
    // of the pipeline package's 529 s. Test files share no state through modules (each opens its own clients).
    isolate: false,
    reporters: ['default', ['json', { outputFile: '../../.test-reports/pipeline.json' }]],
  },
});
