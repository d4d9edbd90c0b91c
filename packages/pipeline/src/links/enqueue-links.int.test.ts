import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { JobQueues, ROUTE_QUEUE, createRedisConnection, closeRedisConnection } from '@crawler/queue';
import { LinkStore, ScheduleStore } from '@crawler/db';
import { enqueueLinks } from './enqueue-links.js';

const redis = createRedisConnection(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'worker');
const prefix = `{crawler_test_pipeline_enqueue_${process.pid}}`;
let db: TestDatabase;
let queues: JobQueues;

beforeAll(async () => {
  db = await createTestDatabase('pipeline_enqueue');
  queues = new JobQueues({ connection: redis, prefix });
});

afterAll(async () => {
  await queues.obliterate([ROUTE_QUEUE]);
  await queues.close();
  await closeRedisConnection(redis);
  await db.drop();
});

describe('enqueueLinks on real Postgres and Redis', () => {

  it('stores a batch larger than one statement allows, once per page, with one job per link', async () => {
    const urls = Array.from({ length: 2_500 }, (_, i) => `https://site${i % 7}.example/page/${i}`);
    const links = new LinkStore(db.prisma);
    const res = await enqueueLinks([...urls, ...urls.slice(0, 10).map((u) => `${u}#dup`)], { links, queues, learningModeEnabled: false });
    expect(res.rejected).toEqual([]);
    expect(res.accepted).toHaveLength(2_510);
    expect(res.accepted.filter((a) => a.created)).toHaveLength(2_500);
    expect(await db.prisma.link.count()).toBe(2_500);
    expect(await db.prisma.link.count({ where: { learningModeEnabled: false, domain: 'site3.example' } })).toBeGreaterThan(300);
    expect((await queues.countJobs([ROUTE_QUEUE])).waiting).toBe(2_500);
  }, 60_000);

  it("queues again a posted URL whose link failed only because someone's crawl was cancelled; other failures stay failed", async () => {
    const links = new LinkStore(db.prisma);
    const urls = ['https://cancelled.example/page', 'https://gone.example/page'];
    const [cancelled, gone] = await links.upsertMany(urls.map((url) => ({ url, initialUrl: url, domain: new URL(url).hostname })));
    // Cancelled mid-visit, after two attempts: the page it is posted for again gets a whole attempt budget.
    await links.update(cancelled!.id, { status: 'failed', lastErrorType: 'crawl_cancelled', lastError: 'the crawl was cancelled', attemptsMade: 2 });
    await links.update(gone!.id, { status: 'failed', lastErrorType: 'robots_disallowed', lastError: 'robots.txt disallows /page' });
    await queues.obliterate([ROUTE_QUEUE]);
    const res = await enqueueLinks(urls, { links, queues });
    expect(res.accepted.map((a) => [a.url, a.created, a.queued])).toEqual([[urls[0], false, true], [urls[1], false, false]]);
    expect(await links.get(cancelled!.id)).toMatchObject({ status: 'queued', lastErrorType: null, generation: cancelled!.generation + 1, attemptCount: 0 });
    expect(await links.get(gone!.id)).toMatchObject({ status: 'failed', lastErrorType: 'robots_disallowed' });
    const jobs = await queues.routeQueue().getJobs(['waiting']);
    expect(jobs.map((j) => j.data.linkId)).toEqual([cancelled!.id]);
  });

  it('queues again a posted URL whose link failed because its exits were down, its site rate-limited it or the fleet ran no tool for it', async () => {
    const links = new LinkStore(db.prisma);
    const urls = ['https://exits.example/page', 'https://slow-down.example/page', 'https://walled.example/page', 'https://no-tool.example/page'];
    const [exits, limited, walled, noTool] = await links.upsertMany(urls.map((url) => ({ url, initialUrl: url, domain: new URL(url).hostname })));
    // FETCHERS set wrong (a browser box's list on a router), mended since: the page was never asked for.
    await links.update(noTool!.id, { status: 'failed', lastErrorType: 'unknown_fetcher', lastError: "fetcher 'playwright_stealth' is not configured (FETCHERS=simple_http)" });
    await links.update(exits!.id, { status: 'failed', lastErrorType: 'proxy_unavailable', lastError: "every proxy refused; not retried (re-post the link once the tier's proxies work)", attemptsMade: 3 });
    await links.update(limited!.id, { status: 'failed', lastErrorType: 'rate_limited', lastError: 'rate limited on 3 robots.txt checks in a row (429); re-post the link to try again' });
    // A wall that stood longer than links wait on it: "not retried" — a producer re-posting its URLs does not hit it again.
    await links.update(walled!.id, { status: 'failed', lastErrorType: 'blocked_403', lastError: 'blocked: the site\'s wall refused every tool of the fleet; not retried' });
    await queues.obliterate([ROUTE_QUEUE]);
    const res = await enqueueLinks(urls, { links, queues });
    expect(res.accepted.map((a) => a.queued)).toEqual([true, true, false, true]);
    expect(await links.get(exits!.id)).toMatchObject({ status: 'queued', lastErrorType: null, attemptCount: 0 });
    expect(await links.get(limited!.id)).toMatchObject({ status: 'queued', lastErrorType: null });
    expect(await links.get(walled!.id)).toMatchObject({ status: 'failed', lastErrorType: 'blocked_403' });
    const jobs = await queues.routeQueue().getJobs(['waiting']);
    expect(jobs.map((j) => j.data.linkId).sort()).toEqual([exits!.id, limited!.id, noTool!.id].sort());
  });

  it('queues again a posted URL the SSRF guard refused, so a FETCH_ALLOW_HOSTS set since lets it through', async () => {
    const links = new LinkStore(db.prisma);
    const url = 'http://127.0.0.2:8080/page';
    const [local] = await links.upsertMany([{ url, initialUrl: url, domain: '127.0.0.2' }]);
    // What `crawl crawl` against a local site stores before the user follows its hint and sets FETCH_ALLOW_HOSTS.
    await links.update(local!.id, { status: 'failed', lastErrorType: 'blocked_address', lastError: 'refused: the target is not a public address' });
    await queues.obliterate([ROUTE_QUEUE]);
    const res = await enqueueLinks([url], { links, queues });
    expect(res.accepted.map((a) => a.queued)).toEqual([true]);
    expect(await links.get(local!.id)).toMatchObject({ status: 'queued', lastErrorType: null });
    expect((await queues.routeQueue().getJobs(['waiting'])).map((j) => j.data.linkId)).toEqual([local!.id]);
  });

  it('stores the priority of a refresh and of a revived link, so a job rebuilt from Postgres keeps its place', async () => {
    const links = new LinkStore(db.prisma);
    const schedule = new ScheduleStore({ prisma: db.prisma });
    const urls = ['https://backfill.example/old-page', 'https://backfill.example/was-down'];
    const [old, down] = await links.upsertMany(urls.map((url) => ({ url, initialUrl: url, domain: new URL(url).hostname })));
    await links.update(old!.id, { status: 'done', lastAttemptAt: new Date(Date.now() - 86_400_000) });
    await links.update(down!.id, { status: 'failed', lastErrorType: 'site_unreachable', lastError: 'robots.txt unreachable' });
    await queues.obliterate([ROUTE_QUEUE]);
    // A backfill: behind everyday work.
    const res = await enqueueLinks(urls, { links, queues, schedule, maxAgeSeconds: 3_600, priority: 500 });
    expect(res.accepted.map((a) => a.queued)).toEqual([true, true]);
    const jobs = await queues.routeQueue().getJobs(['prioritized']);
    expect(jobs.map((j) => [j.data.linkId, j.opts.priority]).sort()).toEqual([[old!.id, 500], [down!.id, 500]].sort());
    // What the reconciler reads to rebuild the jobs when Redis lost them.
    const stale = await links.staleUnfinished('queued', new Date(Date.now() + 60_000), { updatedAt: new Date(0), id: '00000000-0000-0000-0000-000000000000' }, 10_000);
    expect(stale.filter((s) => s.id === old!.id || s.id === down!.id).map((s) => s.priority)).toEqual([500, 500]);
  });

  it('stores a campaign link as its page: tracking parameters stripped, the rest in order, one link and one job', async () => {
    const links = new LinkStore(db.prisma);
    await queues.obliterate([ROUTE_QUEUE]);
    const res = await enqueueLinks([
      'https://news.example/story?b=2&utm_source=tw&a=1&fbclid=IwAR0',
      'https://news.example/story?b=2&a=1',
      'https://news.example/story?gclid=x&b=2&mc_eid=9&a=1&utm_campaign=spring',
    ], { links, queues });
    expect(res.rejected).toEqual([]);
    expect(res.accepted.map((a) => [a.url, a.created, a.queued])).toEqual([
      ['https://news.example/story?b=2&a=1', true, true],
      ['https://news.example/story?b=2&a=1', false, false],
      ['https://news.example/story?b=2&a=1', false, false],
    ]);
    const stored = await db.prisma.link.findMany({ where: { domain: 'news.example' } });
    // What is stored is what dedup keyed on; the input as given is kept as the initial URL.
    expect(stored.map((l) => [l.url, l.initialUrl])).toEqual([['https://news.example/story?b=2&a=1', 'https://news.example/story?b=2&utm_source=tw&a=1&fbclid=IwAR0']]);
    const jobs = await queues.routeQueue().getJobs(['waiting']);
    expect(jobs.map((j) => j.data.url)).toEqual(['https://news.example/story?b=2&a=1']);
    // A list of one's own replaces the default one.
    const own = await enqueueLinks(['https://news.example/story?b=2&a=1&ref=nav&utm_source=x'], { links, queues, trackingParams: ['ref'] });
    expect(own.accepted.map((a) => a.url)).toEqual(['https://news.example/story?b=2&a=1&utm_source=x']);
  });

  it('keeps a link stored with its tracking parameters before they were stripped: no second row for that page', async () => {
    const links = new LinkStore(db.prisma);
    const legacyUrl = 'https://legacy.example/post?id=3&utm_source=mail';
    const [legacy] = await links.upsertMany([{ url: legacyUrl, initialUrl: legacyUrl, domain: 'legacy.example' }]);
    await links.update(legacy!.id, { status: 'done' });
    const res = await enqueueLinks([legacyUrl, 'https://legacy.example/other?utm_source=mail'], { links, queues });
    expect(res.accepted.map((a) => [a.url, a.linkId === legacy!.id, a.created])).toEqual([
      [legacyUrl, true, false],
      ['https://legacy.example/other', false, true],
    ]);
    expect(await db.prisma.link.count({ where: { domain: 'legacy.example' } })).toBe(2);
    // Once the page is stored under its stripped URL too, that one is the page's link for every spelling.
    const clean = await enqueueLinks(['https://legacy.example/post?id=3'], { links, queues });
    const again = await enqueueLinks([legacyUrl], { links, queues });
    expect(again.accepted[0]!.linkId).toBe(clean.accepted[0]!.linkId);
  });
});

describe('enqueueLinks when Redis does not answer', () => {
  it('stores the links and answers them deferred when Redis takes a connection and never answers', async () => {
    // A Redis host that hangs (a stopped process, a black-holed route): the connection opens, nothing comes back.
    const sockets: Socket[] = [];
    const silent = createServer((s) => sockets.push(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const hung = createRedisConnection(`redis://127.0.0.1:${port}`, 'producer');
    hung.on('error', () => undefined);
    const hungQueues = new JobQueues({ connection: hung, prefix });
    try {
      const links = new LinkStore(db.prisma);
      const urls = ['https://hung-redis.example/a', 'https://hung-redis.example/b'];
      const res = await enqueueLinks(urls, { links, queues: hungQueues, enqueueWaitMs: 300 });
      expect(res.accepted.map((a) => [a.url, a.created, a.queued, a.deferred])).toEqual(urls.map((u) => [u, true, false, true]));
      expect(res.deferred?.reason).toMatch(/within 300 ms/);
      // Stored as queued: the reconciler's to give a job (Postgres is the truth).
      expect((await db.prisma.link.findMany({ where: { url: { in: urls } } })).map((l) => l.status)).toEqual(['queued', 'queued']);
    } finally {
      hung.disconnect();
      for (const s of sockets) s.destroy();
      silent.close();
    }
  }, 30_000);
});
