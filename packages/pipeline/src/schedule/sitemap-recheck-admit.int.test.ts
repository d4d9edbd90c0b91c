/**
 * A continuous crawl whose site lists new pages in its sitemap after the crawl was created: a re-read admits them as
 * the crawl's creation admits sitemap entries (scope, include/exclude, tracking parameters, maxPages, dedup) and the
 * workers fetch them; a re-read of a sitemap that has not changed is one conditional request answered 304. Real
 * Postgres and Redis; a loopback site whose sitemap sends an ETag and honours If-None-Match; requests counted there.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, staticArticle, type TestServer } from '@crawler/testkit';
import { startE2e, waitFor, type E2eCrawler } from '../__fixtures__/e2e.js';

interface SitemapSite {
  server: TestServer;
  /** Paths (or absolute URLs) the sitemap lists, in order; change it to publish. */
  listed: string[];
  /** `<lastmod>` of listed paths that have one. */
  lastmods: Map<string, string>;
  /** Status of each answer to /sitemap.xml, in order. */
  sitemapAnswers: string[];
  url(path: string): string;
}

/** Pages without links (so only the sitemap can name a page) and a sitemap with an ETag of its body. */
async function startSitemapSite(listed: string[]): Promise<SitemapSite> {
  const site = { listed, sitemapAnswers: [] as string[], lastmods: new Map() } as SitemapSite;
  site.server = await startTestServer({
    '/': { body: staticArticle({ title: 'Home' }) },
    '/p/*': (req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(staticArticle({ title: `Page ${req.url}` })),
    '/private/*': { body: staticArticle({ title: 'Private' }) },
    '/sitemap.xml': (req, res) => {
      const body = `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${site.listed
        .map((p) => `<url><loc>${p.startsWith('http') ? p : site.url(p)}</loc>${site.lastmods.has(p) ? `<lastmod>${site.lastmods.get(p)}</lastmod>` : ''}</url>`)
        .join('')}</urlset>`;
      const etag = `"${createHash('sha1').update(body).digest('hex').slice(0, 16)}"`;
      if (req.headers['if-none-match'] === etag) {
        site.sitemapAnswers.push('304');
        res.writeHead(304, { etag }).end();
        return;
      }
      site.sitemapAnswers.push('200');
      res.writeHead(200, { 'content-type': 'application/xml', etag }).end(body);
    },
  });
  site.url = (path) => site.server.url(path);
  return site;
}

describe('sitemap re-read admits newly listed pages', () => {
  let c: E2eCrawler;
  const sites: SitemapSite[] = [];
  beforeAll(async () => {
    // No re-read on a timer: the test runs each one (runOnce) and ends the period by deleting the crawl's claim.
    c = await startE2e('sitemap_admit', { FETCHERS: 'simple_http:2', PROBE_TIMEOUT_MS: '30000', SITEMAP_RECHECK_INTERVAL_MS: '0', SITEMAP_RECHECK_MAX_NEW_LINKS: '2', SCHEDULER_INTERVAL_MS: '200' });
    c.runtime.startWorkers();
  });
  afterAll(async () => {
    await c?.cleanup();
    for (const s of sites) await s.server.close();
  });

  const links = (crawlId: string) => c.db.prisma.link.findMany({ where: { crawlId }, orderBy: { url: 'asc' } });
  const settled = (crawlId: string) => waitFor(async () => (await links(crawlId)).every((l) => l.status === 'done'), 'crawl settled', 60_000);
  /** One re-read in a new period (the claim of the last one deleted). */
  const reread = async (crawlId: string) => {
    await c.runtime.redis.del(`${c.prefix}:sitemap-recheck:${crawlId}`);
    return (await c.runtime.sitemapRecheck().runOnce())!;
  };

  let first: { site: SitemapSite; crawlId: string };
  it('admits and fetches a page listed after creation, not one off scope, excluded, or already known', async () => {
    const site = await startSitemapSite(['/p/1', '/p/2']);
    sites.push(site);
    const created = await c.runtime.crawls.create({ seeds: [site.url('/')], scope: 'same-origin', exclude: ['/private/**'], sitemaps: true, revisit: { mode: 'fixed', intervalSeconds: 3_600 } });
    expect(created.admitted).toBe(3);
    const crawlId = created.crawl.id;
    first = { site, crawlId };
    await settled(crawlId);
    const before = await links(crawlId);
    expect(before.map((l) => new URL(l.url).pathname)).toEqual(['/', '/p/1', '/p/2']);

    // The site publishes /p/3; the sitemap also names another origin, an excluded path, and /p/1 with a tracking parameter.
    site.listed.push('/p/3', 'http://127.0.0.2:1/p/elsewhere', '/private/1', '/p/1?utm_source=feed');
    const pass = await reread(crawlId);
    expect(pass).toMatchObject({ crawls: 1, admitted: 1, pulled: 0 });
    await waitFor(async () => (await links(crawlId)).find((l) => l.url.endsWith('/p/3'))?.status === 'done', 'the new page fetched', 60_000);
    const after = await links(crawlId);
    expect(after.map((l) => new URL(l.url).pathname)).toEqual(['/', '/p/1', '/p/2', '/p/3']);
    // Admitted as creation admits: depth 0, the crawl's revisit policy, a first visit only.
    expect(after.find((l) => l.url.endsWith('/p/3'))).toMatchObject({ depth: 0, revisitMode: 'fixed', generation: 0 });
    expect(site.server.hits('/p/3')).toBe(1);
    expect(site.server.hits('/private/1')).toBe(0);
    // The known pages were not fetched again by the re-read.
    expect(site.server.hits('/p/1')).toBe(1);
    expect(site.server.hits('/p/2')).toBe(1);
    expect((await c.runtime.crawlStore.view(crawlId))!.counters).toMatchObject({ admitted: 4, duplicate: 0 });
  }, 150_000);

  it('reads a sitemap unchanged since the last re-read with one conditional request, answered 304, and moves nothing', async () => {
    const { site, crawlId } = first;
    await settled(crawlId);
    const after = await links(crawlId);
    const view = await c.runtime.crawlStore.view(crawlId);
    // Nothing changed since: one request for robots.txt (a 404) and one for the sitemap, answered 304; nothing moves.
    const requestsBefore = site.server.requests.length;
    const answersBefore = site.sitemapAnswers.length;
    const again = await reread(crawlId);
    expect(site.server.requests.slice(requestsBefore).map((r) => r.path)).toEqual(['/robots.txt', '/sitemap.xml']);
    expect(site.sitemapAnswers.slice(answersBefore)).toEqual(['304']);
    expect(again).toMatchObject({ crawls: 1, admitted: 0, pulled: 0, unchanged: 1 });
    const unchanged = await links(crawlId);
    expect(unchanged.map((l) => [l.url, l.nextFetchAt?.getTime(), l.generation])).toEqual(after.map((l) => [l.url, l.nextFetchAt?.getTime(), l.generation]));
    expect((await c.runtime.crawlStore.view(crawlId))!.counters).toEqual(view!.counters);
    await c.runtime.crawlStore.cancel(crawlId);
  }, 150_000);

  it('keeps to the crawl\'s maxPages and admits at most SITEMAP_RECHECK_MAX_NEW_LINKS per re-read, the rest at the next', async () => {
    const site = await startSitemapSite(['/p/1', '/p/2']);
    sites.push(site);
    const created = await c.runtime.crawls.create({ seeds: [site.url('/')], scope: 'same-origin', sitemaps: true, maxPages: 4, revisit: { mode: 'fixed', intervalSeconds: 3_600 } });
    expect(created.admitted).toBe(3);
    const crawlId = created.crawl.id;
    await settled(crawlId);

    site.listed.push('/p/3', '/p/4', '/p/5', '/p/6', '/p/7');
    // Five new pages, two per re-read: the first fills the one page left under maxPages and refuses the other.
    expect(await reread(crawlId)).toMatchObject({ admitted: 1 });
    expect(await reread(crawlId)).toMatchObject({ admitted: 0 });
    expect(await reread(crawlId)).toMatchObject({ admitted: 0 });
    // Each of those three was cut short by the bound or read the rest: the sitemap came in full every time.
    expect(site.sitemapAnswers).toEqual(['200', '200', '200', '200']);
    // Every page now decided: the next re-read finds it unchanged.
    expect(await reread(crawlId)).toMatchObject({ admitted: 0, unchanged: 1 });
    expect(site.sitemapAnswers.at(-1)).toBe('304');

    await settled(crawlId);
    expect((await links(crawlId)).map((l) => new URL(l.url).pathname)).toEqual(['/', '/p/1', '/p/2', '/p/3']);
    for (const p of ['/p/4', '/p/5', '/p/6', '/p/7']) expect(site.server.hits(p)).toBe(0);
    expect((await c.runtime.crawlStore.view(crawlId))!.counters).toMatchObject({ admitted: 4, overLimit: 4, duplicate: 0 });
  }, 150_000);

  it('reads a sitemap in full again while it names a lastmod still in the future, which must be judged once past', async () => {
    const site = await startSitemapSite(['/p/1']);
    sites.push(site);
    site.lastmods.set('/p/1', new Date(Date.now() + 86_400_000).toISOString());
    const created = await c.runtime.crawls.create({ seeds: [site.url('/')], scope: 'same-origin', sitemaps: true, revisit: { mode: 'fixed', intervalSeconds: 3_600 } });
    const crawlId = created.crawl.id;
    await settled(crawlId);
    await reread(crawlId);
    await reread(crawlId);
    expect(site.sitemapAnswers).toEqual(['200', '200', '200']);
    // Once no lastmod is ahead, the re-read keeps the validators and the next one is a 304.
    site.lastmods.set('/p/1', new Date(Date.now() - 60_000).toISOString());
    await reread(crawlId);
    await reread(crawlId);
    expect(site.sitemapAnswers).toEqual(['200', '200', '200', '200', '304']);
  }, 150_000);
});
