/**
 * Link-following crawl throughput against Crawlee's CheerioCrawler with enqueueLinks, on the same generated loopback
 * site graph (@crawler/testkit startSiteGraph), the same concurrency and the same scope, politeness off for both
 * (no per-domain delay, no robots.txt). Each crawler runs in a child process of its own, alternately, `--rounds`
 * times; the site graph runs in this process and counts every request, so each crawler's fetched set, duplicate
 * fetches and off-site requests are measured, not assumed.
 *
 *   node dist/follow-bench.js [--pages-per-host 1000] [--concurrency 16] [--rounds 2]
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deleteRedisPrefix } from '@crawler/queue';
import { benchArgs } from './cli-args.js';

interface ChildResult {
  ms: number;
  pagesDone: number;
}

async function childOurs(seeds: string[], concurrency: number): Promise<ChildResult> {
  const { createTestDatabase } = await import('@crawler/db/testing');
  const { createRuntime, loadConfig } = await import('@crawler/pipeline');
  const { Redis } = await import('ioredis');
  const db = await createTestDatabase('bench_follow');
  const prefix = `{crawler_bench_follow_${process.pid}}`;
  const config = loadConfig({
    DATABASE_URL: db.url, QUEUE_PREFIX: prefix, ALLOW_PRIVATE_NETWORKS: 'true', FETCHERS: `simple_http:${concurrency}`, ROUTER_CONCURRENCY: String(concurrency),
    DOMAIN_MAX_CONCURRENCY: String(concurrency), DOMAIN_MIN_DELAY_MS: '0', ROBOTS_ENABLED: 'false', LOG_LEVEL: 'warn',
  });
  const runtime = createRuntime(config, { prisma: db.prisma });
  try {
    const started = performance.now();
    const created = await runtime.crawls.create({ seeds, scope: 'same-host' });
    runtime.startWorkers();
    for (;;) {
      await new Promise((r) => setTimeout(r, 50));
      const view = await runtime.crawlStore.view(created.crawl.id);
      if (view && view.state !== 'running') return { ms: performance.now() - started, pagesDone: view.counters.done + view.counters.failed };
    }
  } finally {
    await runtime.close({ drainTimeoutMs: 5_000 });
    const r = new Redis(config.redisUrl);
    await deleteRedisPrefix(r, prefix);
    r.disconnect();
    await db.drop();
  }
}

async function childCrawlee(seeds: string[], concurrency: number): Promise<ChildResult> {
  const { CheerioCrawler, Configuration, log } = await import('@crawlee/cheerio');
  log.setLevel(log.LEVELS.WARNING);
  const storageDir = await mkdtemp(join(tmpdir(), 'crawler-bench-follow-'));
  const config = new Configuration({ persistStorage: false, purgeOnStart: true, storageClientOptions: { localDataDirectory: storageDir, persistStorage: false, writeMetadata: false } });
  let pagesDone = 0;
  const crawler = new CheerioCrawler(
    {
      minConcurrency: concurrency,
      maxConcurrency: concurrency,
      maxRequestRetries: 1,
      // A 404 is a page's answer for us; Crawlee would retry and fail it: let it through as ours does.
      ignoreHttpErrorStatusCodes: [404],
      requestHandler: async ({ enqueueLinks }) => {
        pagesDone++;
        await enqueueLinks({ strategy: 'same-hostname' });
      },
      failedRequestHandler: async () => {
        pagesDone++;
      },
    },
    config,
  );
  const started = performance.now();
  try {
    await crawler.run(seeds);
    return { ms: performance.now() - started, pagesDone };
  } finally {
    await crawler.teardown().catch(() => undefined);
    await rm(storageDir, { recursive: true, force: true });
  }
}

function runChild(which: 'ours' | 'crawlee', seeds: string[], concurrency: number): Promise<ChildResult> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', which, '--concurrency', String(concurrency), ...seeds.flatMap((s) => ['--seed', s])], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += String(d)));
  return new Promise((resolve, reject) =>
    child.on('close', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      if (code !== 0) reject(new Error(`${which} child exited ${code}: ${out}`));
      else resolve(JSON.parse(line) as ChildResult);
    }),
  );
}

async function main(): Promise<void> {
  const { values } = benchArgs({
    script: 'follow-bench',
    options: {
      'pages-per-host': { type: 'string', default: '1000', description: 'pages per host of the generated site graph' },
      concurrency: { type: 'string', default: '16', description: 'pages in flight, the same for both crawlers' },
      rounds: { type: 'string', default: '2', description: 'rounds of both crawlers, alternating which goes first' },
      child: { type: 'string', placeholder: 'ours|crawlee', description: 'internal: crawl the seeds with this crawler in this process and print its result' },
      seed: { type: 'string', multiple: true, placeholder: 'URL', description: "internal: a seed of the child's crawl" },
    },
  });
  const concurrency = Number(values.concurrency);
  if (values.child) {
    const r = values.child === 'ours' ? await childOurs(values.seed ?? [], concurrency) : await childCrawlee(values.seed ?? [], concurrency);
    process.stdout.write(`${JSON.stringify(r)}\n`);
    return;
  }
  const { startSiteGraph } = await import('@crawler/testkit');
  const graph = await startSiteGraph({ pagesPerHost: Number(values['pages-per-host']), firstHost: '127.0.1.50' });
  const expected = graph.expected();
  const rows: Array<{ crawler: string; round: number; ms: number; pagesPerSec: number; requests: number; distinctPages: number; twice: number; offSite: number; resources: number; expectedMissing: number }> = [];
  try {
    for (let round = 1; round <= Number(values.rounds); round++) {
      for (const which of round % 2 === 1 ? (['ours', 'crawlee'] as const) : (['crawlee', 'ours'] as const)) {
        graph.resetCounts();
        const r = await runChild(which, graph.seeds, concurrency);
        const pages = graph.pageRequests();
        const requests = [...pages.values()].reduce((a, b) => a + b, 0);
        rows.push({
          crawler: which, round, ms: Math.round(r.ms), pagesPerSec: Math.round((r.pagesDone / r.ms) * 1000 * 10) / 10, requests, distinctPages: pages.size,
          twice: [...pages.values()].filter((n) => n > 1).length, offSite: graph.offSiteRequests(), resources: graph.resourceRequests(),
          expectedMissing: [...expected.keys()].filter((k) => !pages.has(k)).length,
        });
        process.stderr.write(`${JSON.stringify(rows[rows.length - 1])}\n`);
      }
    }
  } finally {
    await graph.close();
  }
  const best = (c: string) => Math.max(...rows.filter((r) => r.crawler === c).map((r) => r.pagesPerSec));
  process.stdout.write(`${JSON.stringify({ expectedPages: expected.size, concurrency, rows, ratio: Math.round((best('ours') / best('crawlee')) * 100) / 100 }, null, 1)}\n`);
}

await main();
