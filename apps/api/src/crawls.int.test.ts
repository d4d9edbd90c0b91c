/** POST/GET/DELETE /crawls against real Redis and Postgres. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { FastifyInstance } from 'fastify';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { createCrawlFrontier, loadConfig } from '@crawler/pipeline';
import { LinkStore } from '@crawler/db';
import { silentLogger } from '@crawler/core';
import { JobQueues, ROUTE_QUEUE, createRedisConnection, deleteRedisPrefix } from '@crawler/queue';
import { createPipelineMetrics } from '@crawler/telemetry';
import { createServer } from './server.js';
import { REDIS_URL } from '@crawler/testkit';

const PREFIX = `{crawler_test_api_crawls_${process.pid}}`;

let db: TestDatabase;
let redis: Redis;
let queues: JobQueues;
let app: FastifyInstance;
let crawls: ReturnType<typeof createCrawlFrontier>;

beforeAll(async () => {
  db = await createTestDatabase('api_crawls');
  redis = createRedisConnection(REDIS_URL, 'producer');
  queues = new JobQueues({ connection: redis, prefix: PREFIX });
  crawls = createCrawlFrontier({ prisma: db.prisma, queues, redis, config: loadConfig({ DATABASE_URL: db.url, QUEUE_PREFIX: PREFIX }), logger: silentLogger });
  app = await createServer({
    prisma: db.prisma, redis, queues, links: new LinkStore(db.prisma), queueNames: [ROUTE_QUEUE], metrics: createPipelineMetrics(), bullBoard: null, apiKeys: null, crawls, maxBatchSize: 5,
  });
});

afterAll(async () => {
  await app?.close();
  await crawls?.close();
  await queues?.obliterate([ROUTE_QUEUE]).catch(() => undefined);
  await queues?.close();
  await deleteRedisPrefix(redis, PREFIX);
  redis?.disconnect();
  await db?.drop();
});

describe('/crawls', () => {
  it('creates a crawl with its seeds queued, shows its counters, and cancels it', async () => {
    const res = await app.inject({ method: 'POST', url: '/crawls', payload: { seeds: ['https://www.example.co.uk/?utm_source=x#top', 'mailto:a@b.c'], scope: 'same-site', maxPages: 10, maxDepth: 2, exclude: ['**/private/**'] } });
    expect(res.statusCode).toBe(201);
    const body = res.json() as { id: string; admitted: number; rejected: Array<{ input: string }> };
    expect(body.admitted).toBe(1);
    expect(body.rejected.map((r) => r.input)).toEqual(['mailto:a@b.c']);
    expect(await queues.routeQueue().getJobCounts('waiting')).toMatchObject({ waiting: 1 });

    const got = await app.inject({ method: 'GET', url: `/crawls/${body.id}` });
    expect(got.statusCode).toBe(200);
    expect(got.json()).toMatchObject({
      id: body.id, status: 'running', seeds: ['https://www.example.co.uk/'], scope: 'same-site', maxPages: 10, maxDepth: 2, exclude: ['**/private/**'],
      counters: { discovered: 1, admitted: 1, queued: 1, done: 0, failed: 0, duplicate: 0, outOfScope: 0, overLimit: 0, outOfScopeByReason: { scope: 0, include: 0, exclude: 0, trap: 0, nofollow: 0 } },
      outOfScopeSamples: {},
    });

    const del = await app.inject({ method: 'DELETE', url: `/crawls/${body.id}` });
    expect(del.statusCode).toBe(200);
    expect(del.json()).toMatchObject({ status: 'cancelled', counters: { queued: 0, failed: 1 } });
    expect((await app.inject({ method: 'DELETE', url: `/crawls/${body.id}` })).json()).toMatchObject({ status: 'cancelled' });
  });

  it('stores the max age and revisit policy of a crawl and shows them', async () => {
    const res = await app.inject({ method: 'POST', url: '/crawls', payload: { seeds: ['https://policy.test/'], maxAgeSeconds: 86_400, revisit: { mode: 'adaptive', minSeconds: 3_600, maxSeconds: 604_800 } } });
    expect(res.statusCode).toBe(201);
    const got = (await app.inject({ method: 'GET', url: `/crawls/${(res.json() as { id: string }).id}` })).json();
    expect(got).toMatchObject({ maxAgeSeconds: 86_400, revisit: { mode: 'adaptive', intervalSeconds: 3_600, minSeconds: 3_600, maxSeconds: 604_800 } });
    // Its seed carries the policy.
    const seed = await db.prisma.link.findUniqueOrThrow({ where: { url: 'https://policy.test/' } });
    expect([seed.revisitMode, seed.revisitMinS, seed.revisitMaxS]).toEqual(['adaptive', 3_600, 604_800]);
  });

  it('answers 400 for a bad spec and 404 for an unknown crawl', async () => {
    for (const payload of [{ seeds: [] }, { seeds: ['https://a.test/'], scope: 'galaxy' }, { seeds: ['https://a.test/'], maxPages: 0 }, { seeds: ['https://a.test/'], surprise: 1 }]) {
      expect((await app.inject({ method: 'POST', url: '/crawls', payload })).statusCode).toBe(400);
    }
    const galaxy = await app.inject({ method: 'POST', url: '/crawls', payload: { seeds: ['https://a.test/'], scope: 'galaxy' } });
    expect(galaxy.json()).toMatchObject({ error: 'invalid_body', message: expect.stringContaining('"seeds"'), issues: [expect.objectContaining({ path: 'scope' })] });
    const badRegex = await app.inject({ method: 'POST', url: '/crawls', payload: { seeds: ['https://a.test/'], include: ['re:('] } });
    expect(badRegex.statusCode).toBe(400);
    expect(badRegex.json()).toMatchObject({ error: 'invalid_crawl', field: 'include' });
    // A bad pattern in `exclude` is named as such, next to a good `include`.
    const badExclude = await app.inject({ method: 'POST', url: '/crawls', payload: { seeds: ['https://a.test/'], include: ['/ok/*'], exclude: ['re:[z'] } });
    expect(badExclude.json()).toMatchObject({ error: 'invalid_crawl', field: 'exclude', message: expect.stringContaining('re:[z') });
    expect((await app.inject({ method: 'POST', url: '/crawls', payload: { seeds: ['nope'] } })).json()).toMatchObject({ error: 'invalid_crawl', field: 'seeds' });
    // A limit past what the crawls table holds is the caller's mistake, not a database failure to retry.
    for (const field of ['maxPages', 'maxDepth', 'maxPagesPerHost']) {
      const res = await app.inject({ method: 'POST', url: '/crawls', payload: { seeds: ['https://a.test/'], [field]: 10_000_000_000 } });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_crawl', field, message: expect.stringContaining('2147483647') });
    }
    // Refresh ages and revisit policies: the field at fault is named.
    for (const [extra, field] of [
      [{ maxAgeSeconds: -1 }, 'maxAgeSeconds'],
      [{ maxAgeSeconds: '7d' }, 'maxAgeSeconds'],
      [{ revisit: { mode: 'fixed', intervalSeconds: 1 } }, 'revisit.intervalSeconds'],
      [{ revisit: { mode: 'adaptive', minSeconds: 3_600 } }, 'revisit.maxSeconds'],
    ] as const) {
      const res = await app.inject({ method: 'POST', url: '/crawls', payload: { seeds: ['https://a.test/'], ...extra } });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_crawl', field });
    }
    expect((await app.inject({ method: 'POST', url: '/crawls', payload: { seeds: Array(6).fill('https://a.test/') } })).statusCode).toBe(413);
    expect((await app.inject({ method: 'GET', url: '/crawls/00000000-0000-4000-8000-000000000000' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/crawls/xyz' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'DELETE', url: '/crawls/xyz' })).statusCode).toBe(404);
  });
});
