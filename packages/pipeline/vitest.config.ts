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
    // Two files at a time: this package is the suite's critical path (about 620 s of 760 s run one file at a time), and
    // most of its time is spent waiting on crawls, timers and child processes, not on the CPU. Every file has its own
    // database and Redis prefix (startE2e), so two at once do not meet.
    maxWorkers: 2,
    reporters: ['default', ['json', { outputFile: '../../.test-reports/pipeline.json' }]],
  },
});
