/** GET /pauses and DELETE /pauses/:domain against real Redis and Postgres, behind the bearer key like the rest. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import type { FastifyInstance } from 'fastify';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { DomainPauses, loadConfig, politenessPrefix } from '@crawler/pipeline';
import { LinkStore } from '@crawler/db';
import { RedisPolitenessGate } from '@crawler/politeness';
import { JobQueues, ROUTE_QUEUE, createRedisConnection, deleteRedisPrefix } from '@crawler/queue';
import { createPipelineMetrics } from '@crawler/telemetry';
import { createServer } from './server.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `{crawler_test_api_pauses_${process.pid}}`;
const API_KEY = 'pauses-int-test-key-0123456789abcdef';

let db: TestDatabase;
let redis: Redis;
let queues: JobQueues;
let app: FastifyInstance;

beforeAll(async () => {
  db = await createTestDatabase('api_pauses');
  redis = createRedisConnection(REDIS_URL, 'producer');
  queues = new JobQueues({ connection: redis, prefix: PREFIX });
  const config = loadConfig({ DATABASE_URL: db.url, QUEUE_PREFIX: PREFIX });
  app = await createServer({
    prisma: db.prisma, redis, queues, links: new LinkStore(db.prisma), queueNames: [ROUTE_QUEUE], metrics: createPipelineMetrics(),
    bullBoard: null, apiKeys: [API_KEY], pauses: new DomainPauses({ redis, prisma: db.prisma, queues, config }),
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

const authed = (method: 'GET' | 'DELETE', url: string) => app.inject({ method, url, headers: { authorization: `Bearer ${API_KEY}` } });

describe('/pauses', () => {
  it('asks for the bearer key', async () => {
    expect((await app.inject({ method: 'GET', url: '/pauses' })).statusCode).toBe(401);
    expect((await app.inject({ method: 'DELETE', url: '/pauses/a.example' })).statusCode).toBe(401);
  });

  it('lists the fleet pause and the paused links of a domain, and lifting requeues them in a new generation', async () => {
    const gate = new RedisPolitenessGate({ redis, prefix: politenessPrefix(PREFIX) });
    const until = Date.now() + 3_600_000;
    await gate.pauseDomain('shop.example', until, 'blocked_403');
    const link = await db.prisma.link.create({
      data: { url: 'https://shop.example/a', initialUrl: 'https://shop.example/a', domain: 'shop.example', status: 'paused', pausedUntil: new Date(until), lastErrorType: 'blocked_403' },
    });
    // A link paused on its own, without a fleet pause (e.g. the fleet pause was lifted by hand in Redis).
    await db.prisma.link.create({
      data: { url: 'https://news.example/b', initialUrl: 'https://news.example/b', domain: 'news.example', status: 'paused', pausedUntil: new Date(until - 60_000), lastErrorType: 'site_unreachable' },
    });

    const res = await authed('GET', '/pauses');
    expect(res.statusCode).toBe(200);
    expect(res.json().pauses).toEqual([
      { domain: 'shop.example', reason: 'blocked_403', until: new Date(until).toISOString(), domainPausedUntil: new Date(until).toISOString(), pausedLinks: 1 },
      { domain: 'news.example', reason: 'site_unreachable', until: new Date(until - 60_000).toISOString(), domainPausedUntil: null, pausedLinks: 1 },
    ]);

    const lifted = await authed('DELETE', '/pauses/Shop.Example');
    expect(lifted.json()).toEqual({ domain: 'shop.example', domainPauseLifted: true, linksResumed: 1 });
    expect(await gate.domainPausedUntil('shop.example')).toBeNull();
    const after = await db.prisma.link.findUniqueOrThrow({ where: { id: link.id } });
    expect([after.status, after.pausedUntil, after.generation]).toEqual(['queued', null, link.generation + 1]);
    const waiting = await queues.routeQueue().getJobs(['waiting', 'prioritized']);
    expect(waiting.map((j) => [j.data.linkId, j.data.generation])).toContainEqual([link.id, link.generation + 1]);
    expect((await authed('GET', '/pauses')).json().pauses.map((p: { domain: string }) => p.domain)).toEqual(['news.example']);
    expect((await authed('DELETE', '/pauses/not a domain')).statusCode).toBe(400);
  });

  it('lifts the pause of a host named as users write it: with www. and a trailing dot', async () => {
    const gate = new RedisPolitenessGate({ redis, prefix: politenessPrefix(PREFIX) });
    const until = Date.now() + 3_600_000;
    // Links and pauses are keyed by the link's domain, which drops www.
    await gate.pauseDomain('store.example', until, 'blocked_403');
    await db.prisma.link.create({
      data: { url: 'https://www.store.example/a', initialUrl: 'https://www.store.example/a', domain: 'store.example', status: 'paused', pausedUntil: new Date(until), lastErrorType: 'blocked_403' },
    });
    const lifted = await authed('DELETE', '/pauses/www.Store.example.');
    expect(lifted.json()).toEqual({ domain: 'store.example', domainPauseLifted: true, linksResumed: 1 });
  });
});
