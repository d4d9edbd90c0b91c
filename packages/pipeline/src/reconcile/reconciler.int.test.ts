/**
 * The reconciler against real Redis and Postgres: links whose jobs were lost (Redis emptied) or died get a job back,
 * once, with the right id and delay; links carried by a live job are left alone.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { ROUTE_QUEUE, routeJobId, deleteRedisPrefix } from '@crawler/queue';
import { startTestServer, staticArticle, type TestServer } from '@crawler/testkit';
import { startE2e, REDIS_URL, type E2eCrawler } from '../__fixtures__/e2e.js';
import { ReconcileLoop } from './reconciler.js';
import { ManualClock, type Logger } from '@crawler/core';

let crawler: E2eCrawler | undefined;
let server: TestServer | undefined;

afterEach(async () => {
  await crawler?.cleanup();
  await server?.close();
  crawler = undefined;
  server = undefined;
});

async function forgetJobs(c: E2eCrawler): Promise<void> {
  // Redis lost its data: every key of this crawler's queues goes.
  const r = new Redis(REDIS_URL);
  try {
    await deleteRedisPrefix(r, c.prefix);
  } finally {
    r.disconnect();
  }
}

describe('reconcileLinks', () => {
  it('gives links whose jobs Redis lost their job back, once, and the crawl then completes', async () => {
    server = await startTestServer(Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`/r/${i}`, { body: staticArticle({ title: `R ${i}` }) }])));
    crawler = await startE2e('reconcile_lost', { ROBOTS_ENABLED: 'false', FETCHERS: 'simple_http:4', RECONCILE_INTERVAL_MS: '0' });
    const { accepted } = await crawler.runtime.enqueue(Array.from({ length: 5 }, (_, i) => server!.url(`/r/${i}`)));
    // One link mid-crawl (fetching with simple_http), one paused for ten more minutes: their jobs go too.
    await crawler.db.prisma.link.update({ where: { id: accepted[1]!.linkId }, data: { status: 'fetching', fetcher: 'simple_http' } });
    const pausedUntil = new Date(Date.now() + 10 * 60_000);
    // Paused after simple_http was blocked: its rebuilt resume must not go back to simple_http.
    await crawler.db.prisma.link.update({ where: { id: accepted[2]!.linkId }, data: { status: 'paused', pausedUntil, fetcher: 'simple_http', lastErrorType: 'blocked_403' } });
    await forgetJobs(crawler);
    expect((await crawler.runtime.counts()).waiting).toBe(0);

    // Within the grace period nothing is touched: those links may be between two queues.
    expect(await crawler.runtime.reconcile({ graceMs: 60_000 })).toMatchObject({ scanned: 0, requeued: {} });

    const first = await crawler.runtime.reconcile({ graceMs: 0 });
    expect(first).toMatchObject({ scanned: 5, alive: 0, requeued: { queued: 3, fetching: 1, paused: 1 }, nextGeneration: 0, pausedDelayed: 1 });
    // No worker runs yet: the four ready route jobs wait on a queue nobody serves, and the pass says so.
    expect(first.unserved).toEqual([{ queue: ROUTE_QUEUE, shard: 0, label: ROUTE_QUEUE, ready: 4 }]);
    const counts = await crawler.runtime.counts();
    expect(counts.waiting + counts.delayed).toBe(5);
    expect(counts.delayed).toBe(1);
    const paused = await crawler.runtime.queues.routeQueue().getJob(routeJobId(accepted[2]!.linkId, 0));
    expect(paused!.opts.delay).toBeGreaterThan(9 * 60_000);
    expect(paused!.data).toMatchObject({ nextFetcher: 'playwright_stealth', blockedFetcher: 'simple_http' });

    // Idempotent: a second pass finds every link carried by its live job.
    expect(await crawler.runtime.reconcile({ graceMs: 0 })).toMatchObject({ scanned: 5, alive: 5, requeued: {} });
    const after = await crawler.runtime.counts();
    expect(after.waiting + after.delayed).toBe(5);

    crawler.runtime.startWorkers();
    await crawler.runtime.waitUntilIdle();
    expect(await crawler.db.prisma.link.count({ where: { status: 'done' } })).toBe(4);
    expect(await crawler.db.prisma.link.findUniqueOrThrow({ where: { id: accepted[2]!.linkId } })).toMatchObject({ status: 'paused' });
    expect(server.hits()).toBe(4);
    expect((await crawler.runtime.reconcile({ graceMs: 0 })).unserved).toEqual([]);
  }, 60_000);

  it('a rebuilt job keeps the priority its producer gave the link', async () => {
    server = await startTestServer({ '/p/a': { body: staticArticle({ title: 'A' }) }, '/p/b': { body: staticArticle({ title: 'B' }) } });
    crawler = await startE2e('reconcile_priority', { ROBOTS_ENABLED: 'false', FETCHERS: 'simple_http:1', RECONCILE_INTERVAL_MS: '0' });
    const urgent = await crawler.runtime.enqueue([server.url('/p/a')], { priority: 3 });
    const plain = await crawler.runtime.enqueue([server.url('/p/b')]);
    await forgetJobs(crawler);
    expect(await crawler.runtime.reconcile({ graceMs: 0 })).toMatchObject({ scanned: 2, requeued: { queued: 2 } });
    const queue = crawler.runtime.queues.routeQueue();
    const rebuilt = await queue.getJob(routeJobId(urgent.accepted[0]!.linkId, 0));
    expect(rebuilt!.opts.priority).toBe(3);
    expect(rebuilt!.data.priority).toBe(3);
    const other = await queue.getJob(routeJobId(plain.accepted[0]!.linkId, 0));
    expect(other!.opts.priority ?? 0).toBe(0);
    expect(other!.data.priority).toBeUndefined();
  }, 60_000);

  it('moves a link whose job died to the next generation; the stale job id is never reused', async () => {
    crawler = await startE2e('reconcile_dead', { ROBOTS_ENABLED: 'false', FETCHERS: 'simple_http:1', RECONCILE_INTERVAL_MS: '0' });
    const { accepted } = await crawler.runtime.enqueue(['https://dead.example/a']);
    const linkId = accepted[0]!.linkId;
    // The route job fails for good (as if Postgres had been away for all its tries).
    const queue = crawler.runtime.queues.routeQueue();
    const worker = new Worker(ROUTE_QUEUE, async () => Promise.reject(new Error('boom')), { connection: crawler.runtime.redis, prefix: crawler.prefix, autorun: false });
    const failed = new Promise((r) => worker.on('failed', (j) => j?.attemptsMade === (j?.opts.attempts ?? 1) && r(null)));
    await queue.remove(routeJobId(linkId, 0));
    await queue.add('route', { linkId, url: 'https://dead.example/a', generation: 0, reason: 'enqueue' }, { jobId: routeJobId(linkId, 0), attempts: 1 });
    void worker.run();
    await failed;
    await worker.close();
    expect(await queue.getJobState(routeJobId(linkId, 0))).toBe('failed');

    const report = await crawler.runtime.reconcile({ graceMs: 0 });
    expect(report).toMatchObject({ requeued: { queued: 1 }, nextGeneration: 1 });
    expect(await crawler.db.prisma.link.findUniqueOrThrow({ where: { id: linkId } })).toMatchObject({ generation: 1, status: 'queued' });
    expect(await queue.getJobState(routeJobId(linkId, 1))).toBe('waiting');
    expect(await crawler.runtime.reconcile({ graceMs: 0 })).toMatchObject({ alive: 1, requeued: {}, nextGeneration: 0 });
  }, 60_000);

  it('a link whose jobs keep dying is rescued RECONCILE_MAX_RESCUES times, then fails with job_lost', async () => {
    crawler = await startE2e('reconcile_poison', { ROBOTS_ENABLED: 'false', FETCHERS: 'simple_http:1', RECONCILE_INTERVAL_MS: '0', RECONCILE_MAX_RESCUES: '2' });
    const { accepted } = await crawler.runtime.enqueue(['https://poison.example/a']);
    const linkId = accepted[0]!.linkId;
    const queue = crawler.runtime.queues.routeQueue();
    // Every route job of this link dies (as a worker killed by the page would leave it: failed, the link unfinished).
    const killJob = async (generation: number): Promise<void> => {
      const worker = new Worker(ROUTE_QUEUE, async () => Promise.reject(new Error('job stalled more than allowable limit')), {
        connection: crawler!.runtime.redis, prefix: crawler!.prefix, autorun: false,
      });
      const failed = new Promise((r) => worker.on('failed', (j) => j?.attemptsMade === (j?.opts.attempts ?? 1) && r(null)));
      await queue.remove(routeJobId(linkId, generation));
      await queue.add('route', { linkId, url: 'https://poison.example/a', generation, reason: 'enqueue' }, { jobId: routeJobId(linkId, generation), attempts: 1 });
      void worker.run();
      await failed;
      await worker.close();
    };
    for (const generation of [0, 1]) {
      await killJob(generation);
      expect(await crawler.runtime.reconcile({ graceMs: 0 })).toMatchObject({ requeued: { queued: 1 }, nextGeneration: 1, lost: 0 });
      expect(await crawler.db.prisma.link.findUniqueOrThrow({ where: { id: linkId } })).toMatchObject({ generation: generation + 1, status: 'queued' });
    }
    await killJob(2);
    expect(await crawler.runtime.reconcile({ graceMs: 0 })).toMatchObject({ requeued: {}, nextGeneration: 0, lost: 1 });
    const link = await crawler.db.prisma.link.findUniqueOrThrow({ where: { id: linkId } });
    expect(link).toMatchObject({ status: 'failed', lastErrorType: 'job_lost', generation: 2, rescues: 2 });
    expect(link.lastError).toContain('died 3 times');
    // Settled: later passes leave it alone.
    expect(await crawler.runtime.reconcile({ graceMs: 0 })).toMatchObject({ scanned: 0, lost: 0 });
  }, 60_000);
});

describe('ReconcileLoop', () => {
  it('warns of a queue whose jobs wait with no worker connected, but not on its first pass, while this process\'s workers connect', async () => {
    server = await startTestServer({ '/u/a': { body: staticArticle({ title: 'U' }) } });
    crawler = await startE2e('reconcile_unserved', { ROBOTS_ENABLED: 'false', FETCHERS: 'simple_http:1', RECONCILE_INTERVAL_MS: '0' });
    await crawler.runtime.enqueue([server.url('/u/a')]);
    const warnings: string[] = [];
    const at = (into: string[] | null) => (a: unknown, b?: unknown) => void into?.push(String(typeof a === 'string' ? a : b));
    const logger: Logger = { debug: at(null), info: at(null), warn: at(warnings), error: at(warnings), child: () => logger };
    const loop = new ReconcileLoop({
      links: crawler.runtime.linkStore, queues: crawler.runtime.queues, clock: new ManualClock(Date.now()), logger,
      settings: { graceMs: 60_000, batchSize: 100 }, queueNames: crawler.runtime.queueNames(),
      redis: crawler.runtime.redis, leaseKey: `${crawler.prefix}:test-reconcile-lease`, intervalMs: 0, unservedConfirmMs: 50,
    });
    try {
      expect((await loop.runOnce())?.unserved).toHaveLength(1);
      expect(warnings).toEqual([]);
      await loop.runOnce();
      expect(warnings).toEqual([expect.stringMatching(/^queue unserved: 1 jobs wait on route and no worker is connected to it: start a router/)]);
      // Once a worker serves the queue, the job runs and nothing is said.
      crawler.runtime.startWorkers();
      await crawler.runtime.waitUntilIdle();
      await loop.runOnce();
      expect(warnings).toHaveLength(1);
    } finally {
      await loop.stop();
    }
  }, 60_000);
});
