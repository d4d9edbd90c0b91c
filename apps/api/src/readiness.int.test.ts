/** The API's readiness against a Redis that fills up: a private redis-server (never the shared one) under maxmemory. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { LinkStore } from '@crawler/db';
import { JobQueues, ROUTE_QUEUE, createRedisConnection, fetchQueueName } from '@crawler/queue';
import { createPipelineMetrics } from '@crawler/telemetry';
import { startPrivateRedis, type PrivateRedis } from '@crawler/testkit';
import { createServer } from './server.js';

const PREFIX = '{crawler_test_api_ready}';
const QUEUE_NAMES = [ROUTE_QUEUE, fetchQueueName('simple_http')];

let db: TestDatabase;
let privateRedis: PrivateRedis;
let redis: Redis;
let queues: JobQueues;
let app: FastifyInstance;

beforeAll(async () => {
  [db, privateRedis] = await Promise.all([createTestDatabase('api_readiness'), startPrivateRedis()]);
  redis = createRedisConnection(privateRedis.url, 'producer');
  queues = new JobQueues({ connection: redis, prefix: PREFIX });
  app = await createServer({ prisma: db.prisma, redis, queues, links: new LinkStore(db.prisma), queueNames: QUEUE_NAMES, metrics: createPipelineMetrics(), bullBoard: null, apiKeys: null });
}, 60_000);

afterAll(async () => {
  await app?.close();
  await queues?.close();
  redis?.disconnect();
  await privateRedis?.close();
  await db?.drop();
});

describe('API readiness', () => {
  it('is not ready while Redis is full (PING answers, POST /links cannot enqueue), and stays alive', async () => {
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    await redis.config('SET', 'maxmemory-policy', 'noeviction');
    await redis.config('SET', 'maxmemory', '2mb');
    try {
      await redis.eval("for i = 1, 400 do redis.call('SET', 'fill:' .. i, string.rep('x', 10000)) end", 0).catch(() => undefined);
      expect(await redis.ping()).toBe('PONG');
      // What a producer sees: its links cannot be queued.
      const post = await app.inject({ method: 'POST', url: '/links', payload: { urls: ['https://full.example/a'] } });
      expect(post.statusCode).toBe(503);

      const ready = await app.inject({ method: 'GET', url: '/readyz' });
      expect([ready.statusCode, ready.json()]).toEqual([503, { status: 'unavailable', checks: { redis: 'fail', postgres: 'ok' } }]);
      // Liveness: restarting the API would not free Redis.
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);

      await redis.config('SET', 'maxmemory', '0');
      expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
      // The probe leaves nothing that outlives it.
      expect(await redis.pttl(`${PREFIX}:ready-probe`)).toBeGreaterThan(0);
    } finally {
      await redis.config('SET', 'maxmemory', '0');
    }
  }, 60_000);
});
