/**
 * A bench's command line for cli-args.test.ts, run as `node --import tsx cli-args-child.ts [args]`: parses its
 * arguments with benchArgs and prints what it got as one JSON line.
 */
import { benchArgs } from '../cli-args.js';

const { values, positionals } = benchArgs({
  script: 'cli-args-child',
  options: {
    rounds: { type: 'string', default: '6', description: 'crawl rounds per mode' },
    'pg-url': { type: 'string', placeholder: 'URL', description: 'Postgres server for the throwaway database' },
    debug: { type: 'boolean', default: false, description: 'print every attempt' },
    seed: { type: 'string', multiple: true, placeholder: 'URL', description: 'a seed of the crawl' },
  },
});
process.stdout.write(`${JSON.stringify({ values, positionals })}\n`);
