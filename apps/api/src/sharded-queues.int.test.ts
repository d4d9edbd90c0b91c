/** The API over sharded queues: POST /links puts each link on its domain's shard; Bull Board and /metrics show every shard. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { LinkStore } from '@crawler/db';
import { JobQueues, ROUTE_QUEUE, createRedisConnection, deleteRedisPrefix, fetchQueueName } from '@crawler/queue';
import { createPipelineMetrics } from '@crawler/telemetry';
import { createServer } from './server.js';

const PREFIX = `{crawler_test_api_shards_${process.pid}}`;
const QUEUE_NAMES = [ROUTE_QUEUE, fetchQueueName('simple_http')];
const AUTH = { user: 'ops', password: 'sharded-board-secret' };
let db: TestDatabase;
let redis: Redis;
let queues: JobQueues;
let app: FastifyInstance;

beforeAll(async () => {
  db = await createTestDatabase('api_shards');
  redis = createRedisConnection(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'producer');
  queues = new JobQueues({ connection: redis, prefix: PREFIX, shards: 3 });
  app = await createServer({ prisma: db.prisma, redis, queues, links: new LinkStore(db.prisma), queueNames: QUEUE_NAMES, metrics: createPipelineMetrics(), bullBoard: AUTH, apiKeys: null });
}, 60_000);

afterAll(async () => {
  await app?.close();
  await queues?.obliterate(QUEUE_NAMES).catch(() => undefined);
  await queues?.close();
  for (const p of queues?.prefixes ?? []) await deleteRedisPrefix(redis, `${p}:`);
  redis?.disconnect();
  await db?.drop();
});

describe('the API with QUEUE_SHARDS=3', () => {
  it('enqueues each link on its shard, and shows every shard on the board and in /metrics', async () => {
    const urls = Array.from({ length: 30 }, (_, i) => `https://site${i}.example/story`);
    const res = await app.inject({ method: 'POST', url: '/links', payload: { urls } });
    expect(res.statusCode).toBe(202);
    const perShard = await Promise.all(queues.allShards().map((s) => queues.routeQueue(s).getWaitingCount()));
    expect(perShard.reduce((a, b) => a + b, 0)).toBe(30);
    expect(perShard.every((n) => n > 0)).toBe(true);
    for (const url of urls) expect((await queues.queueFor(ROUTE_QUEUE, url).getWaiting()).some((j) => j.data.url === url)).toBe(true);

    const auth = `Basic ${Buffer.from(`${AUTH.user}:${AUTH.password}`).toString('base64')}`;
    const board = await app.inject({ method: 'GET', url: '/admin/queues/api/queues', headers: { authorization: auth } });
    expect(board.statusCode).toBe(200);
    const names = (board.json() as { queues: Array<{ name: string }> }).queues.map((q) => q.name).sort();
    expect(names).toEqual(['s0/fetch-simple_http', 's0/route', 's1/fetch-simple_http', 's1/route', 's2/fetch-simple_http', 's2/route']);

    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    for (const [shard, n] of perShard.entries()) expect(metrics).toContain(`crawler_queue_jobs{queue="route@s${shard}",state="waiting"} ${n}`);
  });
});
