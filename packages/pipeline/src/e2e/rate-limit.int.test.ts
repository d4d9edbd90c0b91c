/**
 * A rate-limiting site end to end on real Redis and Postgres, in learning mode with every fetcher configured: a 429
 * asks for pace, so the crawler waits out each Retry-After for the whole domain and never reaches for a browser.
 * Real time, with a 2-second Retry-After: the delayed re-routes fire by themselves.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, staticArticle, type TestServer } from '@crawler/testkit';
import { classifyClient, type ClientClass } from '@crawler/sim-web';
import { startE2e, waitFor, type E2eCrawler } from '../__fixtures__/e2e.js';

let crawler: E2eCrawler | undefined;
let server: TestServer | undefined;

afterEach(async () => {
  await crawler?.cleanup();
  await server?.close();
  crawler = undefined;
  server = undefined;
});

const RETRY_AFTER_S = 2;
const PAGES = 6;
/** Page requests the site accepts before it starts a Retry-After window. */
const BURST = 2;

describe('end to end: a rate-limiting site', () => {
  it('ends with every link done by simple_http, no browser attempt, and no request during any Retry-After', async () => {
    const served: number[] = [];
    const limited: number[] = [];
    let windowEndsAt = 0;
    let sinceWindow = 0;
    const clients: ClientClass[] = [];
    server = await startTestServer({
      '/p/*': (req, res) => {
        const now = Date.now();
        clients.push(classifyClient(req.rawHeaders));
        if (windowEndsAt !== 0 && now >= windowEndsAt) {
          windowEndsAt = 0;
          sinceWindow = 0;
        }
        if (windowEndsAt !== 0 || sinceWindow >= BURST) {
          // A request over the burst opens a window; one inside the window is told about it again.
          if (windowEndsAt === 0) windowEndsAt = now + RETRY_AFTER_S * 1000;
          limited.push(now);
          res.writeHead(429, { 'content-type': 'text/html', 'retry-after': String(RETRY_AFTER_S) }).end('<html><body><h1>Too Many Requests</h1></body></html>');
          return;
        }
        sinceWindow += 1;
        served.push(now);
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(staticArticle({ title: `Page ${served.length}` }));
      },
    });
    // One request at a time, a second apart: the spacing of a polite crawler, and it keeps the arrival order of
    // requests deterministic. The table's pause is capped below Retry-After, so Retry-After is what the crawler waits.
    crawler = await startE2e('rate_limit', { DOMAIN_MAX_CONCURRENCY: '1', DOMAIN_MIN_DELAY_MS: '1000', PAUSE_MAX_MS: '1000' });
    const urls = Array.from({ length: PAGES }, (_, i) => server!.url(`/p/${i}`));
    const { accepted } = await crawler.runtime.enqueue(urls);
    crawler.runtime.startWorkers();
    await waitFor(async () => (await crawler!.db.prisma.link.count({ where: { status: 'done' } })) === PAGES, 'every link done', 90_000);

    const links = await crawler.db.prisma.link.findMany({ where: { id: { in: accepted.map((a) => a.linkId) } }, include: { attempts: true } });
    expect(links.map((l) => [l.status, l.fetcher])).toEqual(links.map(() => ['done', 'simple_http']));
    const attempts = await crawler.db.prisma.fetcherAttempt.findMany({ where: { selectionSource: { not: 'prior' } } });
    expect(attempts.filter((a) => a.fetcher !== 'simple_http')).toEqual([]);
    // And as the site saw it: no request came from a browser.
    expect(clients.filter((c) => c !== 'plain')).toEqual([]);
    // The site limited us, and the crawler saw it: some 429s were met (and each rate-limited fetch is logged as such).
    expect(limited.length).toBeGreaterThan(0);
    expect(attempts.filter((a) => a.httpStatus === 429).every((a) => a.errorType === 'rate_limited' && a.isBanned)).toBe(true);
    // No request inside any window the site announced: every request after a 429 came at least Retry-After later.
    const all = server.requests.filter((r) => r.path.startsWith('/p/')).map((r) => r.at);
    for (const t429 of limited) {
      const inside = all.filter((t) => t > t429 && t < t429 + RETRY_AFTER_S * 1000);
      expect(inside, `requests within ${RETRY_AFTER_S} s after the 429 at ${t429}`).toEqual([]);
    }
    expect(served.length).toBe(PAGES);
  }, 120_000);
});
