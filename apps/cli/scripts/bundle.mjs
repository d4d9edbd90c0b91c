// Bundles the built CLI (dist/main.js and the response-analysis thread's entry) into dist/bundle/, which
// bin/crawl.js runs. Loading ~400 files through Node's ES module loader (resolution, a stat and a read each, the
// CommonJS lexer for every CommonJS dependency imported from an ES module) cost a `crawl` command about 0.3 s of CPU
// before it did anything; one bundle with lazily loaded chunks per command loads in a fraction of that.
//
// Left out and loaded from node_modules at run time:
// - playwright: large, loaded only by a browser fetcher;
// - Prisma's client runtime, its pg adapter and pg: the adapter and the pool must share one pg;
// - pino: its transports start worker threads from its own files;
// - the stealth browser's fingerprint and header generators, and msgpackr's native extractor: they read their data
//   files (or a native addon) from beside their own modules.
// Modules our packages load through createRequire (bullmq, tldts, robots-parser, pino-pretty) are not seen by the
// bundler and load from node_modules too; bullmq is bundled through the plugin below (its CommonJS index re-exports
// ~170 modules, which the bundle then holds as one).
import { build } from 'esbuild';
import { readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = dirname(dirname(fileURLToPath(import.meta.url)));
const require = createRequire(join(CLI, 'package.json'));
const OUT = join(CLI, 'dist', 'bundle');

// The analysis thread's entry: in the same directory as the chunk that holds the pool, which looks for it there.
const analysisWorker = join(dirname(require.resolve('@crawler/pipeline')), 'fetch', 'analysis-worker.js');
// The same for the thread that turns large stored pages into text or Markdown (packages/export's format-pool).
const formatWorker = join(dirname(require.resolve('@crawler/export')), 'content', 'format-worker.js');

/** packages/queue loads bullmq with createRequire (see its bullmq.ts); in the bundle a static import costs nothing. */
const bullmqStatic = {
  name: 'bullmq-static',
  setup(b) {
    b.onLoad({ filter: /[\\/]queue[\\/]dist[\\/]bullmq\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const call = /createRequire\(import\.meta\.url\)\('bullmq'\)/;
      if (!call.test(source)) throw new Error(`${args.path}: bullmq is no longer loaded with createRequire; update scripts/bundle.mjs`);
      return { contents: `import * as __bullmq from 'bullmq';\n${source.replace(call, '__bullmq')}`, loader: 'js' };
    });
  },
};

await rm(OUT, { recursive: true, force: true });
await build({
  entryPoints: { main: join(CLI, 'dist', 'main.js'), 'analysis-worker': analysisWorker, 'format-worker': formatWorker },
  outdir: OUT,
  entryNames: '[name]',
  chunkNames: '[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  external: [
    'playwright', 'playwright-core', '@prisma/client', '@prisma/adapter-pg', 'pg', 'pino', 'pino-pretty',
    'fingerprint-generator', 'fingerprint-injector', 'header-generator', 'generative-bayesian-network', 'msgpackr-extract',
  ],
  // CommonJS dependencies call require() for Node's modules and read __dirname; an ES module has neither.
  banner: {
    js: [
      "import { createRequire as __createRequire } from 'node:module';",
      "import { fileURLToPath as __fileURLToPath } from 'node:url';",
      "import { dirname as __pathDirname } from 'node:path';",
      'const require = __createRequire(import.meta.url);',
      'const __filename = __fileURLToPath(import.meta.url);',
      'const __dirname = __pathDirname(__filename);',
    ].join('\n'),
  },
  plugins: [bullmqStatic],
  logLevel: 'warning',
});
