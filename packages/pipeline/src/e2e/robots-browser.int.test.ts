/**
 * Sites whose robots.txt plain HTTP cannot read but a browser can, end to end on real Redis and Postgres: a response
 * head undici refuses (bare LF, an unasked `100 Continue`, a Content-Length sent twice), and a bot wall in front of the
 * whole host, robots.txt included. The site is no outage: the browser fetch worker reads robots.txt in its own context
 * (past the wall, with the wall's clearance), the result is cached for the fleet like a plain-HTTP read, its rules are
 * obeyed, and the pages are crawled. A 429 on robots.txt is a rate limit: the domain waits out Retry-After, no
 * `site_unreachable`.
 */
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { rawHttpHandler, staticArticle, startTestServer, type TestServer } from '@crawler/testkit';
import { startSimSite, type SimSite } from '@crawler/sim-web';
import { startE2e, waitFor, type E2eCrawler } from '../__fixtures__/e2e.js';

let crawler: E2eCrawler | undefined;
const cleanups: (() => unknown)[] = [];

afterEach(async () => {
  await crawler?.cleanup();
  crawler = undefined;
  for (const c of cleanups.splice(0)) await c();
});

const ROBOTS = 'User-agent: *\nDisallow: /private\n';

async function settled(c: E2eCrawler, linkIds: string[], timeoutMs: number) {
  const read = () => c.db.prisma.link.findMany({ where: { id: { in: linkIds } } });
  try {
    return await waitFor(async () => {
      const links = await read();
      return links.length === linkIds.length && links.every((l) => ['done', 'failed'].includes(l.status)) ? linkIds.map((id) => links.find((l) => l.id === id)!) : null;
    }, 'every link done or failed', timeoutMs);
  } catch (err) {
    // Say where the links stand: a timeout alone does not tell a paused site from a slow browser.
    const links = await read();
    throw new Error(`${(err as Error).message}: ${JSON.stringify(links.map((l) => [l.url, l.status, l.fetcher, l.lastErrorType, l.lastError]))}`);
  }
}

/** The head of robots.txt in one of the shapes undici refuses and Chromium reads; pages are served by the book. */
const QUIRKS = {
  bare_lf: (body: string) => `HTTP/1.1 200 OK\ncontent-type: text/plain\ncontent-length: ${body.length}\nconnection: close\n\n${body}`,
  continue: (body: string) => `HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
} as const;

async function quirkyRobotsServer(quirk: keyof typeof QUIRKS, paths: string[]): Promise<string> {
  const server = createTcpServer(
    rawHttpHandler((_head, path) => {
      paths.push(path);
      if (path === '/robots.txt') return { bytes: QUIRKS[quirk](ROBOTS) };
      const page = staticArticle({ title: `Page ${path}` });
      return { bytes: Buffer.from(`HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(page)}\r\nconnection: close\r\n\r\n${page}`) };
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('end to end: robots.txt only a browser can read', () => {
  for (const quirk of (process.env.ROBOTS_QUIRK ? [process.env.ROBOTS_QUIRK] : Object.keys(QUIRKS)) as (keyof typeof QUIRKS)[]) {
    it(`robots.txt with a head undici refuses (${quirk}) is read by the browser and obeyed; the site is not paused as unreachable`, async () => {
      const paths: string[] = [];
      const origin = await quirkyRobotsServer(quirk, paths);
      crawler = await startE2e(`robots_${quirk}`, { FETCHERS: 'simple_http:2,playwright:1', FETCH_TIMEOUT_MS: '20000' });
      const { accepted } = await crawler.runtime.enqueue([`${origin}/article`, `${origin}/private/page`]);
      crawler.runtime.startWorkers();
      const [article, secret] = await settled(crawler, accepted.map((a) => a.linkId), 60_000);

      expect([article!.status, article!.lastErrorType]).toEqual(['done', null]);
      expect([secret!.status, secret!.lastErrorType]).toEqual(['failed', 'robots_disallowed']);
      expect(paths).not.toContain('/private/page');
      const stored = await crawler.content.latestForLink(article!.id);
      expect(new TextDecoder().decode(stored!.body)).toContain('Page /article');
    }, 90_000);
  }

  it('a wall in front of robots.txt too (503 interstitial): robots.txt is read past the wall in the browser and obeyed', async () => {
    const site: SimSite = await startSimSite({ kind: 'interstitial', wallCoversRobots: true, robotsTxt: 'User-agent: *\nDisallow: /page/9\n', challengeDelayMs: 200 }, { host: '127.0.0.1', index: 0 });
    cleanups.push(() => site.close());
    crawler = await startE2e('robots_wall', { FETCHERS: 'simple_http:2,playwright:1', FETCH_TIMEOUT_MS: '20000', CHALLENGE_WAIT_MS: '8000' });
    const { accepted } = await crawler.runtime.enqueue([`${site.origin}/page/1`, `${site.origin}/page/9`]);
    crawler.runtime.startWorkers();
    const [page, secret] = await settled(crawler, accepted.map((a) => a.linkId), 60_000);

    expect([page!.status, page!.lastErrorType]).toEqual(['done', null]);
    expect([secret!.status, secret!.lastErrorType]).toEqual(['failed', 'robots_disallowed']);
    expect(site.requestLog().map((r) => r.path)).not.toContain('/page/9');
    // The browser passed the wall for robots.txt.
    expect(site.robotsLog().some((r) => r.client === 'browser' && r.cleared)).toBe(true);
  }, 90_000);

  it('a 403 wall in front of robots.txt is no "missing robots.txt": its rules are read past the wall and obeyed', async () => {
    const site: SimSite = await startSimSite({ kind: 'botwall', wallCoversRobots: true, robotsTxt: 'User-agent: *\nDisallow: /page/9\n', challengeDelayMs: 200 }, { host: '127.0.0.1', index: 0 });
    cleanups.push(() => site.close());
    crawler = await startE2e('robots_wall403', { FETCHERS: 'simple_http:2,playwright:1,playwright_stealth:1', FETCH_TIMEOUT_MS: '20000', CHALLENGE_WAIT_MS: '8000' });
    const { accepted } = await crawler.runtime.enqueue([`${site.origin}/page/1`, `${site.origin}/page/9`]);
    crawler.runtime.startWorkers();
    const [page, secret] = await settled(crawler, accepted.map((a) => a.linkId), 80_000);

    expect([page!.status, page!.lastErrorType]).toEqual(['done', null]);
    expect([secret!.status, secret!.lastErrorType]).toEqual(['failed', 'robots_disallowed']);
    expect(site.requestLog().filter((r) => r.path === '/page/9')).toEqual([]);
  }, 120_000);

  it('a 429 on robots.txt is a rate limit: the domain waits out Retry-After and the page is crawled, never site_unreachable', async () => {
    let robotsHits = 0;
    const server: TestServer = await startTestServer({
      '/robots.txt': (_req, res) => {
        if (++robotsHits === 1) res.writeHead(429, { 'retry-after': '2', 'content-type': 'text/plain' }).end('slow down');
        else res.writeHead(200, { 'content-type': 'text/plain' }).end(ROBOTS);
      },
      '/*': { body: staticArticle({ title: 'Patience' }) },
    });
    cleanups.push(() => server.close());
    crawler = await startE2e('robots_429', { FETCHERS: 'simple_http:2' });
    const { accepted } = await crawler.runtime.enqueue([server.url('/article')]);
    crawler.runtime.startWorkers();
    const paused = await waitFor(async () => {
      const l = await crawler!.db.prisma.link.findUnique({ where: { id: accepted[0]!.linkId } });
      return l?.status === 'paused' || l?.status === 'done' ? l : null;
    }, 'the link paused', 20_000);
    expect(paused.lastErrorType).toBe('rate_limited');
    const [link] = await settled(crawler, [accepted[0]!.linkId], 30_000);
    expect([link!.status, link!.lastErrorType]).toEqual(['done', null]);
    expect(robotsHits).toBe(2);
  }, 60_000);
});
