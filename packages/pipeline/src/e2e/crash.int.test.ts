/**
 * A worker process SIGKILLed in the middle of a crawl loses no link: BullMQ's stalled-job recovery hands its jobs to
 * the next worker, and the processors are idempotent.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestServer, staticArticle, type TestServer } from '@crawler/testkit';
import { startE2e, waitFor, type E2eCrawler } from '../__fixtures__/e2e.js';

const CHILD = fileURLToPath(new URL('../__fixtures__/crawler-child.ts', import.meta.url));
const PAGES = 6;

let crawler: E2eCrawler | undefined;
let server: TestServer | undefined;
let child: ChildProcess | undefined;

afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await crawler?.cleanup();
  await server?.close();
});

function startChild(env: Record<string, string>): Promise<ChildProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', CHILD], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr!.on('data', (d) => (err += String(d)));
  return new Promise((resolve, reject) => {
    proc.stdout!.on('data', (d) => String(d).includes('ready') && resolve(proc));
    proc.on('exit', (code) => reject(new Error(`child exited early (${code}): ${err}`)));
  });
}

describe('crash recovery', () => {
  it('a worker SIGKILLed mid-crawl loses no link: another worker completes every one', async () => {
    // Slow pages keep jobs in flight long enough to kill the worker while it holds them.
    const routes = Object.fromEntries(Array.from({ length: PAGES }, (_, i) => [`/slow/${i}`, { body: staticArticle({ title: `Slow ${i}` }), delayMs: 1_200 }]));
    server = await startTestServer(routes);
    const env = {
      ROBOTS_ENABLED: 'false',
      FETCHERS: 'simple_http:4',
      LOCK_DURATION_MS: '2000',
      STALLED_INTERVAL_MS: '1000',
      DOMAIN_MAX_CONCURRENCY: '16',
    };
    crawler = await startE2e('crash', env);
    await crawler.runtime.enqueue(Array.from({ length: PAGES }, (_, i) => server!.url(`/slow/${i}`)));

    child = await startChild({
      DATABASE_URL: crawler.config.databaseUrl,
      REDIS_URL: crawler.config.redisUrl,
      QUEUE_PREFIX: crawler.config.queuePrefix,
      ALLOW_PRIVATE_NETWORKS: 'true',
      DOMAIN_MIN_DELAY_MS: '0',
      ...env,
    });
    await waitFor(async () => server!.requests.length >= 2, 'the child to start requests');
    const active = (await crawler.runtime.counts()).active;
    child.kill('SIGKILL');
    await new Promise((r) => child!.once('exit', r));
    expect(active).toBeGreaterThan(0);
    expect(await crawler.db.prisma.link.count({ where: { status: 'done' } })).toBeLessThan(PAGES);

    // A fresh worker (here: in the test process) recovers the stalled jobs.
    crawler.runtime.startWorkers();
    const done = await waitFor(async () => {
      const n = await crawler!.db.prisma.link.count({ where: { status: 'done' } });
      return n === PAGES ? n : null;
    }, 'every link to complete', 45_000);
    expect(done).toBe(PAGES);
    expect(await crawler.db.prisma.link.count({ where: { status: { not: 'done' } } })).toBe(0);
    const contents = await crawler.db.prisma.fetchedContent.groupBy({ by: ['linkId'], _count: true });
    expect(contents).toHaveLength(PAGES);
    // The log and the links agree: no link is done without its successful attempt (they are one write).
    expect(await crawler.db.prisma.link.count({ where: { status: 'done', attempts: { none: { success: true } } } })).toBe(0);
  }, 90_000);

  it("a SIGKILLed worker's politeness slots are leased as long as its job locks: free by the time its jobs come back", async () => {
    await crawler?.cleanup();
    await server?.close();
    const routes = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`/k/${i}`, { body: staticArticle({ title: `K ${i}` }), delayMs: 3_000 }]));
    server = await startTestServer(routes);
    // Every slot of the domain is the killed worker's: the next worker can fetch nothing until they are free.
    const env = { ROBOTS_ENABLED: 'false', FETCHERS: 'simple_http:2', DOMAIN_MAX_CONCURRENCY: '2', LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '1000' };
    crawler = await startE2e('crash_slots', env);
    await crawler.runtime.enqueue(Array.from({ length: 4 }, (_, i) => server!.url(`/k/${i}`)));
    child = await startChild({
      DATABASE_URL: crawler.config.databaseUrl,
      REDIS_URL: crawler.config.redisUrl,
      QUEUE_PREFIX: crawler.config.queuePrefix,
      ALLOW_PRIVATE_NETWORKS: 'true',
      DOMAIN_MIN_DELAY_MS: '0',
      ...env,
    });
    await waitFor(async () => server!.requests.length >= 2, 'the child to hold both slots');
    child.kill('SIGKILL');
    await new Promise((r) => child!.once('exit', r));

    // The dead worker's slots, each scored by when it expires without a heartbeat: at most one job lock away.
    const redis = new Redis(crawler.config.redisUrl);
    try {
      const slots = await redis.zrange(`${crawler.config.queuePrefix}:polite:slots:127.0.0.1`, 0, -1, 'WITHSCORES');
      const [sec, usec] = await redis.time();
      const now = Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
      const expiries = slots.filter((_, i) => i % 2 === 1).map(Number);
      expect(expiries).toHaveLength(2);
      for (const expiry of expiries) expect(expiry - now).toBeLessThanOrEqual(2_000);
    } finally {
      redis.disconnect();
    }
    crawler.runtime.startWorkers();
    await waitFor(async () => (await crawler!.db.prisma.link.count({ where: { status: 'done' } })) === 4 || null, 'every link to complete', 45_000);
  }, 90_000);

  it('SIGTERM drains in-flight jobs, writes their attempts and exits cleanly; the rest wait for the next worker', async () => {
    await crawler?.cleanup();
    await server?.close();
    const routes = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`/t/${i}`, { body: staticArticle({ title: `T ${i}` }), delayMs: 800 }]));
    server = await startTestServer(routes);
    const env = { ROBOTS_ENABLED: 'false', FETCHERS: 'simple_http:2', ROUTER_CONCURRENCY: '2', DOMAIN_MAX_CONCURRENCY: '16' };
    crawler = await startE2e('sigterm', env);
    await crawler.runtime.enqueue(Array.from({ length: 4 }, (_, i) => server!.url(`/t/${i}`)));
    child = await startChild({
      DATABASE_URL: crawler.config.databaseUrl,
      REDIS_URL: crawler.config.redisUrl,
      QUEUE_PREFIX: crawler.config.queuePrefix,
      ALLOW_PRIVATE_NETWORKS: 'true',
      DOMAIN_MIN_DELAY_MS: '0',
      ...env,
    });
    // One link done means at least one attempt sits in the child's buffer (it flushes only every 10 minutes).
    await waitFor(async () => (await crawler!.db.prisma.link.count({ where: { status: 'done' } })) >= 1 || null, 'a first link done');
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((r) => child!.once('exit', r));
    expect(code).toBe(0);
    // Nothing was left mid-job, and every attempt made was written despite the huge flush interval.
    expect((await crawler.runtime.counts()).active).toBe(0);
    const attempts = await crawler.db.prisma.fetcherAttempt.count({ where: { linkId: { not: null } } });
    const counted = await crawler.db.prisma.link.aggregate({ _sum: { attemptCount: true } });
    expect(attempts).toBeGreaterThanOrEqual(1);
    expect(attempts).toBe(counted._sum.attemptCount ?? 0);

    crawler.runtime.startWorkers();
    await waitFor(async () => (await crawler!.db.prisma.link.count({ where: { status: 'done' } })) === 4 || null, 'the rest to complete', 45_000);
  }, 90_000);
});
