/** POST /links with maxAgeSeconds and revisit: refreshes, per-URL ages, policies, and 400s that name the field. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { FastifyInstance } from 'fastify';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { LinkStore } from '@crawler/db';
import { JobQueues, ROUTE_QUEUE, createRedisConnection, deleteRedisPrefix } from '@crawler/queue';
import { createPipelineMetrics } from '@crawler/telemetry';
import { createServer } from '../server.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `{crawler_test_api_refresh_${process.pid}}`;

let db: TestDatabase;
let redis: Redis;
let queues: JobQueues;
let app: FastifyInstance;

beforeAll(async () => {
  db = await createTestDatabase('api_refresh');
  redis = createRedisConnection(REDIS_URL, 'producer');
  queues = new JobQueues({ connection: redis, prefix: PREFIX });
  app = await createServer({
    prisma: db.prisma, redis, queues, links: new LinkStore(db.prisma), queueNames: [ROUTE_QUEUE], metrics: createPipelineMetrics(),
    bullBoard: null, apiKeys: null, minRevisitIntervalSeconds: 300,
  });
});

afterAll(async () => {
  await app?.close();
  await queues?.obliterate([ROUTE_QUEUE]).catch(() => undefined);
  await queues?.close();
  await deleteRedisPrefix(redis, PREFIX);
  redis?.disconnect();
  await db?.drop();
});

const post = (payload: object) => app.inject({ method: 'POST', url: '/links', payload });
type Accepted = { id: string; url: string; queued: boolean; refresh?: string };

describe('POST /links refresh and revisit', () => {
  it('refreshes stored pages older than the max age, per batch or per URL, and reports the others', async () => {
    const urls = ['https://fresh.example/a', 'https://fresh.example/b', 'https://fresh.example/c'];
    const first = (await post({ urls })).json() as { accepted: Accepted[] };
    // Visited: a two hours ago, b and c a minute ago.
    const at = (id: string, minutesAgo: number) => db.prisma.link.update({ where: { id }, data: { status: 'done', lastAttemptAt: new Date(Date.now() - minutesAgo * 60_000) } });
    await at(first.accepted[0]!.id, 120);
    await at(first.accepted[1]!.id, 1);
    await at(first.accepted[2]!.id, 1);

    const res = await post({ links: [urls[0], urls[1], { url: urls[2], maxAgeSeconds: 0 }], maxAgeSeconds: 3_600 });
    expect(res.statusCode).toBe(202);
    const body = res.json() as { accepted: Accepted[] };
    expect(body.accepted.map((a) => [a.refresh, a.queued])).toEqual([['refreshed', true], ['fresh', false], ['refreshed', true]]);
    const rows = await db.prisma.link.findMany({ where: { url: { in: urls } }, orderBy: { url: 'asc' } });
    expect(rows.map((r) => [r.status, r.generation])).toEqual([['queued', 1], ['done', 0], ['queued', 1]]);
    // One route job for each refreshed link's new generation.
    const jobs = await queues.routeQueue().getJobs(['waiting', 'prioritized']);
    for (const a of [body.accepted[0]!, body.accepted[2]!]) expect(jobs.filter((j) => j.data.linkId === a.id && j.data.generation === 1)).toHaveLength(1);

    // Asked again while queued: in progress, not a second visit.
    const again = (await post({ urls: [urls[0]], maxAgeSeconds: 0 })).json() as { accepted: Accepted[] };
    expect(again.accepted[0]).toMatchObject({ refresh: 'in_progress' });
    expect((await db.prisma.link.findUniqueOrThrow({ where: { url: urls[0] } })).generation).toBe(1);
  });

  it('stores a revisit policy and shows it on GET /links/:id', async () => {
    const res = await post({ urls: ['https://sched.example/'], revisit: { mode: 'adaptive', minSeconds: 600, maxSeconds: 86_400 } });
    expect(res.statusCode).toBe(202);
    const id = (res.json() as { accepted: Accepted[] }).accepted[0]!.id;
    const link = (await app.inject({ method: 'GET', url: `/links/${id}` })).json() as { revisit: Record<string, unknown> };
    expect(link.revisit).toMatchObject({ mode: 'adaptive', intervalSeconds: 600, minSeconds: 600, maxSeconds: 86_400, nextFetchAt: null });
  });

  it('answers 400 naming the field for bad ages and intervals, and stores nothing', async () => {
    const cases: Array<[object, string]> = [
      [{ urls: ['https://bad.example/1'], maxAgeSeconds: -5 }, 'maxAgeSeconds'],
      [{ urls: ['https://bad.example/1'], maxAgeSeconds: '1h' }, 'maxAgeSeconds'],
      [{ links: [{ url: 'https://bad.example/1', maxAgeSeconds: -1 }] }, 'links.0.maxAgeSeconds'],
      [{ urls: ['https://bad.example/1'], revisit: { mode: 'fixed', intervalSeconds: 60 } }, 'revisit.intervalSeconds'],
      [{ urls: ['https://bad.example/1'], revisit: { mode: 'adaptive', minSeconds: 600, maxSeconds: 300 } }, 'revisit.maxSeconds'],
      [{ urls: ['https://bad.example/1'], revisit: { mode: 'hourly' } }, 'revisit.mode'],
      [{ urls: ['https://bad.example/1'], revisit: 'daily' }, 'revisit'],
    ];
    for (const [payload, field] of cases) {
      const res = await post(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_field', field });
    }
    expect(await db.prisma.link.count({ where: { domain: 'bad.example' } })).toBe(0);
  });
});
