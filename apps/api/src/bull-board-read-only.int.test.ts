/**
 * Bull Board's actions against real Redis: read-only by default (a deleted delayed job is a backoff undone, a cleaned
 * queue is work dropped until the reconciler runs), allowed only when BULL_BOARD_READ_ONLY=false.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { LinkStore } from '@crawler/db';
import { JobQueues, ROUTE_QUEUE, createRedisConnection, deleteRedisPrefix, fetchQueueName } from '@crawler/queue';
import { createPipelineMetrics } from '@crawler/telemetry';
import { REDIS_URL } from '@crawler/testkit';
import { parseApiEnv } from './env.js';
import { createServer } from './server.js';

const PREFIX = `{crawler_test_api_board_ro_${process.pid}}`;
const QUEUE_NAMES = [ROUTE_QUEUE, fetchQueueName('simple_http')];
const USER = 'ops';
const PASSWORD = 'board-read-only-secret';
const AUTH_HEADER = { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` };
const PAUSED_LINK = '00000000-0000-4000-8000-0000000000c1';

let db: TestDatabase;
let redis: Redis;
let queues: JobQueues;
const servers: FastifyInstance[] = [];

beforeAll(async () => {
  db = await createTestDatabase('api_board_ro');
  redis = createRedisConnection(REDIS_URL, 'producer');
  queues = new JobQueues({ connection: redis, prefix: PREFIX });
});

afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  await queues.obliterate(QUEUE_NAMES).catch(() => undefined);
});

afterAll(async () => {
  await queues?.close();
  if (redis) {
    await deleteRedisPrefix(redis, PREFIX);
    redis.disconnect();
  }
  await db?.drop();
});

/** The API as main.ts builds it from these variables. */
async function serverWith(vars: Record<string, string>): Promise<FastifyInstance> {
  const env = parseApiEnv({ DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/unused', BULL_BOARD_USER: USER, BULL_BOARD_PASSWORD: PASSWORD, ...vars });
  const app = await createServer({ prisma: db.prisma, redis, queues, links: new LinkStore(db.prisma), queueNames: QUEUE_NAMES, metrics: createPipelineMetrics(), bullBoard: env.bullBoard, apiKeys: null });
  servers.push(app);
  return app;
}

/** A paused link's re-route: a delayed job, the backoff an operator could undo from the board. */
async function delayedRouteJob(): Promise<string> {
  await queues.enqueueRoute({ linkId: PAUSED_LINK, url: 'https://shop.example/blocked', generation: 1, reason: 'resume' }, { delayMs: 600_000 });
  const [job] = await queues.queue(ROUTE_QUEUE).getDelayed();
  return job!.id!;
}

const board = (app: FastifyInstance, url: string) => app.inject({ method: 'PUT', url: `/admin/queues/api/queues/${url}`, headers: AUTH_HEADER });

describe('Bull Board actions', () => {
  it('are refused by default: promote, clean and delete answer 405 and the delayed job keeps its wait', async () => {
    const app = await serverWith({});
    const id = await delayedRouteJob();
    const list = await app.inject({ method: 'GET', url: '/admin/queues/api/queues', headers: AUTH_HEADER });
    expect(list.statusCode).toBe(200);
    expect((list.json() as { queues: Array<{ readOnlyMode: boolean }> }).queues.map((q) => q.readOnlyMode)).toEqual([true, true]);

    for (const action of [`${ROUTE_QUEUE}/${id}/promote`, `${ROUTE_QUEUE}/${id}/clean`, `${ROUTE_QUEUE}/clean/delayed`, `${ROUTE_QUEUE}/promote`, `${ROUTE_QUEUE}/empty`]) {
      const res = await board(app, action);
      expect(res.statusCode, action).toBe(405);
    }
    expect(await queues.queue(ROUTE_QUEUE).getJobState(id)).toBe('delayed');
    // Reading a job stays open.
    expect((await app.inject({ method: 'GET', url: `/admin/queues/api/queues/${ROUTE_QUEUE}/${id}`, headers: AUTH_HEADER })).statusCode).toBe(200);
  });

  it('are allowed with BULL_BOARD_READ_ONLY=false: a promote runs the delayed job now, a clean deletes it', async () => {
    const app = await serverWith({ BULL_BOARD_READ_ONLY: 'false' });
    const id = await delayedRouteJob();
    expect((await board(app, `${ROUTE_QUEUE}/${id}/promote`)).statusCode).toBe(204);
    expect(await queues.queue(ROUTE_QUEUE).getJobState(id)).toBe('waiting');
    expect((await board(app, `${ROUTE_QUEUE}/${id}/clean`)).statusCode).toBe(204);
    expect(await queues.queue(ROUTE_QUEUE).getJob(id)).toBeUndefined();
  });
});
