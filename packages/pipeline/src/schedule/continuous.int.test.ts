/**
 * Continuous crawling end to end: refresh on demand, re-crawls, and adaptive revisit schedules with two schedulers
 * racing, on a loopback site whose pages change on command. Real Postgres and Redis; assertions on counts and order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRevisitSite, type RevisitSite } from '@crawler/testkit';
import { ScheduleStore, createPrismaClient, type VisitStart } from '@crawler/db';
import { startE2e, waitFor, type E2eCrawler } from '../__fixtures__/e2e.js';
import { createRuntime } from '../runtime/create-runtime.js';
import { RevisitScheduler } from './revisit-scheduler.js';

// A probe that times out on a starved machine is a second request for the page: the probe gets a long timeout, so
// request counts measure the schedule, not the load.
const ENV = { FETCHERS: 'simple_http:4', DOMAIN_MAX_CONCURRENCY: '8', ROUTER_CONCURRENCY: '8', PROBE_TIMEOUT_MS: '30000' };

async function settled(c: E2eCrawler, ids: string[], generation: number): Promise<void> {
  await waitFor(
    async () => (await c.db.prisma.link.count({ where: { id: { in: ids }, status: 'done', generation } })) === ids.length,
    `${ids.length} links done at generation ${generation}`,
    120_000,
  );
}

describe('refresh on demand', () => {
  let site: RevisitSite;
  let c: E2eCrawler;
  beforeAll(async () => {
    site = await startRevisitSite({ staticPages: ['a', 'b', 'c'] });
    c = await startE2e('refresh', ENV);
  });
  afterAll(async () => {
    await c?.cleanup();
    await site?.close();
  });

  it('leaves fresh pages alone, fetches stale ones once under a new generation, keeps what was stored', async () => {
    const first = await c.runtime.enqueue(site.pages());
    const ids = first.accepted.map((a) => a.linkId);
    c.runtime.startWorkers();
    await settled(c, ids, 0);
    expect(site.pages().map((u) => site.requests().get(new URL(u).pathname))).toEqual([1, 1, 1]);
    const firstPages = await c.db.prisma.fetchedContent.findMany({ where: { linkId: { in: ids } }, select: { id: true } });

    // Visited a moment ago: an hour's max age leaves them alone, and says so.
    const fresh = await c.runtime.enqueue(site.pages(), { maxAgeSeconds: 3_600 });
    expect(fresh.accepted.map((a) => [a.refresh, a.queued])).toEqual([['fresh', false], ['fresh', false], ['fresh', false]]);

    site.change('a');
    const again = await c.runtime.enqueue(site.pages(), { maxAgeSeconds: 0 });
    expect(again.accepted.map((a) => [a.refresh, a.queued])).toEqual([['refreshed', true], ['refreshed', true], ['refreshed', true]]);
    // Asked again while that visit is under way (or just over): not a second visit.
    const twice = await c.runtime.enqueue(site.pages(), { maxAgeSeconds: 60 });
    for (const a of twice.accepted) expect(['in_progress', 'fresh']).toContain(a.refresh);
    // A job of the old generation is stale: it is skipped, not a second fetch.
    await c.runtime.queues.enqueueRoutes(ids.map((linkId, i) => ({ linkId, url: site.pages()[i]!, generation: 0 })));
    await settled(c, ids, 1);
    await c.runtime.waitUntilIdle();

    // Exactly one more request per page; the first pages are still stored, and only the page that changed ('a') got a
    // new version (an identical body is not stored twice).
    expect(site.pages().map((u) => site.requests().get(new URL(u).pathname))).toEqual([2, 2, 2]);
    const pages = await c.db.prisma.fetchedContent.findMany({ where: { linkId: { in: ids } }, select: { id: true } });
    expect(pages.length).toBe(4);
    for (const p of firstPages) expect(pages.map((x) => x.id)).toContain(p.id);
    // A fresh attempt budget: the visit's attempts only.
    for (const l of await c.db.prisma.link.findMany({ where: { id: { in: ids } } })) expect(l.attemptCount).toBe(1);
  });
});

describe('re-crawl with a max age', () => {
  let site: RevisitSite;
  let c: E2eCrawler;
  beforeAll(async () => {
    site = await startRevisitSite({ staticPages: ['x', 'y'] });
    c = await startE2e('recrawl', ENV);
  });
  afterAll(async () => {
    await c?.cleanup();
    await site?.close();
  });

  const crawlToEnd = (id: string) => waitFor(async () => (await c.runtime.crawlStore.view(id))?.state === 'done', `crawl ${id}`, 120_000);

  it('fetches stale pages again and discovers new ones as a new crawl, leaving the old crawl its counts', async () => {
    c.runtime.startWorkers();
    const seeds = [`${site.origin}/`];
    const old = await c.runtime.crawls.create({ seeds, scope: 'same-origin' });
    await crawlToEnd(old.crawl.id);
    const before = (await c.runtime.crawlStore.view(old.crawl.id))!;
    expect(before.counters).toMatchObject({ admitted: 3, done: 3 });

    // Without a max age a second crawl fetches nothing: every page is stored already (a duplicate).
    const plain = await c.runtime.crawls.create({ seeds, scope: 'same-origin' });
    await crawlToEnd(plain.crawl.id);
    expect((await c.runtime.crawlStore.view(plain.crawl.id))!.counters).toMatchObject({ admitted: 0, duplicate: 1, refreshed: 0 });

    site.add('z');
    site.change('x');
    const again = await c.runtime.crawls.create({ seeds, scope: 'same-origin', maxAgeSeconds: 0 });
    await crawlToEnd(again.crawl.id);
    const after = (await c.runtime.crawlStore.view(again.crawl.id))!;
    // The seed (stored) was admitted and fetched again, its links followed: x and y again, z new.
    expect(after.counters).toMatchObject({ admitted: 4, refreshed: 3, done: 4, failed: 0 });
    expect(site.requestsOf('x')).toBe(2);
    expect(site.requestsOf('y')).toBe(2);
    expect(site.requestsOf('z')).toBe(1);
    expect(site.requests().get('/')).toBe(2);
    // The old crawl's figures are its own still.
    expect((await c.runtime.crawlStore.view(old.crawl.id))!.counters).toEqual(before.counters);

    // A max age the pages are younger than: the stored seed is fresh, nothing is fetched.
    const fresh = await c.runtime.crawls.create({ seeds, scope: 'same-origin', maxAgeSeconds: 3_600 });
    await crawlToEnd(fresh.crawl.id);
    expect((await c.runtime.crawlStore.view(fresh.crawl.id))!.counters).toMatchObject({ admitted: 0, fresh: 1, refreshed: 0 });
    expect(site.requests().get('/')).toBe(2);
  });

  it('refuses bad ages and intervals, naming the field', async () => {
    await expect(c.runtime.crawls.create({ seeds: [`${site.origin}/`], maxAgeSeconds: -1 })).rejects.toMatchObject({ field: 'maxAgeSeconds' });
    await expect(c.runtime.crawls.create({ seeds: [`${site.origin}/`], revisit: { mode: 'fixed', intervalSeconds: 5 } })).rejects.toMatchObject({ field: 'revisit.intervalSeconds' });
  });
});

describe('adaptive revisits with two schedulers', () => {
  let site: RevisitSite;
  let c: E2eCrawler;
  beforeAll(async () => {
    site = await startRevisitSite({ staticPages: ['s1', 's2', 's3'], alwaysChanging: ['c1', 'c2', 'c3'] });
    // The runtimes' own schedulers are off (SCHEDULER_INTERVAL_MS=0): the test runs two of its own, over two
    // connection pools and two Redis connections, as two worker processes would.
    c = await startE2e('adaptive', { ...ENV, SCHEDULER_INTERVAL_MS: '0', REVISIT_MIN_INTERVAL_S: '0' });
  });
  afterAll(async () => {
    await c?.cleanup();
    await site?.close();
  });

  it('visits changing pages more often than static ones, and never enqueues a due link twice', async () => {
    // A 1 s minimum over 15 s: the changing pages come up about ten times, the static ones five or six (their interval
    // grows 1.4-fold per unchanged visit), about the counts of a 2 s minimum over 30 s.
    const min = 1;
    const enq = await c.runtime.enqueue(site.pages(), { revisit: { mode: 'adaptive', intervalSeconds: min, minSeconds: min, maxSeconds: 120 } });
    const ids = enq.accepted.map((a) => a.linkId);
    const otherPrisma = createPrismaClient(c.db.url);
    const other = createRuntime(c.config, { prisma: otherPrisma });
    const claims: VisitStart[][] = [[], []];
    const schedulers = [
      new RevisitScheduler({ schedule: new ScheduleStore({ prisma: c.db.prisma }), queues: c.runtime.queues, logger: c.runtime.logger, settings: { intervalMs: 200, batchSize: 2, maxQueued: 1_000 }, onClaimed: (b) => claims[0]!.push(...b) }),
      new RevisitScheduler({ schedule: new ScheduleStore({ prisma: otherPrisma }), queues: other.queues, logger: other.logger, settings: { intervalMs: 200, batchSize: 2, maxQueued: 1_000 }, onClaimed: (b) => claims[1]!.push(...b) }),
    ];
    try {
      c.runtime.startWorkers();
      other.startWorkers();
      for (const s of schedulers) s.start();
      await new Promise((r) => setTimeout(r, 15_000));
      for (const s of schedulers) await s.stop();
      await waitFor(async () => (await c.db.prisma.link.count({ where: { id: { in: ids }, status: { not: 'done' } } })) === 0, 'the last visits to end', 120_000);
    } finally {
      await other.close({ drainTimeoutMs: 5_000 });
      await otherPrisma.$disconnect();
    }

    // One claim per (link, generation): no due link was enqueued twice, whichever scheduler took it.
    const all = [...claims[0]!, ...claims[1]!];
    expect(new Set(all.map((v) => `${v.linkId}/${v.generation}`)).size).toBe(all.length);
    const links = await c.db.prisma.link.findMany({ where: { id: { in: ids } } });
    for (const l of links) {
      const name = new URL(l.url).pathname.slice(3);
      // Each claim is one new generation and one request; the first visit was the enqueue.
      expect(all.filter((v) => v.linkId === l.id).length).toBe(l.generation);
      expect(site.requestsOf(name)).toBe(l.generation + 1);
    }
    const visits = (prefix: string) => links.filter((l) => new URL(l.url).pathname.startsWith(`/p/${prefix}`)).map((l) => l.generation + 1);
    const changing = visits('c');
    const still = visits('s');
    expect(changing.reduce((a, b) => a + b, 0)).toBeGreaterThan(still.reduce((a, b) => a + b, 0));
    expect(Math.min(...changing)).toBeGreaterThanOrEqual(Math.max(...still));
    // Where each schedule stands: changing pages at the minimum, static ones grown past it.
    for (const l of links) {
      if (new URL(l.url).pathname.startsWith('/p/c')) expect(l.revisitNextS).toBe(min);
      else expect(l.revisitNextS).toBeGreaterThan(min);
    }
  }, 240_000);
});
