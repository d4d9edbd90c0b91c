/**
 * Files (a PDF, a CSV and a zip served as attachments, download links that redirect) through the real pipeline when a
 * browser gets them, on real Redis and Postgres. A browser's navigation that ends on a file (Chromium downloads it or
 * shows it in its PDF viewer, keeping the bytes either way) is fetched by the browser's worker itself, with the page's
 * cookies: a fleet of browsers only gets its files, and behind a wall the file comes with the clearance the browser
 * earned instead of going to plain HTTP, which would meet the wall.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSimWeb, type SimWeb } from '@crawler/sim-web';
import { Redis } from 'ioredis';
import { DomainPauses } from '../pauses/domain-pauses.js';
import { REDIS_URL, startE2e, waitFor, type E2eCrawler } from '../__fixtures__/e2e.js';

let crawler: E2eCrawler | undefined;
let web: SimWeb | undefined;

afterEach(async () => {
  await crawler?.cleanup();
  await web?.close();
  crawler = undefined;
  web = undefined;
});

const CAP = 256 * 1024;
const ENV = { CHALLENGE_WAIT_MS: '10000', FETCH_TIMEOUT_MS: '30000', FETCH_MAX_BYTES: String(CAP) };

async function settle(c: E2eCrawler, urls: string[]) {
  const { accepted } = await c.runtime.enqueue(urls);
  c.runtime.startWorkers();
  const ids = accepted.map((a) => a.linkId);
  await waitFor(async () => (await c.db.prisma.link.count({ where: { id: { in: ids }, status: { in: ['done', 'failed'] } } })) === ids.length, 'every link settled', 240_000).catch(async (err: unknown) => {
    const left = await c.db.prisma.link.findMany({ where: { id: { in: ids } }, include: { attempts: true } });
    console.log(JSON.stringify(left.map((l) => [l.url, l.status, l.fetcher, l.lastErrorType, l.lastError, l.attempts.map((a) => [a.fetcher, a.errorType, a.httpStatus])])));
    throw err;
  });
  const links = await c.db.prisma.link.findMany({ where: { id: { in: ids } }, include: { attempts: { orderBy: { id: 'asc' }, include: { heuristics: true } } } });
  return Promise.all(
    links.map(async (l) => {
      const stored = await c.content.latestForLink(l.id);
      return { path: new URL(l.url).pathname, link: l, stored };
    }),
  );
}

describe('end to end: files a browser gets', () => {
  it('a fleet of browsers only stores PDFs, downloads and redirected files; one past FETCH_MAX_BYTES fails too_large', async () => {
    web = await startSimWeb({
      sites: [
        { kind: 'static', name: 'open', hugeFileBytes: CAP * 4 },
        { kind: 'interstitial', challengeDelayMs: 300, name: 'walled' },
      ],
      firstHost: '127.0.12.10',
    });
    const [open, walled] = web.sites as [SimWeb['sites'][number], SimWeb['sites'][number]];
    crawler = await startE2e('files_browsers', { ...ENV, FETCHERS: 'playwright:2,playwright_stealth:1' });
    const paths = ['/files/doc-1.pdf', '/files/sheet-2.csv', '/files/archive-3.zip', '/files/get-4', '/files/back-5', '/files/huge-6.bin'];
    const urls = [...paths.map((p) => `${open.origin}${p}`), `${walled.origin}/files/doc-7.pdf`, `${walled.origin}/files/archive-8.zip`];
    const rows = await settle(crawler, urls);
    const byUrl = new Map(rows.map((r) => [r.link.url, r]));
    const view = (url: string) => {
      const r = byUrl.get(url)!;
      return { status: r.link.status, error: r.link.lastErrorType, type: r.stored?.contentType ?? null, head: r.stored ? Buffer.from(r.stored.body.slice(0, 5)).toString() : null };
    };
    expect(urls.map((u) => [new URL(u).host === new URL(walled.origin).host ? 'walled' : 'open', new URL(u).pathname, view(u)])).toEqual([
      ['open', '/files/doc-1.pdf', { status: 'done', error: null, type: 'application/pdf', head: '%PDF-' }],
      ['open', '/files/sheet-2.csv', { status: 'done', error: null, type: 'text/csv', head: 'id,ti' }],
      ['open', '/files/archive-3.zip', { status: 'done', error: null, type: 'application/zip', head: 'PK\x05\x06\x00' }],
      ['open', '/files/get-4', { status: 'done', error: null, type: 'application/pdf', head: '%PDF-' }],
      ['open', '/files/back-5', { status: 'done', error: null, type: 'text/html', head: '<!DOC' }],
      // Never kept cut short: the link fails and says why.
      ['open', '/files/huge-6.bin', { status: 'failed', error: 'too_large', type: null, head: null }],
      ['walled', '/files/doc-7.pdf', { status: 'done', error: null, type: 'application/pdf', head: '%PDF-' }],
      ['walled', '/files/archive-8.zip', { status: 'done', error: null, type: 'application/zip', head: 'PK\x05\x06\x00' }],
    ]);
    expect(byUrl.get(`${open.origin}/files/get-4`)!.stored!.finalUrl).toBe(`${open.origin}/files/doc-4.pdf`);
    for (const { link } of rows) {
      // Every attempt is a browser's, logged with its heuristics; none handed the file on as the wrong tool.
      expect(link.attempts.length).toBeGreaterThanOrEqual(1);
      for (const a of link.attempts) {
        expect({ url: link.url, fetcher: a.fetcher, wrongTool: a.errorType === 'wrong_tool', heuristics: a.heuristics.length > 0 }).toEqual({ url: link.url, fetcher: expect.stringMatching(/^playwright/), wrongTool: false, heuristics: true });
      }
    }
  }, 300_000);

  it('a mixed fleet keeps a file behind a wall with the browser that cleared it: no hand-off to plain HTTP, which meets the wall', async () => {
    web = await startSimWeb({ sites: [{ kind: 'interstitial', challengeDelayMs: 300, name: 'walled' }], firstHost: '127.0.12.20' });
    const site = web.sites[0]!;
    // Plain HTTP may meet the wall first (seed priors send a .pdf to it): the site's pause is kept short.
    crawler = await startE2e('files_mixed', { ...ENV, FETCHERS: 'simple_http:2,playwright:1,playwright_stealth:1', PAUSE_BLOCK_BASE_MS: '2000' });
    const paths = ['/files/doc-1.pdf', '/files/archive-2.zip', '/files/sheet-3.csv', '/files/get-4'];
    const rows = await settle(crawler, paths.map((p) => `${site.origin}${p}`));
    expect(rows.map((r) => [r.path, r.link.status, r.link.lastErrorType, r.stored?.contentType ?? null]).sort()).toEqual(
      [
        ['/files/doc-1.pdf', 'done', null, 'application/pdf'],
        ['/files/archive-2.zip', 'done', null, 'application/zip'],
        ['/files/sheet-3.csv', 'done', null, 'text/csv'],
        ['/files/get-4', 'done', null, 'application/pdf'],
      ].sort(),
    );
    for (const { link } of rows) {
      expect(link.fetcher).toMatch(/^playwright/);
      // No attempt says the browser was the wrong tool (domain memory would disqualify it on the site) and plain HTTP
      // never stored the wall's page as the file.
      expect(link.attempts.filter((a) => a.errorType === 'wrong_tool' || (a.fetcher === 'simple_http' && a.success))).toEqual([]);
      expect(link.attempts.every((a) => a.heuristics.length > 0)).toBe(true);
    }
    // The site served plain-HTTP-shaped requests only the browsers' own requests for the files (with their clearance),
    // one a link at most; every other one met the wall.
    const served = site.requestLog().filter((r) => r.client === 'plain' && r.outcome !== 'challenge');
    expect(served.length).toBeLessThanOrEqual(paths.length);
  }, 300_000);

  it('a mixed fleet that met a site\'s wall sends the site\'s PDFs to the wall\'s browser: plain HTTP never meets it, the site never pauses', async () => {
    web = await startSimWeb({ sites: [{ kind: 'interstitial', challengeDelayMs: 300, name: 'walled' }], firstHost: '127.0.12.30' });
    const site = web.sites[0]!;
    // The default pause (PAUSE_BLOCK_BASE_MS, 10 min): a PDF sent to plain HTTP would meet the wall and hold the site.
    crawler = await startE2e('files_walled_mix', { ...ENV, FETCHERS: 'simple_http:2,playwright:1,playwright_stealth:1' });
    // The site's pages first: the router's probe meets the wall and sends the domain to the stealth browser.
    const pages = await settle(crawler, site.urls(3));
    expect(pages.map((r) => r.link.status)).toEqual(['done', 'done', 'done']);
    const challengedBefore = site.requestLog().filter((r) => r.client === 'plain' && r.outcome === 'challenge').length;
    // Then its PDFs: the seed priors (and every other site's .pdf successes) say plain HTTP, but the domain's wall wins.
    const pdfs = [1, 2, 3, 4, 5].map((n) => `${site.origin}/files/doc-${n}.pdf`);
    const rows = await settle(crawler, pdfs);
    expect(rows.map((r) => [r.path, r.link.status, r.stored?.contentType.split(';')[0] ?? null]).sort()).toEqual(pdfs.map((u) => [new URL(u).pathname, 'done', 'application/pdf']).sort());
    for (const r of rows) expect(r.link.attempts.map((a) => [a.fetcher, a.success])).toEqual([['playwright_stealth', true]]);
    // Plain HTTP met the wall no more after the probe, and nothing paused the site or a link.
    expect(site.requestLog().filter((r) => r.client === 'plain' && r.outcome === 'challenge').length).toBe(challengedBefore);
    expect(rows.filter((r) => r.link.riskLevel !== 0 || r.link.pausedUntil !== null).map((r) => r.path)).toEqual([]);
    const redis = new Redis(REDIS_URL);
    try {
      expect(await new DomainPauses({ redis, prisma: crawler.db.prisma, config: crawler.config }).pauseOf(site.domain)).toBeNull();
    } finally {
      redis.disconnect();
    }
  }, 300_000);
});
