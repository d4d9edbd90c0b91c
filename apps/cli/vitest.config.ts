import { configDefaults, defineConfig } from 'vitest/config';

/** The file that checks what a module does not load (see `projects`). */
const ISOLATED = 'src/cli.test.ts';

export default defineConfig({
  test: {
    passWithNoTests: true,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // One module graph per worker, not one per file (importing the workspace's packages again for every file was a
    // fifth of a package's time), except for the file that checks what a module does *not* load: its mocks must see
    // a fresh module graph, or a module an earlier file loaded would pass it without being looked at. Each project
    // names its own files: an `include` here would be added to theirs, and every file would run twice.
    projects: [
      {
        extends: true,
        test: { name: 'shared', isolate: false, include: ['src/**/*.test.ts'], exclude: [...configDefaults.exclude, ISOLATED] },
      },
      { extends: true, test: { name: 'isolated', include: [ISOLATED] } },
    ],
    reporters: ['default', ['json', { outputFile: '../../.test-reports/cli.json' }]],
  },
});
