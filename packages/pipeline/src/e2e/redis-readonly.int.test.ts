/**
 * A Redis the crawler is connected to turns into a replica under it (PRIVATE redis-servers on free loopback ports; the
 * machine's shared Redis is never touched). Every connection still open to it then gets `READONLY You can't write
 * against a read only replica` for every write: the workers must drop it and connect again, without a restart, and
 * every link must end done (Postgres is the arbiter; Redis work lost with a wiped node is rebuilt by the reconciler).
 *  - behind a managed endpoint (a DNS name, a cloud primary endpoint; here a TCP relay): the replica is promoted, the
 *    old master demoted under it, and the endpoint moved to the new master; open connections stay on the old one.
 *  - in place: the node is made a replica of another (empty) instance, which wipes it, then master again.
 * Postgres: the shared server, a database per test.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { startPrivateRedis, startTcpEndpoint, type PrivateRedis, type TcpEndpoint } from '@crawler/testkit';
import { startSimSite, type SimSite } from '@crawler/sim-web';
import type { Logger } from '@crawler/core';
import { loadConfig } from '../config/crawler-config.js';
import { createRuntime } from '../runtime/create-runtime.js';
import type { CrawlerRuntime } from '../runtime/crawler-runtime.js';
import { waitFor } from '../__fixtures__/e2e.js';

const PER_SITE = 150;

let sites: SimSite[] = [];
const redises: PrivateRedis[] = [];
const admins: Redis[] = [];
let endpoint: TcpEndpoint | undefined;
let db: TestDatabase | undefined;
let runtime: CrawlerRuntime | undefined;

beforeAll(async () => {
  sites = await Promise.all([0, 1].map((i) => startSimSite({ kind: 'static', name: `readonly-${i}` }, { host: `127.0.62.${i + 1}`, index: i })));
}, 60_000);

afterEach(async () => {
  await runtime?.close({ drainTimeoutMs: 2_000 });
  runtime = undefined;
  await endpoint?.close();
  endpoint = undefined;
  for (const a of admins.splice(0)) a.disconnect();
  for (const r of redises.splice(0)) await r.close();
  await db?.drop().catch(() => undefined);
  db = undefined;
});

afterAll(async () => {
  await Promise.all(sites.map((s) => s.close()));
});

async function privateRedis(): Promise<{ redis: PrivateRedis; admin: Redis }> {
  const redis = await startPrivateRedis();
  redises.push(redis);
  const admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  admins.push(admin);
  return { redis, admin };
}

async function crawler(label: string, redisUrl: string): Promise<{ runtime: CrawlerRuntime; urls: string[]; done: () => Promise<number> }> {
  db = await createTestDatabase(`readonly_${label}`);
  const config = loadConfig({
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: `{crawler_readonly_${label}}`,
    ALLOW_PRIVATE_NETWORKS: 'true',
    FETCHERS: 'simple_http:8',
    ROBOTS_ENABLED: 'false',
    DOMAIN_MIN_DELAY_MS: '20',
    DOMAIN_MAX_CONCURRENCY: '2',
    LOCK_DURATION_MS: '5000',
    STALLED_INTERVAL_MS: '2000',
    RECONCILE_INTERVAL_MS: '3000',
    RECONCILE_GRACE_MS: '5000',
    INFRA_RETRY_MAX_MS: '2000',
    LOG_LEVEL: 'silent',
  });
  const silent: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {}, child: () => silent };
  runtime = createRuntime(config, { prisma: db.prisma, logger: silent });
  const urls = sites.flatMap((s) => s.urls(PER_SITE, 1 + label.length * 1000));
  expect((await runtime.enqueue(urls)).accepted).toHaveLength(urls.length);
  const prisma = db.prisma;
  return { runtime, urls, done: () => prisma.link.count({ where: { status: 'done' } }) };
}

/** Wait until every link is done (bounded: a fleet stuck on READONLY never gets there), and print when work resumed. */
async function expectAllDone(what: string, c: { urls: string[]; done: () => Promise<number> }, faultAt: number, doneAtFault: number): Promise<void> {
  let resumedAt = 0;
  await waitFor(
    async () => {
      const n = await c.done();
      if (!resumedAt && n > doneAtFault + 16) resumedAt = Date.now();
      return n === c.urls.length || null;
    },
    'every link done after the node turned replica',
    120_000,
  );
  const allAt = Date.now();
  const requests = sites.flatMap((s) => s.requestLog().map((r) => r.atMs)).sort((a, b) => a - b);
  const gap = requests.reduce((g, t, i) => (i > 0 && t > faultAt ? Math.max(g, t - requests[i - 1]!) : g), 0);
  console.log(
    `${what}: ${c.urls.length} pages, ${doneAtFault} done at the fault; more links done than were in flight ${((resumedAt - faultAt) / 1000).toFixed(1)} s after it, ` +
      `all done ${((allAt - faultAt) / 1000).toFixed(1)} s after it; longest pause between page requests ${(gap / 1000).toFixed(1)} s`,
  );
  expect(await db!.prisma.link.groupBy({ by: ['status'], _count: true })).toEqual([{ status: 'done', _count: c.urls.length }]);
}

async function waitForLink(admin: Redis): Promise<void> {
  await waitFor(async () => (await admin.info('replication')).includes('master_link_status:up') || null, 'the replica to sync', 30_000);
}

describe('a Redis that turns replica under open connections (READONLY)', () => {
  it('behind a managed endpoint: the endpoint moves to the promoted replica, the workers reconnect to it, every link done', async () => {
    const a = await privateRedis();
    const b = await privateRedis();
    await b.admin.replicaof('127.0.0.1', a.redis.port);
    await waitForLink(b.admin);
    endpoint = await startTcpEndpoint(a.redis.port);
    const c = await crawler('endpoint', `redis://127.0.0.1:${endpoint.port}`);
    c.runtime.startWorkers();
    await waitFor(async () => (await c.done()) >= c.urls.length / 4 || null, 'a quarter of the crawl', 120_000);

    // The failover a managed service does: promote the replica, demote the old master under it, move the endpoint.
    const doneAtFault = await c.done();
    const faultAt = Date.now();
    await b.admin.replicaof('NO', 'ONE');
    await a.admin.replicaof('127.0.0.1', b.redis.port);
    endpoint.retarget(b.redis.port);
    await waitForLink(a.admin);
    expect(await a.admin.set('probe', '1').catch((e: Error) => e.message)).toMatch(/^READONLY/);

    await expectAllDone('READONLY behind an endpoint', c, faultAt, doneAtFault);
  }, 300_000);

  it('in place: the node is made a replica of an empty instance (wiped), then master again; every link done', async () => {
    const a = await privateRedis();
    const empty = await privateRedis();
    const c = await crawler('inplace', a.redis.url);
    c.runtime.startWorkers();
    await waitFor(async () => (await c.done()) >= c.urls.length / 4 || null, 'a quarter of the crawl', 120_000);

    const doneAtFault = await c.done();
    const faultAt = Date.now();
    await a.admin.replicaof('127.0.0.1', empty.redis.port);
    await waitForLink(a.admin);
    expect(await a.admin.set('probe', '1').catch((e: Error) => e.message)).toMatch(/^READONLY/);
    await new Promise((r) => setTimeout(r, 3_000));
    await a.admin.replicaof('NO', 'ONE');

    await expectAllDone('READONLY in place', c, faultAt, doneAtFault);
  }, 300_000);
});
