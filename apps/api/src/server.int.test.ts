/** The API against real Redis and Postgres: its own database, its own queue prefix, everything removed afterwards. */
import { createServer as createNetServer } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { FastifyInstance } from 'fastify';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { AttemptStore, createPrismaClient, LinkStore } from '@crawler/db';
import { JobQueues, ROUTE_QUEUE, createRedisConnection, fetchQueueName, deleteRedisPrefix } from '@crawler/queue';
import { createPipelineMetrics } from '@crawler/telemetry';
import { createServer } from './server.js';
import { REDIS_URL } from '@crawler/testkit';

const PREFIX = `{crawler_test_api_${process.pid}}`;
const QUEUE_NAMES = [ROUTE_QUEUE, fetchQueueName('simple_http'), fetchQueueName('playwright')];
const AUTH = { user: 'ops', password: 'correct horse battery' };
const API_KEY = 'server-int-test-key-0123456789abcdef';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

let db: TestDatabase;
let redis: Redis;
let queues: JobQueues;
let app: FastifyInstance;

beforeAll(async () => {
  db = await createTestDatabase('api');
  redis = createRedisConnection(REDIS_URL, 'producer');
  queues = new JobQueues({ connection: redis, prefix: PREFIX });
  app = await createServer({
    prisma: db.prisma,
    redis,
    queues,
    links: new LinkStore(db.prisma),
    queueNames: QUEUE_NAMES,
    metrics: createPipelineMetrics(),
    bullBoard: AUTH,
    apiKeys: [API_KEY],
    maxBatchSize: 5,
  });
});

/** A request with the API key, as every producer sends it. */
function authed(opts: { method: 'GET' | 'POST'; url: string; payload?: string | object; headers?: Record<string, string> }) {
  return app.inject({ ...opts, headers: { authorization: `Bearer ${API_KEY}`, ...opts.headers } });
}

afterAll(async () => {
  await app?.close();
  await queues?.obliterate(QUEUE_NAMES).catch(() => undefined);
  await queues?.close();
  await deleteRedisPrefix(redis, PREFIX);
  redis?.disconnect();
  await db?.drop();
});

describe('POST /links', () => {
  it('rejects bad URLs one by one and enqueues the rest, one job per page', async () => {
    const res = await authed({
      method: 'POST',
      url: '/links',
      payload: { urls: ['https://a.example/x?b=2&a=1', 'ftp://files.example/f', 'not a url', 42, 'https://A.example:443/x?b=2&a=1#f'] },
    });
    expect(res.statusCode).toBe(202);
    const body = res.json() as { accepted: Array<{ id: string; url: string; created: boolean; queued: boolean }>; rejected: Array<{ input: string; code: string; message: string }> };
    expect(body.rejected.map((r) => r.input).sort()).toEqual(['42', 'ftp://files.example/f', 'not a url']);
    for (const r of body.rejected) {
      expect(r.code).toMatch(/^[a-z_]+$/);
      expect(r.message.length).toBeGreaterThan(5);
    }
    // The two spellings of one page are one link and one job.
    expect(body.accepted).toHaveLength(2);
    expect(new Set(body.accepted.map((a) => a.id)).size).toBe(1);
    expect(body.accepted.filter((a) => a.queued)).toHaveLength(1);

    const route = queues.queue(ROUTE_QUEUE);
    expect(await route.getWaitingCount()).toBe(1);
    const [job] = await route.getWaiting();
    expect(job!.data).toMatchObject({ linkId: body.accepted[0]!.id, url: body.accepted[0]!.url });
    expect(await db.prisma.link.count()).toBe(1);
  });

  it('stores the per-link learning flag of the links form', async () => {
    const res = await authed({
      method: 'POST',
      url: '/links',
      payload: { links: [{ url: 'https://b.example/on', learningMode: true }, { url: 'https://b.example/off', learningMode: false }, 'https://b.example/default', { url: 'mailto:x@y.z' }] },
    });
    expect(res.statusCode).toBe(202);
    expect((res.json() as { rejected: unknown[] }).rejected).toHaveLength(1);
    // Results in input order, not grouped by learning flag.
    expect((res.json() as { accepted: { input: string }[] }).accepted.map((a) => a.input)).toEqual(['https://b.example/on', 'https://b.example/off', 'https://b.example/default']);
    const rows = await db.prisma.link.findMany({ where: { domain: 'b.example' }, select: { url: true, learningModeEnabled: true } });
    const flag = Object.fromEntries(rows.map((r) => [new URL(r.url).pathname, r.learningModeEnabled]));
    expect(flag).toEqual({ '/on': true, '/off': false, '/default': null });
    expect(await queues.queue(ROUTE_QUEUE).getWaitingCount()).toBe(4);
  });

  it('answers in input order across learning flags, invalid inputs and duplicates', async () => {
    const res = await authed({
      method: 'POST',
      url: '/links',
      payload: { links: [{ url: 'https://o.example/1', learningMode: false }, 'https://o.example/2', { url: 'ftp://o.example/x' }, { url: 42 }, 'https://o.example/2'] },
    });
    expect(res.statusCode).toBe(202);
    const body = res.json() as { accepted: { input: string; created: boolean }[]; rejected: { input: string }[] };
    expect(body.accepted.map((a) => [a.input, a.created])).toEqual([['https://o.example/1', true], ['https://o.example/2', true], ['https://o.example/2', false]]);
    expect(body.rejected.map((r) => r.input)).toEqual(['ftp://o.example/x', '42']);
  });

  it('rejects a 5,000-character URL, a URL with credentials and one the database cannot store, each on its own, and stores the rest', async () => {
    const long = `https://len.example/${'a'.repeat(5_000)}`;
    const nul = 'https://len.example/x\u0000y';
    const urls = ['https://len.example/ok-1', long, 'https://user:secret@len.example/creds', nul, 'https://len.example/ok-2'];
    const res = await authed({ method: 'POST', url: '/links', payload: { urls } });
    expect(res.statusCode).toBe(202);
    const body = res.json() as { accepted: Array<{ url: string }>; rejected: Array<{ input: string; code: string; message: string }> };
    expect(body.accepted.map((a) => a.url)).toEqual(['https://len.example/ok-1', 'https://len.example/ok-2']);
    expect(body.rejected.map((r) => [r.input, r.code])).toEqual([
      // Not echoed whole: its first 200 characters and its length.
      [`${long.slice(0, 200)}… (${long.length} characters)`, 'url_too_long'],
      ['https://user:secret@len.example/creds', 'invalid_url'],
      [nul, 'invalid_url'],
    ]);
    expect(body.rejected[2]!.message).toBe('the database cannot store this URL');
    const stored = await db.prisma.link.findMany({ where: { domain: 'len.example' }, select: { url: true, initialUrl: true } });
    expect(stored.map((l) => l.url).sort()).toEqual(['https://len.example/ok-1', 'https://len.example/ok-2']);
    // Nothing with credentials was stored anywhere.
    expect(await db.prisma.link.count({ where: { initialUrl: { contains: 'secret' } } })).toBe(0);
    // A batch of nothing but the URL the database refuses is that URL's 422, not a 503 to retry forever.
    const alone = await authed({ method: 'POST', url: '/links', payload: { urls: [nul] } });
    expect(alone.statusCode).toBe(422);
  });

  it('does not send a URL of most of a megabyte back in its rejection', async () => {
    const huge = `https://huge.example/${'a'.repeat(900_000)}`;
    const res = await authed({ method: 'POST', url: '/links', payload: { urls: [huge] } });
    expect(res.statusCode).toBe(422);
    expect(res.body.length).toBeLessThan(1_000);
    expect((res.json() as { rejected: Array<{ input: string; code: string }> }).rejected).toEqual([
      expect.objectContaining({ input: `${huge.slice(0, 200)}… (900021 characters)`, code: 'url_too_long' }),
    ]);
  });

  it('rejects credentials however the URL spells them, as the URL parser reads it', async () => {
    // No '//' after the scheme, backslashes, a tab inside the scheme: WHATWG still reads user:password@.
    const urls = ['https:user:secret@creds.example/a', 'https:\\\\user:secret@creds.example/b', 'ht\ttps://u:secret@creds.example/c'];
    const res = await authed({ method: 'POST', url: '/links', payload: { urls } });
    expect(res.statusCode).toBe(422);
    expect((res.json() as { rejected: Array<{ input: string; code: string }> }).rejected.map((r) => [r.input, r.code])).toEqual(urls.map((u) => [u, 'invalid_url']));
    expect(await db.prisma.link.count({ where: { initialUrl: { contains: 'secret' } } })).toBe(0);
  });

  it('rejects a link nested too deep to quote on its own, not with a 503 to retry', async () => {
    const deep = `${'['.repeat(5_000)}${']'.repeat(5_000)}`;
    const res = await authed({ method: 'POST', url: '/links', payload: `{"urls": ["https://deep.example/ok", ${deep}]}`, headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(202);
    const body = res.json() as { accepted: Array<{ url: string }>; rejected: Array<{ input: string; code: string }> };
    expect(body.accepted.map((a) => a.url)).toEqual(['https://deep.example/ok']);
    expect(body.rejected).toEqual([expect.objectContaining({ input: 'an array nested too deep to quote', code: 'invalid_url' })]);
    const alone = await authed({ method: 'POST', url: '/links', payload: `{"urls": [${deep}]}`, headers: { 'content-type': 'application/json' } });
    expect(alone.statusCode).toBe(422);
  });

  it('answers 422 when nothing in the batch is valid', async () => {
    const res = await authed({ method: 'POST', url: '/links', payload: { urls: ['javascript:alert(1)'] } });
    expect(res.statusCode).toBe(422);
    expect((res.json() as { rejected: unknown[] }).rejected).toHaveLength(1);
  });

  it('answers 400 on a malformed body and 413 past the batch limit, enqueueing nothing', async () => {
    const before = await db.prisma.link.count();
    const bad: Array<{ payload: string | object; headers?: Record<string, string> }> = [
      { payload: '{"urls": [', headers: { 'content-type': 'application/json' } },
      { payload: { urls: 'https://c.example/' } },
      { payload: { urls: ['https://c.example/'], extra: 1 } },
      { payload: { links: [{ url: 'https://c.example/', learningMode: 'yes' }] } },
      { payload: {} },
      { payload: { urls: [] } },
    ];
    for (const b of bad) {
      const res = await authed({ method: 'POST', url: '/links', payload: b.payload, headers: b.headers });
      expect(res.statusCode, JSON.stringify(b.payload)).toBe(400);
      expect((res.json() as { error: string }).error).toMatch(/^[A-Za-z_]+$/);
    }
    // `curl -d` without `-H 'content-type: application/json'` sends a form: the answer says what to send instead.
    const form = await authed({ method: 'POST', url: '/links', payload: '{"urls": ["https://c.example/"]}', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect([form.statusCode, form.json().message]).toEqual([415, expect.stringContaining('Content-Type: application/json')]);
    const shaped = await authed({ method: 'POST', url: '/links', payload: { urls: 'https://c.example/' } });
    expect(shaped.json()).toMatchObject({ error: 'invalid_body', message: expect.stringContaining('"urls"'), issues: [expect.objectContaining({ message: expect.any(String) })] });
    expect((shaped.json() as { issues: unknown[] }).issues.length).toBeLessThanOrEqual(5);
    // Each wrong field is named, from the shape the body came closest to.
    for (const [payload, path] of [
      [{ urls: 'https://c.example/' }, 'urls'],
      [{ urls: null }, 'urls'],
      [{ urls: ['https://c.example/'], priority: '1' }, 'priority'],
      [{ urls: ['https://c.example/'], learningMode: 'yes' }, 'learningMode'],
      [{ links: [{ url: 'https://c.example/', priority: 'x' }] }, 'links.0.priority'],
    ] as const) {
      const res = await authed({ method: 'POST', url: '/links', payload });
      expect((res.json() as { issues: Array<{ path: string }> }).issues.map((i) => i.path), JSON.stringify(payload)).toEqual([path]);
    }
    const big = await authed({ method: 'POST', url: '/links', payload: { urls: Array.from({ length: 6 }, (_, i) => `https://c.example/${i}`) } });
    expect(big.statusCode).toBe(413);
    expect((big.json() as { error: string }).error).toBe('batch_too_large');
    // A body past the byte limit (a producer posting its whole backlog at once) is the same mistake, said the same way.
    const huge = await authed({ method: 'POST', url: '/links', payload: { urls: Array.from({ length: 60_000 }, (_, i) => `https://c.example/${i}`) } });
    expect([huge.statusCode, huge.json()]).toEqual([413, { error: 'batch_too_large', message: expect.stringMatching(/at most 5 links \(or seeds\) per request.*split the batch/) }]);
    expect(await db.prisma.link.count()).toBe(before);
  });
});

describe('GET /links/:id', () => {
  it('returns status, attempts with summarised heuristics and the decision', async () => {
    const post = await authed({ method: 'POST', url: '/links', payload: { urls: ['https://d.example/report.pdf'] } });
    const id = (post.json() as { accepted: Array<{ id: string }> }).accepted[0]!.id;
    await db.prisma.link.update({ where: { id }, data: { status: 'done', fetcher: 'simple_http', selectionSource: 'learned', attemptCount: 1 } });
    await new AttemptStore({ prisma: db.prisma }).logAttempt({
      linkId: id,
      url: 'https://d.example/report.pdf',
      fetcher: 'simple_http',
      success: true,
      httpStatus: 200,
      durationMs: 12,
      selectionSource: 'learned',
      heuristics: [
        { type: 'url_suffix', value: '.pdf' },
        { type: 'domain', value: 'd.example' },
      ],
    });
    const res = await authed({ method: 'GET', url: `/links/${id}` });
    expect(res.statusCode).toBe(200);
    const link = res.json() as Record<string, unknown> & { attempts: Array<Record<string, unknown>> };
    expect(link).toMatchObject({ id, url: 'https://d.example/report.pdf', status: 'done', attemptCount: 1, decision: { fetcher: 'simple_http', selectionSource: 'learned' }, lastVisitChanged: null });
    expect(link.attempts).toHaveLength(1);
    expect(link.attempts[0]).toMatchObject({ fetcher: 'simple_http', success: true, httpStatus: 200, selectionSource: 'learned', errorMessage: null, heuristics: { url_suffix: '.pdf', domain: 'd.example' } });
    // An attempt that got no response says why in words.
    await new AttemptStore({ prisma: db.prisma }).logAttempt({
      linkId: id, url: 'https://d.example/report.pdf', fetcher: 'simple_http', success: false, errorType: 'network_error',
      errorMessage: 'UND_ERR_SOCKET: other side closed (17 of 5000 body bytes received)', selectionSource: 'retry', heuristics: [],
    });
    const again = (await authed({ method: 'GET', url: `/links/${id}` })).json() as { attempts: Array<Record<string, unknown>> };
    expect(again.attempts.at(-1)).toMatchObject({ success: false, errorType: 'network_error', errorMessage: 'UND_ERR_SOCKET: other side closed (17 of 5000 body bytes received)' });
  });

  it('says what happens to the link next: when a paused one is routed again, whether a re-post retries a failed one', async () => {
    const post = await authed({ method: 'POST', url: '/links', payload: { urls: ['https://next.example/a', 'https://next.example/b', 'https://next.example/c'] } });
    const [a, b, c] = (post.json() as { accepted: Array<{ id: string }> }).accepted.map((x) => x.id);
    await db.prisma.link.update({ where: { id: a! }, data: { status: 'paused', pausedUntil: new Date('2099-01-01T00:00:00Z'), lastErrorType: 'rate_limited' } });
    await db.prisma.link.update({ where: { id: b! }, data: { status: 'failed', lastErrorType: 'site_unreachable' } });
    await db.prisma.link.update({ where: { id: c! }, data: { status: 'failed', lastErrorType: 'blocked_captcha' } });
    const next = async (id: string) => ((await authed({ method: 'GET', url: `/links/${id}` })).json() as { next: { action: string; at: string | null; message: string } }).next;
    expect(await next(a!)).toEqual({ action: 'retry_at', at: '2099-01-01T00:00:00.000Z', message: 'paused after rate_limited: routed again at 2099-01-01T00:00:00.000Z' });
    expect((await next(b!)).action).toBe('retried_on_repost');
    expect(await next(c!)).toMatchObject({ action: 'final', at: null });
  });

  it('answers 404 for an unknown id and 400 for a malformed one', async () => {
    expect((await authed({ method: 'GET', url: '/links/00000000-0000-4000-8000-000000000000' })).statusCode).toBe(404);
    const bad = await authed({ method: 'GET', url: '/links/12345' });
    expect(bad.statusCode).toBe(400);
    expect((bad.json() as { error: string }).error).toBe('invalid_id');
  });
});

describe('Bull Board', () => {
  it('answers 401 without or with wrong credentials, 200 with them, over the crawler queues', async () => {
    const none = await app.inject({ method: 'GET', url: '/admin/queues' });
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Basic/);
    expect((await app.inject({ method: 'GET', url: '/admin/queues', headers: { authorization: basic(AUTH.user, 'wrong') } })).statusCode).toBe(401);
    expect((await app.inject({ method: 'GET', url: '/admin/queues/api/queues', headers: { authorization: basic('root', AUTH.password) } })).statusCode).toBe(401);

    const page = await app.inject({ method: 'GET', url: '/admin/queues', headers: { authorization: basic(AUTH.user, AUTH.password) } });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    const api = await app.inject({ method: 'GET', url: '/admin/queues/api/queues', headers: { authorization: basic(AUTH.user, AUTH.password) } });
    expect(api.statusCode).toBe(200);
    const names = (api.json() as { queues: Array<{ name: string }> }).queues.map((q) => q.name).sort();
    expect(names).toEqual([...QUEUE_NAMES].sort());
  });

  it('is not served at all without configured credentials', async () => {
    const open = await createServer({ prisma: db.prisma, redis, queues, links: new LinkStore(db.prisma), queueNames: QUEUE_NAMES, metrics: createPipelineMetrics(), bullBoard: null, apiKeys: null });
    try {
      const res = await open.inject({ method: 'GET', url: '/admin/queues' });
      expect(res.statusCode).toBe(404);
      expect((res.json() as { error: string }).error).toBe('bull_board_disabled');
    } finally {
      await open.close();
    }
  });
});

describe('/metrics', () => {
  it('exposes the crawler counters, the API counter and queue depths read at scrape time', async () => {
    const res = await authed({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = res.body;
    for (const name of ['crawler_jobs_total', 'crawler_decisions_total', 'crawler_fetch_duration_seconds', 'crawler_pauses_total', 'crawler_bans_total']) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    const waiting = await queues.queue(ROUTE_QUEUE).getWaitingCount();
    expect(waiting).toBeGreaterThan(0);
    expect(text).toContain(`crawler_queue_jobs{queue="route",state="waiting"} ${waiting}`);
    expect(text).toMatch(/crawler_api_links_total\{outcome="accepted"\} [1-9]/);
    expect(text).toMatch(/crawler_api_links_total\{outcome="rejected"\} [1-9]/);
  });
});

describe('/healthz and /readyz', () => {
  it('answers 200 on both when Redis and Postgres answer', async () => {
    const res = await app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', checks: { redis: 'ok', postgres: 'ok' } });
    expect((await app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
  });

  it('answers 503 on /readyz naming what failed, and nothing of why; /healthz stays 200 (liveness)', async () => {
    // A port that was free a moment ago: nothing answers there.
    const port = await new Promise<number>((resolve) => {
      const s = createNetServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const deadRedis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    deadRedis.on('error', () => {});
    const missingDb = createPrismaClient(db.url.replace(/\/[^/?]+(\?|$)/, '/crawler_test_api_missing$1'), { connectionTimeoutMs: 2_000 });
    const broken = await createServer({ prisma: missingDb, redis: deadRedis, queues, links: new LinkStore(missingDb), queueNames: QUEUE_NAMES, metrics: createPipelineMetrics(), bullBoard: null, apiKeys: null, healthTimeoutMs: 1_000 });
    const halfBroken = await createServer({ prisma: db.prisma, redis: deadRedis, queues, links: new LinkStore(db.prisma), queueNames: QUEUE_NAMES, metrics: createPipelineMetrics(), bullBoard: null, apiKeys: null, healthTimeoutMs: 1_000 });
    try {
      const res = await broken.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      const body = res.json() as { status: string; checks: { redis: string; postgres: string } };
      expect(body.status).toBe('unavailable');
      expect(body.checks).toEqual({ redis: 'fail', postgres: 'fail' });
      // The driver's words (database names, hosts, ports, users) stay in the log.
      expect(res.body).not.toMatch(/crawler_test_api_missing|127\.0\.0\.1|ECONNREFUSED|postgres@|database/i);
      // Restarting the API mends neither: it stays alive for a restart policy.
      expect((await broken.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
      const half = await halfBroken.inject({ method: 'GET', url: '/readyz' });
      expect(half.statusCode).toBe(503);
      expect((half.json() as { checks: Record<string, string> }).checks).toMatchObject({ postgres: 'ok', redis: 'fail' });
    } finally {
      await broken.close();
      await halfBroken.close();
      deadRedis.disconnect();
      await missingDb.$disconnect().catch(() => undefined);
    }
  });

  it('says the database is not migrated, rather than to try again, when its tables are missing', async () => {
    const name = `${db.name}_unmigrated`;
    await db.prisma.$executeRawUnsafe(`CREATE DATABASE "${name}"`);
    const empty = createPrismaClient(db.url.replace(/\/[^/?]+(\?|$)/, `/${name}$1`));
    const unmigrated = await createServer({ prisma: empty, redis, queues, links: new LinkStore(empty), queueNames: QUEUE_NAMES, metrics: createPipelineMetrics(), bullBoard: null, apiKeys: null });
    try {
      for (const [method, url, payload] of [['POST', '/links', { urls: ['https://unmigrated.example/a'] }], ['GET', '/links'], ['GET', '/export']] as const) {
        const res = await unmigrated.inject({ method, url, payload });
        expect(res.statusCode, url).toBe(503);
        expect(res.json(), url).toEqual({ error: 'db_migration', message: expect.stringContaining('run `npx crawl migrate`') });
      }
      // Nor is it ready: Postgres answers, the crawler's tables are not there.
      const ready = await unmigrated.inject({ method: 'GET', url: '/readyz' });
      expect([ready.statusCode, ready.json()]).toEqual([503, { status: 'unavailable', checks: { redis: 'ok', postgres: 'fail' } }]);
    } finally {
      await unmigrated.close();
      await empty.$disconnect().catch(() => undefined);
      await db.prisma.$executeRawUnsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    }
  });
});

describe('API keys', () => {
  it('answers 401 without a key or with a wrong one, 202 with one, on the producer routes and /metrics', async () => {
    const payload = { urls: ['https://auth.example/a'] };
    const before = await db.prisma.link.count();
    for (const authorization of [undefined, 'Bearer', `Bearer ${API_KEY.slice(0, -1)}`, `Bearer ${API_KEY}x`, `Basic ${API_KEY}`, API_KEY, `bearer  ${API_KEY.toUpperCase()}`]) {
      const res = await app.inject({ method: 'POST', url: '/links', payload, headers: authorization === undefined ? {} : { authorization } });
      expect(res.statusCode, String(authorization)).toBe(401);
      expect(res.json()).toMatchObject({ error: 'unauthorized' });
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    }
    expect(await db.prisma.link.count()).toBe(before);
    expect((await authed({ method: 'POST', url: '/links', payload })).statusCode).toBe(202);
    // The scheme is case-insensitive (RFC 7235); the key is not.
    for (const scheme of ['bearer', 'BEARER']) {
      expect((await app.inject({ method: 'POST', url: '/links', payload, headers: { authorization: `${scheme} ${API_KEY}` } })).statusCode, scheme).toBe(202);
    }
    for (const url of ['/metrics', '/links/00000000-0000-4000-8000-000000000000', '/links/00000000-0000-4000-8000-000000000000/content', '/export', '/no-such-route', '/admin/queues/../links', '/healthz/../metrics']) {
      expect((await app.inject({ method: 'GET', url })).statusCode, url).toBe(401);
    }
    // The liveness and readiness probes stay open, and Bull Board keeps its own basic auth.
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/admin/queues', headers: { authorization: basic(AUTH.user, AUTH.password) } })).statusCode).toBe(200);
  });

  it('refuses a key sent in the query string, and does not write it to the log', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => void (lines.push(chunk.toString()), done()) });
    const logged = await createServer({
      prisma: db.prisma, redis, queues, links: new LinkStore(db.prisma), queueNames: QUEUE_NAMES, metrics: createPipelineMetrics(), bullBoard: null,
      apiKeys: [API_KEY], loggerInstance: pino({ level: 'info' }, sink),
    });
    try {
      for (const name of ['api_key', 'access_token', 'token', 'apiKey', 'key', 'X-Api-Key', 'auth', 'password', 'secret']) {
        const res = await logged.inject({ method: 'GET', url: `/links?status=done&${name}=${API_KEY}&limit=5` });
        expect(res.statusCode, name).toBe(401);
      }
      expect(lines.join('')).toContain('"url":"/links?status=done&api_key=[redacted]&limit=5"');
      expect(lines.join('')).not.toContain(API_KEY);
    } finally {
      await logged.close();
    }
  });
});
