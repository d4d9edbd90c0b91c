/** The API's readiness against a Redis that fills up: a private redis-server (never the shared one) under maxmemory. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { LinkStore } from '@crawler/db';
import { JobQueues, ROUTE_QUEUE, createRedisConnection, fetchQueueName } from '@crawler/queue';
import { createPipelineMetrics } from '@crawler/telemetry';
import { createCrawlFrontier, loadConfig, reconcileLinks } from '@crawler/pipeline';
import { silentLogger, systemClock } from '@crawler/core';
import { startPrivateRedis, type PrivateRedis } from '@crawler/testkit';
import { createServer } from './server.js';

const PREFIX = '{crawler_test_api_ready}';
const QUEUE_NAMES = [ROUTE_QUEUE, fetchQueueName('simple_http')];

let db: TestDatabase;
let privateRedis: PrivateRedis;
let redis: Redis;
let queues: JobQueues;
let app: FastifyInstance;
let crawls: ReturnType<typeof createCrawlFrontier>;

beforeAll(async () => {
  [db, privateRedis] = await Promise.all([createTestDatabase('api_readiness'), startPrivateRedis()]);
  redis = createRedisConnection(privateRedis.url, 'producer');
  queues = new JobQueues({ connection: redis, prefix: PREFIX });
  crawls = createCrawlFrontier({ prisma: db.prisma, queues, redis, config: loadConfig({ DATABASE_URL: db.url, QUEUE_PREFIX: PREFIX }), logger: silentLogger });
  app = await createServer({ prisma: db.prisma, redis, queues, links: new LinkStore(db.prisma), queueNames: QUEUE_NAMES, metrics: createPipelineMetrics(), bullBoard: null, apiKeys: null, crawls });
}, 60_000);

afterAll(async () => {
  await app?.close();
  await crawls?.close();
  await queues?.close();
  redis?.disconnect();
  await privateRedis?.close();
  await db?.drop();
});

/** One reconcile pass with no grace: what the router's reconciler does within its interval. */
async function reconcile(): Promise<void> {
  await reconcileLinks({ links: new LinkStore(db.prisma), queues, clock: systemClock, logger: silentLogger, settings: { graceMs: 0, batchSize: 100 } });
}

describe('API readiness', () => {
  it('is not ready while Redis is full (PING answers, POST /links cannot enqueue), and stays alive', async () => {
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    await redis.config('SET', 'maxmemory-policy', 'noeviction');
    await redis.config('SET', 'maxmemory', '2mb');
    try {
      await redis.eval("for i = 1, 400 do redis.call('SET', 'fill:' .. i, string.rep('x', 10000)) end", 0).catch(() => undefined);
      expect(await redis.ping()).toBe('PONG');
      // What a producer sees: its link is stored (Postgres is the truth), its job waits for the reconciler.
      const post = await app.inject({ method: 'POST', url: '/links', payload: { urls: ['https://full.example/a'] } });
      expect(post.statusCode).toBe(202);
      expect(post.json().accepted).toEqual([expect.objectContaining({ url: 'https://full.example/a', created: true, queued: false, deferred: true })]);
      expect(post.json().deferred.reason).toMatch(/OOM/);

      const ready = await app.inject({ method: 'GET', url: '/readyz' });
      expect([ready.statusCode, ready.json()]).toEqual([503, { status: 'unavailable', checks: { redis: 'fail', postgres: 'ok' } }]);
      // Liveness: restarting the API would not free Redis.
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);

      await redis.config('SET', 'maxmemory', '0');
      expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
      // The probe leaves nothing that outlives it.
      expect(await redis.pttl(`${PREFIX}:ready-probe`)).toBeGreaterThan(0);
      // Once Redis takes writes again, a reconcile pass gives the stored link its job.
      await reconcile();
      const id = post.json().accepted[0].id as string;
      expect(await queues.routeQueue().getJob(id)).toBeTruthy();
    } finally {
      await redis.config('SET', 'maxmemory', '0');
    }
  }, 60_000);

  it('stores posted links while Redis is down and answers 202 with them deferred; the reconciler queues them once it is back', async () => {
    await privateRedis.kill();
    let id: string;
    try {
      const post = await app.inject({ method: 'POST', url: '/links', payload: { urls: ['https://down.example/a', 'https://down.example/b', 'not a url'] } });
      // Before: a 503 once ioredis gave up (about 11 s), though both links were stored: the producer sent them again.
      expect(post.statusCode).toBe(202);
      const body = post.json();
      expect(body.accepted.map((a: { url: string; queued: boolean; deferred?: boolean }) => [a.url, a.queued, a.deferred])).toEqual([
        ['https://down.example/a', false, true],
        ['https://down.example/b', false, true],
      ]);
      expect(body.rejected).toHaveLength(1);
      expect(body.deferred.message).toMatch(/reconciler/);
      const stored = await db.prisma.link.findMany({ where: { url: { in: ['https://down.example/a', 'https://down.example/b'] } }, select: { status: true } });
      expect(stored.map((l) => l.status)).toEqual(['queued', 'queued']);
      id = body.accepted[0].id;
    } finally {
      await privateRedis.start();
    }
    await reconcile();
    expect(await queues.routeQueue().getJob(id)).toBeTruthy();
  }, 60_000);

  it('creates a crawl while Redis is down and answers 201 with its seeds deferred, not a 503 that a retry turns into a second crawl', async () => {
    await privateRedis.kill();
    let crawlId: string;
    try {
      const post = await app.inject({ method: 'POST', url: '/crawls', payload: { seeds: ['https://crawl-down.example/', 'https://crawl-down2.example/'] } });
      expect(post.statusCode).toBe(201);
      expect(post.json()).toMatchObject({ admitted: 2, deferred: { links: 2 } });
      crawlId = post.json().id;
      expect(await db.prisma.link.count({ where: { crawlId, status: 'queued' } })).toBe(2);
    } finally {
      await privateRedis.start();
    }
    await reconcile();
    const ids = (await db.prisma.link.findMany({ where: { crawlId }, select: { id: true } })).map((l) => l.id);
    for (const id of ids) expect(await queues.routeQueue().getJob(id)).toBeTruthy();
  }, 60_000);
});
