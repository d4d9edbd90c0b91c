#!/usr/bin/env node
/**
 * One reference crawl as a user would run a script: `node bench/dist/reference-main.js <undici|crawlee|crawlee-store|bullmq>
 * <urls-file> [--concurrency N] [--redis-url URL]`. Prints its measurement as one JSON line and exits, so the
 * many-domains bench can time it from process start to exit, beside `crawl crawl --json urls.txt`.
 */
import { readFile } from 'node:fs/promises';
import { benchArgs, exitUsage, type BenchArgsConfig } from './cli-args.js';
import { measureReference, type ReferenceName } from './reference-run.js';

const NAMES: readonly ReferenceName[] = ['undici', 'crawlee', 'crawlee-store', 'bullmq'];

const CLI = {
  script: 'reference-main',
  positionals: `<${NAMES.join('|')}> <urls-file>`,
  options: {
    concurrency: { type: 'string', default: '32', description: 'pages in flight' },
    'redis-url': { type: 'string', default: 'redis://127.0.0.1:6379', placeholder: 'URL', description: "Redis of the bullmq reference's queue" },
  },
} satisfies BenchArgsConfig;

async function main(): Promise<void> {
  const { values, positionals } = benchArgs(CLI);
  const [name, file] = positionals as [ReferenceName | undefined, string | undefined];
  if (!name || !NAMES.includes(name)) exitUsage(CLI, name ? `unknown reference ${JSON.stringify(name)}, expected one of ${NAMES.join(', ')}` : 'missing the reference to run');
  if (!file) exitUsage(CLI, 'missing the urls file');
  const urls = (await readFile(file, 'utf8')).split('\n').map((l) => l.trim()).filter(Boolean);
  const measurement = await measureReference(name, { urls, concurrency: Number(values.concurrency), redisUrl: values['redis-url'] });
  process.stdout.write(`${JSON.stringify(measurement)}\n`);
}

main().then(
  // Crawlee and BullMQ may leave timers behind; the measurement is out, so the process ends here like a script's would.
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
