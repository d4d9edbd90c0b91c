/**
 * The crawler rides out its own infrastructure failing, each fault on its own, on PRIVATE Redis and Postgres
 * instances started here (the machine's shared services are never touched): Redis restarted empty, Postgres stopped
 * and started again, a worker process SIGKILLed. Every time: all links done, none failed, one page per link, and the
 * attempt log agrees with the links.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import type { PrismaClient } from '@crawler/db';
import { startPrivatePostgres, startPrivateRedis, startTestServer, staticArticle, type PrivatePostgres, type PrivateRedis, type TestServer } from '@crawler/testkit';
import { loadConfig, type CrawlerConfig } from '../config/crawler-config.js';
import { createRuntime } from '../runtime/create-runtime.js';
import type { CrawlerRuntime } from '../runtime/crawler-runtime.js';
import { FAULT_ENV, waitFor } from '../__fixtures__/e2e.js';

const CHILD = fileURLToPath(new URL('../__fixtures__/crawler-child.ts', import.meta.url));
const PAGES = 30;

let redis: PrivateRedis | undefined;
let pg: PrivatePostgres | undefined;
let server: TestServer | undefined;
let db: TestDatabase | undefined;
let runtime: CrawlerRuntime | undefined;
let child: ChildProcess | undefined;

beforeAll(async () => {
  [redis, pg] = await Promise.all([startPrivateRedis(), startPrivatePostgres()]);
  // Slow enough pages that the fault lands mid-crawl.
  server = await startTestServer(Object.fromEntries(Array.from({ length: PAGES }, (_, i) => [`/f/${i}`, { body: staticArticle({ title: `Fault ${i}` }), delayMs: 400 }])));
}, 120_000);

afterEach(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await runtime?.close({ drainTimeoutMs: 2_000 });
  await db?.drop().catch(() => undefined);
  runtime = undefined;
  db = undefined;
});

afterAll(async () => {
  await server?.close();
  await redis?.close();
  await pg?.close();
});

let seq = 0;
async function crawler(label: string): Promise<{ config: CrawlerConfig; runtime: CrawlerRuntime; prisma: PrismaClient; urls: string[] }> {
  db = await createTestDatabase(`faults_${label}`, { serverUrl: pg!.url });
  seq += 1;
  const config = loadConfig({
    DATABASE_URL: db.url,
    REDIS_URL: redis!.url,
    QUEUE_PREFIX: `{faults_${label}_${seq}}`,
    ...FAULT_ENV,
    LOG_LEVEL: 'silent',
  });
  runtime = createRuntime(config, { prisma: db.prisma });
  const urls = Array.from({ length: PAGES }, (_, i) => server!.url(`/f/${i}`));
  return { config, runtime, prisma: db.prisma, urls };
}

const doneCount = (prisma: PrismaClient) => prisma.link.count({ where: { status: 'done' } });

/** Every link done, one page each, every done link with its successful attempt, attempt_count = attempts logged. */
async function expectLogAndLinksAgree(prisma: PrismaClient): Promise<void> {
  expect(await prisma.link.groupBy({ by: ['status'], _count: true })).toEqual([{ status: 'done', _count: PAGES }]);
  const pages = await prisma.fetchedContent.groupBy({ by: ['linkId'], _count: true });
  expect(pages).toHaveLength(PAGES);
  expect(pages.filter((p) => p._count !== 1)).toEqual([]);
  expect(await prisma.link.count({ where: { attempts: { none: { success: true } } } })).toBe(0);
  const logged = await prisma.fetcherAttempt.count({ where: { linkId: { not: null } } });
  const counted = await prisma.link.aggregate({ _sum: { attemptCount: true } });
  expect(logged).toBe(counted._sum.attemptCount);
  expect(await prisma.fetcherAttempt.count({ where: { linkId: { not: null }, success: false } })).toBe(0);
}

describe('faults on private Redis and Postgres', () => {
  it('Redis restarted empty mid-crawl: the lost work is rebuilt from Postgres and the crawl completes', async () => {
    const c = await crawler('redis');
    await c.runtime.enqueue(c.urls);
    c.runtime.startWorkers();
    await waitFor(async () => (await doneCount(c.prisma)) >= 4 || null, 'a few links done', 60_000);
    await redis!.restartEmpty();
    expect(await doneCount(c.prisma)).toBeLessThan(PAGES);
    await c.runtime.waitUntilIdle({ pollMs: 200 });
    await expectLogAndLinksAgree(c.prisma);
  }, 150_000);

  it('Postgres stopped for 5 s mid-crawl: jobs wait, --until-idle waits, nothing fails, the crawl completes', async () => {
    const c = await crawler('postgres');
    await c.runtime.enqueue(c.urls);
    c.runtime.startWorkers();
    // Started before the outage: it must ride it out, not reject.
    const idle = c.runtime.waitUntilIdle({ pollMs: 200 });
    await waitFor(async () => (await doneCount(c.prisma)) >= 4 || null, 'a few links done', 60_000);
    await pg!.stop();
    await new Promise((r) => setTimeout(r, 5_000));
    await pg!.start();
    await idle;
    await expectLogAndLinksAgree(c.prisma);
  }, 150_000);

  it('a worker process SIGKILLed mid-crawl: its jobs are taken over and every done link has its attempt', async () => {
    const c = await crawler('sigkill');
    await c.runtime.enqueue(c.urls);
    child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
      env: {
        ...process.env, DATABASE_URL: c.config.databaseUrl, REDIS_URL: c.config.redisUrl, QUEUE_PREFIX: c.config.queuePrefix, ALLOW_PRIVATE_NETWORKS: 'true',
        FETCHERS: 'simple_http:4', ROBOTS_ENABLED: 'false', DOMAIN_MIN_DELAY_MS: '0', DOMAIN_MAX_CONCURRENCY: '16', LOCK_DURATION_MS: '3000', STALLED_INTERVAL_MS: '1000', LOG_LEVEL: 'silent',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await new Promise<void>((resolve, reject) => {
      let err = '';
      child!.stderr!.on('data', (d) => (err += String(d)));
      child!.stdout!.on('data', (d) => String(d).includes('ready') && resolve());
      child!.once('exit', (code) => reject(new Error(`child exited early (${code}): ${err}`)));
    });
    await waitFor(async () => (await doneCount(c.prisma)) >= 4 || null, 'the child to finish a few links', 45_000);
    expect((await c.runtime.counts()).active).toBeGreaterThan(0);
    child.kill('SIGKILL');
    await new Promise((r) => child!.once('exit', r));
    expect(await doneCount(c.prisma)).toBeLessThan(PAGES);
    c.runtime.startWorkers();
    await c.runtime.waitUntilIdle({ pollMs: 200 });
    await expectLogAndLinksAgree(c.prisma);
  }, 150_000);
});
