/**
 * A site that is down when its links are first seen, end to end on real Redis and Postgres: "not now", not "never".
 * The host is a loopback port nobody listens on (connection refused); 10 s later a server starts on the same port.
 */
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { robotsTxt, startTestServer, staticArticle, type TestServer } from '@crawler/testkit';
import { startE2e, waitFor, type E2eCrawler } from '../__fixtures__/e2e.js';
import { DomainPauses } from '../pauses/domain-pauses.js';

let crawler: E2eCrawler | undefined;
let server: TestServer | undefined;
let live: TestServer | undefined;

afterEach(async () => {
  await crawler?.cleanup();
  await server?.close();
  await live?.close();
  crawler = undefined;
  server = undefined;
  live = undefined;
});

/** A loopback port that was free a moment ago: connecting to it is refused until someone listens. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as { port: number };
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

const DOWN_MS = 10_000;

describe('end to end: a short outage', () => {
  it('pauses the link while its origin is down, with the reason on the link, not the host\'s live origin, and ends done once it is back', async () => {
    const port = await freePort();
    // Another port of the same host, up all along: robots.txt is an origin's, so its links must not wait.
    live = await startTestServer({ '/robots.txt': robotsTxt(), '/live': { body: staticArticle({ title: 'Up all along' }) } });
    crawler = await startE2e('outage', { UNREACHABLE_PAUSE_BASE_MS: '2000', ROBOTS_UNREACHABLE_TTL_MS: '1000', FETCHERS: 'simple_http:2' });
    const url = `http://127.0.0.1:${port}/article`;
    const { accepted } = await crawler.runtime.enqueue([url]);
    const linkId = accepted[0]!.linkId;
    const liveUrl = live.url('/live');
    const downSince = Date.now();
    crawler.runtime.startWorkers();

    // While the host is down the link waits, paused, and says why.
    const paused = await waitFor(async () => {
      const l = await crawler!.db.prisma.link.findUnique({ where: { id: linkId } });
      return l?.status === 'paused' ? l : null;
    }, 'the link paused', 8_000);
    expect(paused.lastErrorType).toBe('site_unreachable');
    expect(paused.lastError).toMatch(/robots\.txt of http:\/\/127\.0\.0\.1:\d+ unreachable/);
    expect(paused.pausedUntil!.getTime()).toBeGreaterThan(Date.now() - 1000);
    // The fleet holds no pause of the domain (it would have been set before the link's), and the host's live origin
    // is crawled meanwhile.
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    try {
      const pauses = await new DomainPauses({ redis, prisma: crawler.db.prisma, config: crawler.config }).list();
      expect(pauses.filter((p) => p.domainPausedUntil !== null)).toEqual([]);
    } finally {
      redis.disconnect();
    }
    const { accepted: liveAccepted } = await crawler.runtime.enqueue([liveUrl]);
    const liveDone = await waitFor(async () => {
      const l = await crawler!.db.prisma.link.findUnique({ where: { id: liveAccepted[0]!.linkId } });
      return l?.status === 'done' || l?.status === 'failed' ? l : null;
    }, 'the live origin\'s link finished', 8_000);
    expect(liveDone.status).toBe('done');
    expect((await crawler.db.prisma.link.findUnique({ where: { id: linkId } }))?.status).toBe('paused');

    await new Promise((r) => setTimeout(r, Math.max(0, DOWN_MS - (Date.now() - downSince))));
    const midway = await crawler.db.prisma.link.findUnique({ where: { id: linkId } });
    expect(midway?.status).not.toBe('failed');
    server = await startTestServer(
      { '/robots.txt': robotsTxt(), '/article': { body: staticArticle({ title: 'Back again' }) } },
      { port },
    );

    const done = await waitFor(async () => {
      const l = await crawler!.db.prisma.link.findUnique({ where: { id: linkId } });
      return l && ['done', 'failed'].includes(l.status) ? l : null;
    }, 'the link finished', 60_000);
    expect([done.status, done.lastErrorType]).toEqual(['done', null]);
    expect(server.hits('/article')).toBeGreaterThan(0);
  }, 120_000);

  it('fails the link with site_unreachable, saying so, only after the attempt budget; re-posting it once the site is back brings it back', async () => {
    const port = await freePort();
    crawler = await startE2e('outage_budget', { UNREACHABLE_PAUSE_BASE_MS: '300', ROBOTS_UNREACHABLE_TTL_MS: '100', MAX_ATTEMPTS: '3', FETCHERS: 'simple_http:2' });
    const { accepted } = await crawler.runtime.enqueue([`http://127.0.0.1:${port}/never`]);
    crawler.runtime.startWorkers();
    const failed = await waitFor(async () => {
      const l = await crawler!.db.prisma.link.findUnique({ where: { id: accepted[0]!.linkId } });
      return l?.status === 'failed' ? l : null;
    }, 'the link failed', 30_000);
    expect(failed.lastErrorType).toBe('site_unreachable');
    expect(failed.lastError).toMatch(/^site unreachable on 3 checks in a row/);
    // No page was requested from the site, so no attempt is logged against any fetcher.
    expect(await crawler.db.prisma.fetcherAttempt.count({ where: { linkId: failed.id, selectionSource: { not: 'prior' } } })).toBe(0);

    // The site comes back; the producer posts the link again: the outage said nothing about the page.
    server = await startTestServer({ '/robots.txt': robotsTxt(), '/never': { body: staticArticle({ title: 'Here after all' }) } }, { port });
    const again = await crawler.runtime.enqueue([`http://127.0.0.1:${port}/never`]);
    expect(again.accepted[0]).toMatchObject({ linkId: failed.id, created: false, queued: true });
    const done = await waitFor(async () => {
      const l = await crawler!.db.prisma.link.findUnique({ where: { id: failed.id } });
      return l?.status === 'done' ? l : null;
    }, 'the re-posted link done', 30_000);
    expect([done.lastErrorType, done.riskLevel]).toEqual([null, 0]);
  }, 90_000);
});
