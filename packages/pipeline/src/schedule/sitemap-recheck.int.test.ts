/**
 * A continuous crawl (sitemaps on, a revisit policy whose interval is long) whose sitemap says when each page last
 * changed: the page the sitemap marks changed is fetched again long before its revisit is due, and the pages it marks
 * unchanged are not asked for at all. Real Postgres and Redis; assertions on requests and stored versions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChangingSite, type ChangingSite } from '@crawler/testkit';
import { startE2e, waitFor, type E2eCrawler } from '../__fixtures__/e2e.js';
import type { SitemapReport } from '../crawls/sitemaps.js';
import { SitemapRecheck } from './sitemap-recheck.js';

describe('sitemap lastmod pulls revisits forward', () => {
  let site: ChangingSite;
  let c: E2eCrawler;
  beforeAll(async () => {
    site = await startChangingSite({ '/a': 'etag', '/b': 'etag', '/c': 'last-modified' }, { sitemap: true });
    // The sitemap is read again every second; the pages' own revisit is an hour away.
    c = await startE2e('sitemap_recheck', { FETCHERS: 'simple_http:4', PROBE_TIMEOUT_MS: '30000', SITEMAP_RECHECK_INTERVAL_MS: '1000', SCHEDULER_INTERVAL_MS: '200' });
  });
  afterAll(async () => {
    await c?.cleanup();
    await site?.close();
  });

  it('fetches the page whose lastmod is newer than its visit again, and leaves the unchanged ones on their schedule', async () => {
    const created = await c.runtime.crawls.create({ seeds: [site.url('/a')], scope: 'same-origin', sitemaps: true, revisit: { mode: 'fixed', intervalSeconds: 3_600 } });
    expect(created.admitted).toBe(3);
    c.runtime.startWorkers();
    const links = () => c.db.prisma.link.findMany({ where: { crawlId: created.crawl.id }, orderBy: { url: 'asc' } });
    await waitFor(async () => (await links()).every((l) => l.status === 'done' && l.nextFetchAt !== null), 'first visits scheduled', 60_000);
    const readsBefore = site.requests('/sitemap.xml').length;

    site.change('/a');
    const a = (await links()).find((l) => l.url.endsWith('/a'))!;
    await waitFor(async () => (await c.db.prisma.link.findUnique({ where: { id: a.id } }))?.lastVisitChanged === true, 'the changed page revisited', 45_000);
    // A few more re-reads of the sitemap, which still says /b and /c have not changed since their visit.
    await waitFor(async () => site.requests('/sitemap.xml').length >= readsBefore + 3, 'sitemap read again', 30_000);
    await c.runtime.waitUntilIdle();

    const latest = await c.content.versionForLink(a.id, 2);
    expect(Buffer.from(latest!.body).toString('utf8')).toContain('revision 2');
    expect(site.answers().filter((x) => x.startsWith('/a '))).toEqual(['/a 200', '/a 200']);
    // Unchanged per the sitemap: not one request more than the first visit, an hour's revisit still ahead.
    expect(site.answers().filter((x) => !x.startsWith('/a '))).toEqual(expect.arrayContaining(['/b 200', '/c 200']));
    expect(site.answers().filter((x) => !x.startsWith('/a ')).length).toBe(2);
    const after = await links();
    for (const l of after.filter((x) => !x.url.endsWith('/a'))) {
      expect(l.generation).toBe(0);
      expect(l.nextFetchAt!.getTime()).toBeGreaterThan(Date.now() + 30 * 60_000);
    }
    // The revisited page is back on its hourly schedule from its new visit.
    const revisited = after.find((x) => x.id === a.id)!;
    expect(revisited.generation).toBe(1);
    expect(revisited.nextFetchAt!.getTime()).toBeGreaterThan(Date.now() + 30 * 60_000);
  }, 150_000);

  it('reads a crawl\'s sitemaps once per period across processes, and makes at most maxLinks due per read', async () => {
    const crawl = (await c.runtime.schedule.sitemapCrawls())[0]!;
    const links = await c.db.prisma.link.findMany({ where: { crawlId: crawl.id } });
    // Every page marked changed a moment ago (after each one's last visit), as a generator stamping its build time would.
    const stamp = Date.now() - 10;
    let reads = 0;
    const readSitemaps = async (): Promise<SitemapReport> => {
      reads += 1;
      return { urls: links.map((l) => l.url), files: [], errors: [], truncated: false, lastModified: new Map(links.map((l) => [l.url, stamp])) };
    };
    // A fresh prefix: the claim of the crawl's period by the runtime's own loop above is not this one's.
    const prefix = `${c.prefix}:two`;
    const make = () => new SitemapRecheck({
      schedule: c.runtime.schedule, readSitemaps, admitNew: (id, urls, max) => c.runtime.crawls.admitSitemapUrls(id, urls, max), redis: c.runtime.redis, prefix, logger: c.runtime.logger,
      settings: { intervalMs: 60_000, maxLinks: 1, maxNewLinks: 1_000 },
    });
    const [one, two] = [make(), make()];
    try {
      const passes = await Promise.all([one.runOnce(), two.runOnce()]);
      expect(reads).toBe(1);
      expect(passes.map((p) => p!.pulled).sort()).toEqual([0, 1]);
      expect(await one.runOnce()).toEqual({ crawls: 0, pulled: 0, admitted: 0, unchanged: 0 });
      expect(reads).toBe(1);
    } finally {
      await one.stop();
      await two.stop();
    }
  });
});
