/**
 * Crawls seeded with feeds, end to end: real Postgres, real Redis, loopback servers serving RSS, Atom and RSS 1.0 under
 * the types sites use, a page naming its feed, hostile feeds (entity bombs, external entities, HTML labelled XML, a
 * near-10 MB feed) and a feed with thousands of entries under the crawl's limits.
 */
import { describe, expect, it } from 'vitest';
import { html, staticArticle, startTestServer } from '@crawler/testkit';
import { startE2e, waitFor, type E2eCrawler } from '../__fixtures__/e2e.js';

const ENV = { FETCHERS: 'simple_http:4', DOMAIN_MAX_CONCURRENCY: '4', ROUTER_CONCURRENCY: '4', PROBE_TIMEOUT_MS: '30000' };

async function crawlToEnd(c: E2eCrawler, id: string): Promise<void> {
  await waitFor(async () => (await c.runtime.crawlStore.view(id))?.state !== 'running', `crawl ${id} to settle`, 180_000);
}

function xml(body: string, type: string): { status: number; body: string; headers: Record<string, string> } {
  return { status: 200, body, headers: { 'content-type': `${type}; charset=utf-8` } };
}

/** Paths the crawl asked the server for, robots.txt aside. */
function fetched(site: { requests: Array<{ path: string }> }): string[] {
  return [...new Set(site.requests.map((r) => r.path).filter((p) => p !== '/robots.txt'))].sort();
}

describe('a crawl seeded with feeds', () => {
  it("follows RSS, Atom and RSS 1.0 entries and a seed page's own feed (not every post's), under the crawl's scope and exclude rules", async () => {
    const site = await startTestServer({ '/robots.txt': { status: 404 } }, { host: '127.0.0.2' });
    const elsewhere = await startTestServer({ '*': html(staticArticle()) }, { host: '127.0.0.3' });
    site.route('/feed.rss', xml(`<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>News</title><link>${site.url('/')}</link>
      <item><title>a</title><link>${site.url('/posts/a')}</link><guid isPermaLink="false">post-a</guid></item>
      <item><title>b</title><guid>${site.url('/posts/b')}</guid></item>
      <item><title>off</title><link>${elsewhere.url('/story')}</link></item>
      <item><title>private</title><link>/private/draft</link></item></channel></rss>`, 'application/rss+xml'));
    site.route('/', html(staticArticle()));
    // A seed names the site's feed; a post names its comments feed, which the crawl leaves alone.
    site.route('/home', html(staticArticle({ head: '<link rel="alternate" type="application/atom+xml" title="Atom" href="/atom">' })));
    site.route('/posts/a', html(staticArticle({ head: '<link rel="alternate" type="application/rss+xml" title="Comments" href="/posts/a/feed/">' })));
    site.route('/posts/b', html(staticArticle()));
    site.route('/atom', xml(`<feed xmlns="http://www.w3.org/2005/Atom"><title>News</title><link rel="self" href="/atom"/>
      <entry xml:base="/archive/2026/"><title>c</title><link rel="alternate" type="text/html" href="c"/><link rel="edit" href="/edit/c"/></entry></feed>`, 'application/atom+xml'));
    site.route('/archive/2026/c', html(staticArticle()));
    site.route('/rdf', xml(`<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">
      <channel rdf:about="${site.url('/rdf')}"><title>x</title></channel><item rdf:about="${site.url('/posts/d')}"><link>/posts/d</link></item></rdf:RDF>`, 'text/xml'));
    site.route('/posts/d', html(staticArticle({ links: ['/feed.php'] })));
    // A script that wrote its feed without setting a Content-Type: PHP's default is text/html.
    site.route('/feed.php', html(`<?xml version="1.0"?>\n<rss version="2.0"><channel><item><link>${site.url('/posts/e')}</link></item></channel></rss>`));
    site.route('*', html(staticArticle()));
    const c = await startE2e('crawl_feeds', ENV);
    try {
      const created = await c.runtime.crawls.create({ seeds: [site.url('/feed.rss'), site.url('/rdf'), site.url('/home')], exclude: ['/private/**'] });
      c.runtime.startWorkers();
      await crawlToEnd(c, created.crawl.id);
      expect(fetched(site)).toEqual(['/', '/archive/2026/c', '/atom', '/feed.php', '/feed.rss', '/home', '/posts/a', '/posts/b', '/posts/d', '/posts/e', '/rdf']);
      expect(elsewhere.requests).toEqual([]);
      const links = await c.db.prisma.link.findMany({ where: { crawlId: created.crawl.id }, select: { url: true, depth: true } });
      expect(links.find((l) => l.url.endsWith('/archive/2026/c'))?.depth).toBe(2);
      const view = (await c.runtime.crawlStore.view(created.crawl.id))!;
      expect(view.counters).toMatchObject({ admitted: 11, done: 11, failed: 0 });
      expect(view.counters.outOfScope).toBeGreaterThanOrEqual(2);
    } finally {
      await c.cleanup();
      await Promise.all([site.close(), elsewhere.close()]);
    }
  }, 240_000);

  it("follows a JSON Feed's items, home page and next page, served as feed+json or plain JSON, and a seed page's own JSON Feed", async () => {
    const site = await startTestServer({ '/robots.txt': { status: 404 } }, { host: '127.0.0.2' });
    const json = (body: object, type: string) => ({ status: 200, body: JSON.stringify(body), headers: { 'content-type': type } });
    site.route('/feed.json', json({
      version: 'https://jsonfeed.org/version/1.1', title: 'News', home_page_url: site.url('/'), feed_url: site.url('/feed.json'), next_url: '/feed.json?page=2',
      items: [{ id: '1', url: site.url('/posts/a'), external_url: 'https://elsewhere.invalid/story' }, { id: '2', url: '/posts/b?utm_source=feed' }],
    }, 'application/feed+json'));
    site.route('/feed.json?page=2', json({ version: 'https://jsonfeed.org/version/1', items: [{ id: '3', url: '/posts/c' }] }, 'application/json'));
    site.route('/home', html(staticArticle({ head: '<link rel="alternate" type="application/feed+json" title="JSON Feed" href="/site.json">' })));
    site.route('/site.json', json({ version: 'https://jsonfeed.org/version/1.1', items: [{ id: 'd', url: '/posts/d' }] }, 'application/feed+json; charset=utf-8'));
    // An API's JSON is not a feed: nothing in it is followed.
    site.route('/api.json', json({ items: [{ url: '/from-api' }] }, 'application/json'));
    site.route('*', html(staticArticle()));
    const c = await startE2e('crawl_json_feeds', ENV);
    try {
      const created = await c.runtime.crawls.create({ seeds: [site.url('/feed.json'), site.url('/home'), site.url('/api.json')] });
      c.runtime.startWorkers();
      await crawlToEnd(c, created.crawl.id);
      const paths = [...new Set(site.requests.map((r) => r.path).filter((p) => p !== '/robots.txt'))].sort();
      expect(paths).toEqual(['/', '/api.json', '/feed.json', '/feed.json?page=2', '/home', '/posts/a', '/posts/b', '/posts/c', '/posts/d', '/site.json']);
      const view = (await c.runtime.crawlStore.view(created.crawl.id))!;
      expect(view.counters).toMatchObject({ admitted: 10, done: 10, failed: 0 });
    } finally {
      await c.cleanup();
      await site.close();
    }
  }, 240_000);

  it("follows the feed of the page a seed lands on by meta refresh, Refresh header or 300 Location, as a redirecting seed's", async () => {
    const site = await startTestServer({ '/robots.txt': { status: 404 } }, { host: '127.0.0.2' });
    const NAMES = ['meta', 'header', 'choice', 'redirect'];
    site.route('/meta', html(staticArticle({ head: '<meta http-equiv="refresh" content="0; url=/meta-front">' })));
    site.route('/header', html(staticArticle(), 200, { refresh: '0;url=/header-front' }));
    site.route('/choice', html(staticArticle(), 300, { location: '/choice-front' }));
    site.route('/redirect', { status: 302, headers: { location: '/redirect-front' } });
    for (const name of NAMES) {
      site.route(`/${name}-front`, html(staticArticle({ head: `<link rel="alternate" type="application/rss+xml" href="/${name}.rss">`, links: [`/${name}-post`] })));
      site.route(`/${name}.rss`, xml(`<rss version="2.0"><channel><item><link>${site.url(`/${name}-entry`)}</link></item></channel></rss>`, 'application/rss+xml'));
      // A landing page's links are one step from the seed, as a redirecting seed's are: two steps are within maxDepth 2.
      site.route(`/${name}-post`, html(staticArticle({ links: [`/${name}-deeper`] })));
      site.route(`/${name}-deeper`, html(staticArticle({ links: [`/${name}-deepest`] })));
    }
    site.route('*', html(staticArticle()));
    const c = await startE2e('crawl_feeds_landing', ENV);
    try {
      const created = await c.runtime.crawls.create({ seeds: NAMES.map((n) => site.url(`/${n}`)), maxDepth: 2 });
      c.runtime.startWorkers();
      await crawlToEnd(c, created.crawl.id);
      const paths = (n: string) => [`${n}-entry`, `${n}-post`, `${n}-deeper`, `${n}-deepest`];
      const hits = Object.fromEntries(NAMES.flatMap((n) => paths(n).map((p) => [p, site.hits(`/${p}`)])));
      expect(hits).toEqual(Object.fromEntries(NAMES.flatMap((n) => paths(n).map((p) => [p, p.endsWith('deepest') ? 0 : 1]))));
      const links = await c.db.prisma.link.findMany({ where: { crawlId: created.crawl.id }, select: { url: true, depth: true } });
      expect(links.filter((l) => l.url.endsWith('-front')).map((l) => l.depth)).toEqual([0, 0, 0]);
    } finally {
      await c.cleanup();
      await site.close();
    }
  }, 240_000);

  it('goes on where a seed sends the reader off its scope by meta refresh or Refresh header, as where a seed redirects', async () => {
    const moved = await startTestServer({ '/robots.txt': { status: 404 } }, { host: '127.0.0.2' });
    const now = await startTestServer({ '/robots.txt': { status: 404 } }, { host: '127.0.0.4' });
    const elsewhere = await startTestServer({ '*': html(staticArticle()) }, { host: '127.0.0.5' });
    // The old host says "we moved" and nothing else; the new one is the site.
    moved.route('/', html(staticArticle({ head: `<meta http-equiv="refresh" content="0; url=${now.url('/')}">`, links: [elsewhere.url('/ad')] })));
    moved.route('/old-news', html(staticArticle(), 200, { refresh: `1;url=${now.url('/news')}` }));
    now.route('/', html(staticArticle({ links: ['/about'] })));
    now.route('/news', html(staticArticle({ links: ['/news/1'] })));
    now.route('*', html(staticArticle()));
    const c = await startE2e('crawl_refresh_moved', ENV);
    try {
      const created = await c.runtime.crawls.create({ seeds: [moved.url('/'), moved.url('/old-news')], maxDepth: 1 });
      c.runtime.startWorkers();
      await crawlToEnd(c, created.crawl.id);
      expect(fetched(now)).toEqual(['/', '/about', '/news', '/news/1']);
      // Only the landing pages joined the scope: a link of the old page to a third host is still off it.
      expect(elsewhere.requests).toEqual([]);
      const view = (await c.runtime.crawlStore.view(created.crawl.id))!;
      // The first landing on the new host made it a seed; the other landing, on a host now in scope, needed not be one.
      expect(view.seeds.filter((u) => u.startsWith(now.url('/'))).length).toBeGreaterThanOrEqual(1);
      const links = await c.db.prisma.link.findMany({ where: { crawlId: created.crawl.id }, select: { url: true, depth: true } });
      expect(links.filter((l) => l.url.startsWith(now.url('/'))).map((l) => [new URL(l.url).pathname, l.depth]).sort()).toEqual([
        ['/', 0], ['/about', 1], ['/news', 0], ['/news/1', 1],
      ]);
    } finally {
      await c.cleanup();
      await Promise.all([moved.close(), now.close(), elsewhere.close()]);
    }
  }, 240_000);

  it('expands no entity and fetches nothing a DTD names; reads HTML labelled XML as a page; reads a near-10 MB feed', async () => {
    const site = await startTestServer({ '/robots.txt': { status: 404 } }, { host: '127.0.0.2' });
    const laughs = Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`).join('');
    site.route('/bomb.xml', xml(`<?xml version="1.0"?><!DOCTYPE rss SYSTEM "${site.url('/dtd')}" [<!ENTITY lol0 "lol">${laughs}
      <!ENTITY xxe SYSTEM "${site.url('/xxe')}"><!ENTITY % remote SYSTEM "${site.url('/param')}"> %remote;]>
      <rss><channel><item><link>/&lol9;</link></item><item><link>&xxe;</link></item><item><link>/after-bomb</link></item></channel></rss>`, 'application/rss+xml'));
    site.route('/mislabelled.xml', xml(`<!DOCTYPE html><html><head><title>not a feed</title></head><body><p>Hello<br><a href="/from-html">x</a></body></html>`, 'application/xml'));
    const padding = `<description>${'Lorem ipsum dolor sit amet. '.repeat(200)}</description>`;
    const entries = Array.from({ length: 1600 }, (_, i) => `<item><title>${i}</title>${padding}<link>/big/${i % 2 === 0 ? 'even' : 'odd'}</link></item>`).join('');
    const big = `<rss><channel>${entries}<item><link>/big/last</link></item></channel></rss>`;
    expect(big.length).toBeGreaterThan(9_000_000);
    site.route('/big.xml', xml(big, 'application/rss+xml'));
    site.route('*', html(staticArticle()));
    const c = await startE2e('crawl_feeds_hostile', ENV);
    try {
      const created = await c.runtime.crawls.create({ seeds: [site.url('/bomb.xml'), site.url('/mislabelled.xml'), site.url('/big.xml')] });
      c.runtime.startWorkers();
      await crawlToEnd(c, created.crawl.id);
      expect(site.hits('/dtd') + site.hits('/xxe') + site.hits('/param')).toBe(0);
      expect(fetched(site)).toEqual(['/after-bomb', '/big.xml', '/big/even', '/big/last', '/big/odd', '/bomb.xml', '/from-html', '/mislabelled.xml']);
      const view = (await c.runtime.crawlStore.view(created.crawl.id))!;
      expect(view.counters).toMatchObject({ admitted: 8, done: 8, failed: 0 });
    } finally {
      await c.cleanup();
      await site.close();
    }
  }, 240_000);

  it("admits no more of a feed's thousands of entries than maxPages and maxPagesPerHost allow", async () => {
    const a = await startTestServer({ '/robots.txt': { status: 404 }, '*': html(staticArticle()) }, { host: '127.0.0.2' });
    const b = await startTestServer({ '/robots.txt': { status: 404 }, '*': html(staticArticle()) }, { host: '127.0.0.3' });
    const items = Array.from({ length: 4000 }, (_, i) => `<item><link>${(i % 2 === 0 ? a : b).url(`/p/${i}`)}</link></item>`).join('');
    a.route('/feed', xml(`<rss><channel>${items}</channel></rss>`, 'application/rss+xml'));
    const c = await startE2e('crawl_feeds_limits', ENV);
    try {
      const created = await c.runtime.crawls.create({ seeds: [a.url('/feed')], scope: 'all', maxPages: 30, maxPagesPerHost: 12 });
      c.runtime.startWorkers();
      await crawlToEnd(c, created.crawl.id);
      expect(fetched(a).length).toBe(12);
      expect(fetched(b).length).toBe(12);
      const view = (await c.runtime.crawlStore.view(created.crawl.id))!;
      expect(view.counters).toMatchObject({ admitted: 24, done: 24, failed: 0 });
      expect(view.counters.overLimit).toBeGreaterThan(0);
    } finally {
      await c.cleanup();
      await Promise.all([a.close(), b.close()]);
    }
  }, 240_000);
});
