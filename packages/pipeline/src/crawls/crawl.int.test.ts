/**
 * Link-following crawls end to end: real Postgres, real Redis, a generated loopback site graph with cycles,
 * duplicate spellings, off-site links, nofollow, a canonical elsewhere and a sitemap index with a gzipped child.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { html, staticArticle, startSiteGraph, startTestServer, type SiteGraph } from '@crawler/testkit';
import { startE2e, waitFor, type E2eCrawler } from '../__fixtures__/e2e.js';

// A probe that times out on a starved machine has still reached the server, and the fetch that follows is a second
// request for the page: the probe gets the fetch's timeout, so "each page once" measures the frontier, not the load.
const ENV = { FETCHERS: 'simple_http:8', DOMAIN_MAX_CONCURRENCY: '8', ROUTER_CONCURRENCY: '8', PROBE_TIMEOUT_MS: '30000' };

async function crawlToEnd(c: E2eCrawler, id: string): Promise<void> {
  await waitFor(async () => (await c.runtime.crawlStore.view(id))?.state !== 'running', `crawl ${id} to settle`, 180_000);
}

/** Frontier keys of the links a crawl stored, with their depth. */
async function crawlLinks(c: E2eCrawler, id: string) {
  return c.db.prisma.link.findMany({ where: { crawlId: id }, select: { id: true, url: true, status: true, depth: true, discoveredFromId: true } });
}

function keyOf(url: string): string {
  const u = new URL(url);
  const p = u.pathname.length > 1 && u.pathname.endsWith('/') ? u.pathname.slice(0, -1) : u.pathname;
  return `${u.origin}${p}`;
}

function twiceFetched(graph: SiteGraph): string[] {
  return [...graph.pageRequests()].filter(([, n]) => n > 1).map(([k, n]) => `${k} ×${n}`);
}

describe('link-following crawl over a site graph', () => {
  let graph: SiteGraph;
  beforeAll(async () => {
    graph = await startSiteGraph({ pagesPerHost: 500 });
  });
  afterAll(async () => {
    await graph?.close();
  });

  it('fetches exactly the expected pages, each once, and never an off-site host or a resource', async () => {
    graph.resetCounts();
    const c = await startE2e('crawl_full', ENV);
    try {
      const created = await c.runtime.crawls.create({ seeds: graph.seeds, scope: 'same-site', sitemaps: true });
      expect(created.sitemaps?.files.length).toBe(4); // index, plain child, gzipped child, the second host's /sitemap.xml
      c.runtime.startWorkers();
      await crawlToEnd(c, created.crawl.id);

      const expected = graph.expected({ sitemaps: true });
      const fetched = [...graph.pageRequests().keys()].sort();
      expect(fetched).toEqual([...expected.keys()].sort());
      expect(twiceFetched(graph)).toEqual([]);
      expect(graph.offSiteRequests()).toBe(0);
      expect(graph.resourceRequests()).toBe(0);

      const links = await crawlLinks(c, created.crawl.id);
      expect(new Set(links.map((l) => keyOf(l.url)))).toEqual(new Set(expected.keys()));
      const byId = new Map(links.map((l) => [l.id, l]));
      for (const l of links) {
        if (l.discoveredFromId === null) expect(l.depth).toBe(0);
        else expect(l.depth).toBe(byId.get(l.discoveredFromId)!.depth! + 1);
      }
      const view = (await c.runtime.crawlStore.view(created.crawl.id))!;
      expect(view.state).toBe('done');
      expect(view.counters).toMatchObject({ admitted: expected.size, queued: 0, routing: 0, fetching: 0, paused: 0 });
      expect(view.counters.done + view.counters.failed).toBe(expected.size);
      expect(view.counters.duplicate).toBeGreaterThan(expected.size);
      expect(view.counters.outOfScope).toBeGreaterThan(0);
    } finally {
      await c.cleanup();
    }
  }, 300_000);

  it('stops at maxDepth exactly', async () => {
    graph.resetCounts();
    const c = await startE2e('crawl_depth', ENV);
    try {
      const created = await c.runtime.crawls.create({ seeds: graph.seeds, maxDepth: 4 });
      c.runtime.startWorkers();
      await crawlToEnd(c, created.crawl.id);
      const expected = graph.expected({ maxDepth: 4 });
      expect([...graph.pageRequests().keys()].sort()).toEqual([...expected.keys()].sort());
      expect(twiceFetched(graph)).toEqual([]);
      const links = await crawlLinks(c, created.crawl.id);
      for (const l of links) expect([keyOf(l.url), l.depth]).toEqual([keyOf(l.url), expected.get(keyOf(l.url))]);
      const counters = (await c.runtime.crawlStore.view(created.crawl.id))!.counters;
      expect(counters.overLimit).toBeGreaterThan(0);
      // No page budget: every refusal was the depth's, and the counters say so.
      expect(counters.overDepth).toBe(counters.overLimit);
    } finally {
      await c.cleanup();
    }
  }, 300_000);

  it('fetches exactly maxPages pages, within the per-host cap', async () => {
    graph.resetCounts();
    const c = await startE2e('crawl_pages', ENV);
    try {
      const created = await c.runtime.crawls.create({ seeds: graph.seeds, maxPages: 150, maxPagesPerHost: 90 });
      c.runtime.startWorkers();
      // Redis loses the seen set over and over during the crawl: Postgres alone must keep the limits exact.
      const seenKey = `${c.prefix}:crawl-seen:${created.crawl.id}`;
      let wiped = 0;
      const wiper = setInterval(() => {
        void c.runtime.redis.del(seenKey).then((n) => (wiped += n));
      }, 150);
      try {
        await crawlToEnd(c, created.crawl.id);
      } finally {
        clearInterval(wiper);
      }
      expect(wiped).toBeGreaterThan(0);
      const requests = graph.pageRequests();
      expect(requests.size).toBe(150);
      expect(twiceFetched(graph)).toEqual([]);
      const all = graph.expected();
      for (const k of requests.keys()) expect(all.has(k)).toBe(true);
      for (const origin of graph.origins) expect([...requests.keys()].filter((k) => k.startsWith(`${origin}/`)).length).toBeLessThanOrEqual(90);
      const view = (await c.runtime.crawlStore.view(created.crawl.id))!;
      expect(view.counters.admitted).toBe(150);
      expect(view.counters.done + view.counters.failed).toBe(150);
      expect(graph.offSiteRequests()).toBe(0);
    } finally {
      await c.cleanup();
    }
  }, 300_000);

  it('a cancelled crawl fetches nothing new and says cancelled', async () => {
    graph.resetCounts();
    const c = await startE2e('crawl_cancel', { ...ENV, FETCHERS: 'simple_http:2', DOMAIN_MAX_CONCURRENCY: '2', ROUTER_CONCURRENCY: '2' });
    try {
      const created = await c.runtime.crawls.create({ seeds: graph.seeds });
      c.runtime.startWorkers();
      await waitFor(async () => ((await c.runtime.crawlStore.view(created.crawl.id))!.counters.done >= 20 ? true : null), 'some pages done', 60_000);
      expect(await c.runtime.crawlStore.cancel(created.crawl.id)).toBe(true);
      const atCancel = [...graph.pageRequests().values()].reduce((a, b) => a + b, 0);
      await waitFor(async () => ((await c.runtime.isIdle()) ? true : null), 'queues idle', 60_000);
      const after = [...graph.pageRequests().values()].reduce((a, b) => a + b, 0);
      // Requests already on the wire when it was cancelled finish: at most one per fetch slot and router probe slot.
      expect(after - atCancel).toBeLessThanOrEqual(4);
      const view = (await c.runtime.crawlStore.view(created.crawl.id))!;
      expect(view.state).toBe('cancelled');
      expect(view.counters.queued + view.counters.routing + view.counters.paused).toBe(0);
      expect(await c.runtime.crawlStore.cancel(created.crawl.id)).toBe(false);
    } finally {
      await c.cleanup();
    }
  }, 300_000);
});

describe('a seed that redirects to another host', () => {
  it('crawls the site it lands on, as a seed, and nothing beyond it', async () => {
    const landing = await startTestServer({ '/robots.txt': { status: 404 } }, { host: '127.0.0.3' });
    const elsewhere = await startTestServer({ '*': html(staticArticle()) }, { host: '127.0.0.4' });
    // http://example.com/ answering 301 to https://www.example.com/: another host, and another origin.
    const seedHost = await startTestServer({ '/robots.txt': { status: 404 }, '/': { status: 301, headers: { location: landing.url('/') } } }, { host: '127.0.0.2' });
    landing.route('/', html(staticArticle({ links: ['/a', '/b', elsewhere.url('/x')] })));
    landing.route('/a', html(staticArticle({ links: ['/b', '/c'] })));
    landing.route('/b', html(staticArticle()));
    landing.route('/c', html(staticArticle()));
    const c = await startE2e('crawl_seed_redirect', ENV);
    try {
      const created = await c.runtime.crawls.create({ seeds: [seedHost.url('/')], scope: 'same-origin' });
      c.runtime.startWorkers();
      await crawlToEnd(c, created.crawl.id);
      expect(landing.requests.map((r) => r.path).filter((p) => p !== '/robots.txt').sort()).toEqual(['/', '/a', '/b', '/c']);
      expect(elsewhere.requests).toEqual([]);
      const view = (await c.runtime.crawlStore.view(created.crawl.id))!;
      // The crawl says where it went: the landing page is one of its seeds now.
      expect(view.seeds).toEqual([seedHost.url('/'), landing.url('/')]);
      expect(view.counters).toMatchObject({ admitted: 4, done: 4, failed: 0, outOfScope: 1 });
    } finally {
      await c.cleanup();
      await Promise.all([seedHost.close(), landing.close(), elsewhere.close()]);
    }
  }, 120_000);
});

describe('a page that redirects within the crawl', () => {
  it('is not fetched again when a link to where it landed is found later', async () => {
    const site = await startTestServer({ '/robots.txt': { status: 404 } }, { host: '127.0.0.2' });
    site.route('/', html(staticArticle({ links: ['/old', '/a'] })));
    site.route('/old', { status: 301, headers: { location: '/new' } });
    site.route('/a', html(staticArticle({ links: ['/b'] })));
    site.route('/b', html(staticArticle({ links: ['/c'] })));
    // Found two levels after /old was fetched (and landed on /new).
    site.route('/c', html(staticArticle({ links: ['/new'] })));
    site.route('/new', html(staticArticle()));
    const c = await startE2e('crawl_redirect_seen', { ...ENV, FETCHERS: 'simple_http:1', DOMAIN_MAX_CONCURRENCY: '1', ROUTER_CONCURRENCY: '1' });
    try {
      const created = await c.runtime.crawls.create({ seeds: [site.url('/')] });
      c.runtime.startWorkers();
      await crawlToEnd(c, created.crawl.id);
      expect(site.hits('/c')).toBe(1);
      expect(site.hits('/new')).toBe(1);
      const view = (await c.runtime.crawlStore.view(created.crawl.id))!;
      expect(view.counters).toMatchObject({ admitted: 5, done: 5, failed: 0 });
    } finally {
      await c.cleanup();
      await site.close();
    }
  }, 120_000);
});

describe('a page whose X-Robots-Tag header says nofollow', () => {
  it('is stored, and its links are not followed unless followNofollow', async () => {
    const site = await startTestServer({ '/robots.txt': { status: 404 } }, { host: '127.0.0.2' });
    site.route('/', html(staticArticle({ links: ['/private', '/public'] })));
    site.route('/private', html(staticArticle({ links: ['/hidden'] }), 200, { 'x-robots-tag': 'noindex, nofollow' }));
    site.route('/public', html(staticArticle({ links: ['/shown'] }), 200, { 'x-robots-tag': 'otherbot: nofollow' }));
    site.route('*', html(staticArticle()));
    const c = await startE2e('crawl_x_robots', ENV);
    try {
      const created = await c.runtime.crawls.create({ seeds: [site.url('/')] });
      c.runtime.startWorkers();
      await crawlToEnd(c, created.crawl.id);
      expect(site.hits('/private')).toBe(1);
      expect(site.hits('/shown')).toBe(1);
      expect(site.hits('/hidden')).toBe(0);
      const followed = await c.runtime.crawls.create({ seeds: [site.url('/private')], followNofollow: true, maxAgeSeconds: 0 });
      await crawlToEnd(c, followed.crawl.id);
      expect(site.hits('/hidden')).toBe(1);
    } finally {
      await c.cleanup();
      await site.close();
    }
  }, 120_000);
});

describe('a 300 Multiple Choices with a Location', () => {
  it('is stored as the 300 it is, and its Location is followed as a link of it', async () => {
    const site = await startTestServer({ '/robots.txt': { status: 404 } }, { host: '127.0.0.2' });
    site.route('/', html(staticArticle({ links: ['/choices'] })));
    site.route('/choices', html(staticArticle({ links: ['/choice-fr'] }), 300, { location: '/choice-en' }));
    site.route('*', html(staticArticle()));
    const c = await startE2e('crawl_300', ENV);
    try {
      const created = await c.runtime.crawls.create({ seeds: [site.url('/')] });
      c.runtime.startWorkers();
      await crawlToEnd(c, created.crawl.id);
      expect(site.hits('/choice-en')).toBe(1);
      // The body of a 300 is not the site's navigation any more than a 404's is.
      expect(site.hits('/choice-fr')).toBe(0);
      const links = await crawlLinks(c, created.crawl.id);
      const choices = links.find((l) => l.url.endsWith('/choices'))!;
      expect(links.find((l) => l.url.endsWith('/choice-en'))).toMatchObject({ depth: 2, discoveredFromId: choices.id });
      const page = await c.db.prisma.fetchedContent.findFirst({ where: { linkId: choices.id }, select: { httpStatus: true } });
      expect(page?.httpStatus).toBe(300);
      expect((await c.runtime.crawlStore.view(created.crawl.id))!.counters).toMatchObject({ admitted: 3, done: 3, failed: 0 });
    } finally {
      await c.cleanup();
      await site.close();
    }
  }, 120_000);
});

describe('a page found by a crawl that redirects off its scope', () => {
  it('is settled without being stored, its links are not followed, and the link and the crawl say where it went', async () => {
    const elsewhere = await startTestServer({ '/robots.txt': { status: 404 } }, { host: '127.0.0.4' });
    elsewhere.route('/landing', html(staticArticle({ links: ['/deeper'] })));
    elsewhere.route('/deeper', html(staticArticle()));
    elsewhere.route('/report.pdf', { body: '%PDF-1.4 not the crawl\'s', headers: { 'content-type': 'application/pdf' } });
    const site = await startTestServer({ '/robots.txt': { status: 404 } }, { host: '127.0.0.2' });
    // A link shortener, an old URL moved to a partner: found on the site, answered with another site's page.
    site.route('/', html(staticArticle({ links: ['/a', '/go/partner', '/files/report.pdf'] })));
    site.route('/a', html(staticArticle()));
    site.route('/go/partner', { status: 302, headers: { location: elsewhere.url('/landing') } });
    site.route('/files/report.pdf', { status: 301, headers: { location: elsewhere.url('/report.pdf') } });
    const c = await startE2e('crawl_redirect_off_scope', ENV);
    try {
      const created = await c.runtime.crawls.create({ seeds: [site.url('/')] });
      c.runtime.startWorkers();
      await crawlToEnd(c, created.crawl.id);
      const links = await c.db.prisma.link.findMany({ where: { crawlId: created.crawl.id }, orderBy: { url: 'asc' } });
      const stored = await Promise.all(links.map(async (l) => (await c.content.latestForLink(l.id)) !== null));
      expect(links.map((l, i) => [new URL(l.url).pathname, l.status, l.lastErrorType, stored[i]])).toEqual([
        ['/', 'done', null, true],
        ['/a', 'done', null, true],
        ['/files/report.pdf', 'done', 'redirected_off_scope', false],
        ['/go/partner', 'done', 'redirected_off_scope', false],
      ]);
      expect(links.find((l) => l.url.endsWith('/go/partner'))!.lastError).toBe(`redirected to ${elsewhere.url('/landing')}, outside the crawl's scope: not stored, its links not followed`);
      // The fetch worked: its attempt is a success of its fetcher, not evidence against it.
      const attempts = await c.db.prisma.fetcherAttempt.findMany({ where: { linkId: { in: links.map((l) => l.id) } } });
      expect(attempts.every((a) => a.success)).toBe(true);
      expect(elsewhere.hits('/deeper')).toBe(0);
      const view = (await c.runtime.crawlStore.view(created.crawl.id))!;
      // Settled, not failed (`crawl crawl` exits 0): a login link answering with the SSO's page is no failure of the crawl.
      expect(view.counters).toMatchObject({ admitted: 4, done: 4, failed: 0, outOfScope: 2 });
      expect(view.outOfScopeSamples).toEqual({ scope: expect.arrayContaining([elsewhere.url('/landing'), elsewhere.url('/report.pdf')]) });
    } finally {
      await c.cleanup();
      await Promise.all([site.close(), elsewhere.close()]);
    }
  }, 120_000);
});
