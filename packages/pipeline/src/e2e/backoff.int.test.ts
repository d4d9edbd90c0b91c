/**
 * Block detection and wrong-tool handling, and Retry-After, end to end on real Redis and Postgres.
 * Pauses run on a ManualClock: the delayed re-route is promoted by hand once the clock has passed the pause.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '@crawler/core';
import { ROUTE_QUEUE } from '@crawler/queue';
import { challengePage, jsRenderedPage, startTestServer, staticArticle, tooManyRequests, type TestServer } from '@crawler/testkit';
import { startE2e, type E2eCrawler } from '../__fixtures__/e2e.js';

let crawler: E2eCrawler | undefined;
let server: TestServer | undefined;

afterEach(async () => {
  await crawler?.cleanup();
  await server?.close();
  crawler = undefined;
  server = undefined;
});

const MINUTE = 60_000;

describe('end to end: backoff', () => {
  it('block detection: is_banned, paused_until, a delayed re-route, no request during the pause, fetched after it', async () => {
    let blocked = true;
    server = await startTestServer({
      '/page': (_req, res) => {
        res.writeHead(blocked ? 403 : 200, { 'content-type': 'text/html' }).end(blocked ? challengePage('cloudflare') : staticArticle({ title: 'Back again' }));
      },
    });
    const clock = new ManualClock(new Date());
    crawler = await startE2e('block', { LEARNING_MODE_ENABLED: 'false' }, { clock });
    await crawler.routes.set('127.0.0.1', 'simple_http');
    const { accepted } = await crawler.runtime.enqueue([server.url('/page')]);
    const linkId = accepted[0]!.linkId;
    crawler.runtime.startWorkers();
    await crawler.runtime.waitUntilIdle();

    const link = await crawler.db.prisma.link.findUniqueOrThrow({ where: { id: linkId }, include: { attempts: true } });
    expect(link.status).toBe('paused');
    expect(link.riskLevel).toBe(1);
    expect(link.pausedUntil!.getTime() - clock.now().getTime()).toBe(10 * MINUTE);
    expect(link.attempts.map((a) => [a.success, a.isBanned, a.errorType, a.httpStatus])).toEqual([[false, true, 'blocked_captcha', 403]]);
    expect(server.hits('/page')).toBe(1);

    const route = crawler.runtime.queues.queue(ROUTE_QUEUE);
    const delayed = await route.getJobs(['delayed']);
    // The re-route carries the retry policy's escalation (used in learning mode; the route table wins in legacy mode).
    expect(delayed.map((j) => j.data)).toEqual([{ linkId, url: server.url('/page'), generation: 1, reason: 'resume', nextFetcher: 'playwright_stealth', blockedFetcher: 'simple_http' }]);
    expect(delayed[0]!.delay).toBeGreaterThan(9 * MINUTE);

    // Resubmitted while paused: the router parks it again, and the site sees nothing.
    await crawler.runtime.queues.enqueueRoute({ linkId, url: server.url('/page'), generation: 7, reason: 'reroute' });
    await crawler.runtime.waitUntilIdle();
    expect(server.hits('/page')).toBe(1);
    expect((await route.getJobs(['delayed'])).map((j) => j.data.generation).sort()).toEqual([1, 7]);

    // The pause ends: the re-route runs and the page is fetched.
    blocked = false;
    clock.advance(10 * MINUTE + 1_000);
    for (const job of await route.getJobs(['delayed'])) await job.promote();
    await crawler.runtime.waitUntilIdle();
    const after = await crawler.db.prisma.link.findUniqueOrThrow({ where: { id: linkId }, include: { attempts: { orderBy: { id: 'asc' } } } });
    expect(after).toMatchObject({ status: 'done', riskLevel: 0, pausedUntil: null });
    expect(after.attempts.map((a) => a.success)).toEqual([false, true]);
    expect(server.hits('/page')).toBe(2);
  });

  it('a 429 with Retry-After: 60 pauses the link for at least 60 s, even with a shorter configured cap', async () => {
    server = await startTestServer({ '/limited': tooManyRequests(60) });
    crawler = await startE2e('retry_after', { LEARNING_MODE_ENABLED: 'false', DEFAULT_FETCHER: 'simple_http', PAUSE_MAX_MS: '5000' });
    const { accepted } = await crawler.runtime.enqueue([server.url('/limited')]);
    crawler.runtime.startWorkers();
    await crawler.runtime.waitUntilIdle();
    const link = await crawler.db.prisma.link.findUniqueOrThrow({ where: { id: accepted[0]!.linkId }, include: { attempts: true } });
    expect(link.status).toBe('paused');
    const attempt = link.attempts[0]!;
    expect(attempt).toMatchObject({ httpStatus: 429, isBanned: true, success: false, selectionSource: 'default' });
    expect(link.pausedUntil!.getTime() - attempt.attemptedAt.getTime()).toBeGreaterThanOrEqual(60_000);
    expect(attempt.responseHeaders).toMatchObject({ 'retry-after': '60' });
  });

  it('wrong tool: an empty page from plain HTTP is retried once with playwright, two attempts logged', async () => {
    server = await startTestServer({ '/app': { body: jsRenderedPage({ title: 'Rendered later' }) } });
    crawler = await startE2e('wrong_tool', { LEARNING_MODE_ENABLED: 'false', FETCHERS: 'simple_http:2,playwright:1', FETCH_TIMEOUT_MS: '20000' });
    await crawler.routes.set('127.0.0.1', 'simple_http');
    const { accepted } = await crawler.runtime.enqueue([server.url('/app')]);
    crawler.runtime.startWorkers();
    await crawler.runtime.waitUntilIdle();
    const link = await crawler.db.prisma.link.findUniqueOrThrow({ where: { id: accepted[0]!.linkId }, include: { attempts: { orderBy: { id: 'asc' } } } });
    expect(link.attempts.map((a) => [a.fetcher, a.success, a.errorType, a.selectionSource])).toEqual([
      ['simple_http', false, 'wrong_tool', 'hard_coded'],
      ['playwright', true, null, 'retry'],
    ]);
    expect(link).toMatchObject({ status: 'done', fetcher: 'playwright', attemptCount: 2 });
    const stored = await crawler.content.latestForLink(link.id);
    expect(new TextDecoder().decode(stored!.body)).toContain('Rendered later');
  }, 60_000);

  it('a blocked domain is paused for the fleet: its other links wait (delayed, no attempt, no request) and go after the pause', async () => {
    let blocked = true;
    server = await startTestServer({
      '/wall': (_req, res) => {
        res.writeHead(blocked ? 403 : 200, { 'content-type': 'text/html' }).end(blocked ? challengePage('datadome') : staticArticle());
      },
      '/other': { body: staticArticle({ title: 'Other page' }) },
    });
    const clock = new ManualClock(new Date());
    crawler = await startE2e('domain_pause', { LEARNING_MODE_ENABLED: 'false', DEFAULT_FETCHER: 'simple_http' }, { clock });
    crawler.runtime.startWorkers();
    await crawler.runtime.enqueue([server.url('/wall')]);
    await crawler.runtime.waitUntilIdle();
    const { accepted } = await crawler.runtime.enqueue([server.url('/other')]);
    await crawler.runtime.waitUntilIdle();

    const other = await crawler.db.prisma.link.findUniqueOrThrow({ where: { id: accepted[0]!.linkId }, include: { attempts: true } });
    expect(other.status).toBe('paused');
    expect(other.attempts).toHaveLength(0);
    expect(other.pausedUntil!.getTime()).toBeGreaterThan(clock.now().getTime());
    expect(server.hits('/other')).toBe(0);

    blocked = false;
    clock.advance(11 * MINUTE);
    for (const name of crawler.runtime.queueNames()) for (const job of await crawler.runtime.queues.queue(name).getJobs(['delayed'])) await job.promote();
    await crawler.runtime.waitUntilIdle();
    expect(await crawler.db.prisma.link.count({ where: { status: 'done' } })).toBe(2);
    expect(server.hits('/other')).toBe(1);
  });
});
