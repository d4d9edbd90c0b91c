/** The producer API's priority on POST /links and GET /links (filters, lookup by URL, cursor pages), on real Redis and Postgres. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import type { FastifyInstance } from 'fastify';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { LinkStore } from '@crawler/db';
import { JobQueues, ROUTE_QUEUE, createRedisConnection, deleteRedisPrefix } from '@crawler/queue';
import { createPipelineMetrics } from '@crawler/telemetry';
import { createServer } from './server.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `{crawler_test_api_list_${process.pid}}`;
const API_KEY = 'links-list-int-test-key-0123456789abcdef';

let db: TestDatabase;
let redis: Redis;
let queues: JobQueues;
let app: FastifyInstance;

beforeAll(async () => {
  db = await createTestDatabase('api_links_list');
  redis = createRedisConnection(REDIS_URL, 'producer');
  queues = new JobQueues({ connection: redis, prefix: PREFIX });
  app = await createServer({ prisma: db.prisma, redis, queues, links: new LinkStore(db.prisma), queueNames: [ROUTE_QUEUE], metrics: createPipelineMetrics(), bullBoard: null, apiKeys: [API_KEY] });
});

afterAll(async () => {
  await app?.close();
  await queues?.obliterate([ROUTE_QUEUE]).catch(() => undefined);
  await queues?.close();
  await deleteRedisPrefix(redis, PREFIX);
  redis?.disconnect();
  await db?.drop();
});

const authed = (method: 'GET' | 'POST', url: string, payload?: object) => app.inject({ method, url, payload, headers: { authorization: `Bearer ${API_KEY}` } });

describe('POST /links priority', () => {
  it('gives the route jobs the BullMQ priority asked for, per batch or per link, and none without one', async () => {
    const res = await authed('POST', '/links', { links: ['https://p.example/batch', { url: 'https://p.example/own', priority: 5 }, { url: 'https://p.example/none' }], priority: 100 });
    expect(res.statusCode).toBe(202);
    const [batch, own, none] = res.json().accepted.map((a: { id: string }) => a.id) as string[];
    const plain = await authed('POST', '/links', { urls: ['https://p.example/plain'] });
    const plainId = plain.json().accepted[0].id as string;
    const jobs = await queues.routeQueue().getJobs(['waiting', 'prioritized']);
    const priorityOf = (id: string) => jobs.find((j) => j.data.linkId === id)?.opts.priority ?? 0;
    expect([priorityOf(batch!), priorityOf(own!), priorityOf(none!), priorityOf(plainId)]).toEqual([100, 5, 100, 0]);
    expect(jobs.find((j) => j.data.linkId === own)?.data.priority).toBe(5);
    // Prioritized jobs wait in BullMQ's prioritized set; a job without a priority waits in the plain list.
    expect((await queues.routeQueue().getJobs(['prioritized'])).map((j) => j.data.linkId).sort()).toEqual([batch, own, none].sort());
  });

  it('refuses a priority out of range or not an integer, saying what is expected', async () => {
    for (const priority of [0, -1, 2.5, 3_000_000, 'high']) {
      const res = await authed('POST', '/links', { urls: ['https://p.example/x'], priority });
      expect(res.statusCode, String(priority)).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_body', message: expect.stringContaining('"priority"?: 1…2097152') });
    }
    expect(await db.prisma.link.count({ where: { url: 'https://p.example/x' } })).toBe(0);
  });
});

describe('GET /links', () => {
  it('lists by status and domain, newest first, in cursor pages that neither repeat nor skip', async () => {
    const urls = Array.from({ length: 7 }, (_, i) => `https://l.example/${i}`);
    for (const u of urls) await authed('POST', '/links', { urls: [u] });
    await db.prisma.link.updateMany({ where: { url: { in: [urls[1]!, urls[4]!] } }, data: { status: 'failed', lastErrorType: 'site_unreachable' } });

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await authed('GET', `/links?domain=L.example&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode).toBe(200);
      const body = res.json() as { links: Array<{ url: string }>; nextCursor: string | null };
      expect(body.links.length).toBeLessThanOrEqual(3);
      seen.push(...body.links.map((l) => l.url));
      cursor = body.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...urls].reverse());

    const failed = (await authed('GET', '/links?status=failed&domain=l.example')).json();
    expect(failed.links.map((l: { url: string; lastErrorType: string }) => [l.url, l.lastErrorType])).toEqual([[urls[4], 'site_unreachable'], [urls[1], 'site_unreachable']]);
    expect(failed.nextCursor).toBeNull();
  });

  it('filters by the host as the user writes it: www., an IDN, a trailing dot', async () => {
    await authed('POST', '/links', { urls: ['https://www.host-filter.example/a', 'https://bücher-filter.example/b'] });
    for (const [domain, url] of [
      ['www.host-filter.example', 'https://www.host-filter.example/a'],
      ['host-filter.example.', 'https://www.host-filter.example/a'],
      ['bücher-filter.example', 'https://xn--bcher-filter-dlb.example/b'],
    ]) {
      const res = await authed('GET', `/links?domain=${encodeURIComponent(domain!)}`);
      expect(res.statusCode, domain).toBe(200);
      expect(res.json().links.map((l: { url: string }) => l.url), domain).toEqual([url]);
    }
    expect((await authed('GET', '/links?domain=not%20a%20host')).json().error).toBe('invalid_query');
  });

  it('looks a link up by URL, normalized as it was stored', async () => {
    await authed('POST', '/links', { urls: ['https://Find.example/page?b=2&a=1#frag'] });
    const res = await authed('GET', `/links?url=${encodeURIComponent('https://find.example/page?b=2&a=1')}`);
    const [hit] = res.json().links as Array<{ url: string; status: string; id: string }>;
    expect(hit).toMatchObject({ url: expect.stringContaining('find.example/page'), status: 'queued' });
    expect((await authed('GET', `/links?url=${encodeURIComponent('https://find.example/other')}`)).json().links).toEqual([]);
  });

  it('stores a posted campaign link without its tracking parameters, and finds it, or a link stored with them, by either spelling', async () => {
    const posted = await authed('POST', '/links', { urls: ['https://camp.example/sale?utm_source=mail&item=4&fbclid=X1'] });
    expect(posted.json().accepted[0]).toMatchObject({ url: 'https://camp.example/sale?item=4', created: true });
    const id = posted.json().accepted[0].id as string;
    for (const spelling of ['https://camp.example/sale?item=4', 'https://camp.example/sale?utm_source=other&item=4']) {
      const res = await authed('GET', `/links?url=${encodeURIComponent(spelling)}`);
      expect(res.json().links.map((l: { id: string }) => l.id), spelling).toEqual([id]);
    }
    // Stored with its tracking parameters before enqueue stripped them: still found by the URL it was stored under.
    const legacy = 'https://camp.example/old?utm_campaign=spring';
    const [row] = await new LinkStore(db.prisma).upsertMany([{ url: legacy, initialUrl: legacy, domain: 'camp.example' }]);
    expect((await authed('GET', `/links?url=${encodeURIComponent(legacy)}`)).json().links.map((l: { id: string }) => l.id)).toEqual([row!.id]);
  });

  it('validates its query: status, limit, cursor, unknown parameters', async () => {
    for (const q of ['status=lost', 'limit=0', 'limit=1001', 'limit=ten', 'colour=red']) {
      const res = await authed('GET', `/links?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().error, q).toBe('invalid_query');
    }
    expect((await authed('GET', '/links?cursor=bm9wZQ')).json().error).toBe('invalid_cursor');
    expect((await app.inject({ method: 'GET', url: '/links' })).statusCode).toBe(401);
  });
});
