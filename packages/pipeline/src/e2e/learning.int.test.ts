/**
 * The design's manual tests (legacy mode, a learned pattern, the .pdf prior, probe reuse, time decay) as end-to-end
 * runs: real Postgres, real Redis, local sites.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, staticArticle, pdf, pdfBytes, type TestServer } from '@crawler/testkit';
import { DAY_MS } from '@crawler/core';
import { fetchQueueName } from '@crawler/queue';
import { startE2e, type E2eCrawler } from '../__fixtures__/e2e.js';

let crawler: E2eCrawler | undefined;
let server: TestServer | undefined;

afterEach(async () => {
  await crawler?.cleanup();
  await server?.close();
  crawler = undefined;
  server = undefined;
});

async function linkByUrl(c: E2eCrawler, url: string) {
  return c.db.prisma.link.findUniqueOrThrow({ where: { url }, include: { attempts: { orderBy: { id: 'asc' } }, contents: true } });
}

describe('end to end: routing', () => {
  it('waits for links held back by the per-domain minimum delay before calling the crawl idle', async () => {
    server = await startTestServer({ '/a': { body: staticArticle() }, '/b': { body: staticArticle() }, '/c': { body: staticArticle() } });
    crawler = await startE2e('polite_idle', { DOMAIN_MIN_DELAY_MS: '1500', DOMAIN_MAX_CONCURRENCY: '1', ROBOTS_ENABLED: 'false' });
    const urls = [server.url('/a'), server.url('/b'), server.url('/c')];
    await crawler.runtime.enqueue(urls);
    crawler.runtime.startWorkers();
    await crawler.runtime.waitUntilIdle();
    // Three requests 1.5 s apart: the later ones sit as delayed jobs, which must not read as "idle".
    for (const url of urls) expect((await linkByUrl(crawler, url)).status).toBe('done');
    expect(server.hits()).toBe(3);
  });

  it('legacy mode uses the hard-coded route (source hard_coded) and fails a domain without one', async () => {
    server = await startTestServer({ '/a': { body: staticArticle() } });
    const other = await startTestServer({ '/b': { body: staticArticle() } }, { host: '127.0.0.2' });
    try {
      crawler = await startE2e('legacy', { LEARNING_MODE_ENABLED: 'false' });
      await crawler.routes.set('127.0.0.1', 'direct_access');
      const res = await crawler.runtime.enqueue([server.url('/a'), other.url('/b')]);
      expect(res.rejected).toEqual([]);
      crawler.runtime.startWorkers();
      await crawler.runtime.waitUntilIdle();

      const a = await linkByUrl(crawler, server.url('/a'));
      expect(a).toMatchObject({ status: 'done', fetcher: 'simple_http', selectionSource: 'hard_coded', attemptCount: 1 });
      expect(a.attempts.map((x) => [x.fetcher, x.success, x.selectionSource])).toEqual([['simple_http', true, 'hard_coded']]);
      expect(a.contents).toHaveLength(1);
      const b = await linkByUrl(crawler, other.url('/b'));
      expect(b).toMatchObject({ status: 'failed', lastErrorType: 'no_route' });
      expect(other.hits('/b')).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('probe reuse: a static page costs exactly one request and is stored from the probe body', async () => {
    server = await startTestServer({ '/static': { body: staticArticle({ title: 'Reused' }) } });
    crawler = await startE2e('reuse');
    await crawler.runtime.enqueue([server.url('/static')]);
    crawler.runtime.startWorkers();
    await crawler.runtime.waitUntilIdle();

    expect(server.hits('/static')).toBe(1);
    const link = await linkByUrl(crawler, server.url('/static'));
    expect(link).toMatchObject({ status: 'done', fetcher: 'simple_http', selectionSource: 'probe' });
    expect(link.attempts).toHaveLength(1);
    expect(link.attempts[0]).toMatchObject({ fetcher: 'simple_http', success: true, selectionSource: 'probe', httpStatus: 200 });
    const stored = await crawler.content.latestForLink(link.id);
    expect(new TextDecoder().decode(stored!.body)).toContain('Reused');
    // The probe body is gone from Redis once used.
    expect(await crawler.runtime.redis.keys(`${crawler.prefix}:probe:*`)).toEqual([]);
  });

  it('the same URL enqueued twice (in any spelling) is one link, one job, one fetch', async () => {
    server = await startTestServer({ '/twice': { body: staticArticle() } });
    crawler = await startE2e('dedupe');
    const url = server.url('/twice');
    const first = await crawler.runtime.enqueue([url, `${url}#section`]);
    const second = await crawler.runtime.enqueue([url.replace('http://', 'HTTP://')]);
    expect(new Set([...first.accepted, ...second.accepted].map((a) => a.linkId)).size).toBe(1);
    expect(first.accepted.filter((a) => a.queued)).toHaveLength(1);
    expect(second.accepted[0]?.created).toBe(false);
    expect((await crawler.runtime.counts()).waiting).toBe(1);
    crawler.runtime.startWorkers();
    await crawler.runtime.waitUntilIdle();
    expect(server.hits('/twice')).toBe(1);
    expect(await crawler.db.prisma.link.count()).toBe(1);
    expect(await crawler.db.prisma.fetchedContent.count()).toBe(1);
  });

  it('rejects invalid URLs one by one and stores the rest', async () => {
    server = await startTestServer({ '/ok': { body: staticArticle() } });
    crawler = await startE2e('invalid');
    const res = await crawler.runtime.enqueue(['ftp://example.com/x', 'not a url', server.url('/ok'), 'javascript:alert(1)']);
    expect(res.accepted.map((a) => a.url)).toEqual([server.url('/ok')]);
    expect(res.rejected.map((r) => [r.input, r.code])).toEqual([
      ['ftp://example.com/x', 'invalid_url'],
      ['not a url', 'invalid_url'],
      ['javascript:alert(1)', 'invalid_url'],
    ]);
    expect(res.rejected[0]!.message).toMatch(/scheme ftp/);
    expect(await crawler.db.prisma.link.count()).toBe(1);
  });
});

describe('end to end: a failed probe', () => {
  it('is no evidence: no attempt is logged for it, and the page is fetched with plain HTTP', async () => {
    server = await startTestServer({ '/slow': { body: staticArticle(), delayMs: 1_500 } });
    crawler = await startE2e('probe_fail', { PROBE_TIMEOUT_MS: '400' });
    await crawler.runtime.enqueue([server.url('/slow')]);
    crawler.runtime.startWorkers();
    await crawler.runtime.waitUntilIdle();
    const link = await linkByUrl(crawler, server.url('/slow'));
    expect(link).toMatchObject({ status: 'done', fetcher: 'simple_http', selectionSource: 'probe' });
    // Two requests (the probe that timed out, then the fetch) but one attempt: the successful fetch.
    expect(server.hits('/slow')).toBe(2);
    expect(link.attempts.map((a) => [a.fetcher, a.success, a.errorType])).toEqual([['simple_http', true, null]]);
  });
});

describe('end to end: learning', () => {
  it('learns a pattern after enough successful attempts: the 11th page of a site is routed by learned data', async () => {
    const routes = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`/docs/p${i}`, { body: staticArticle({ title: `Page ${i}` }) }]));
    server = await startTestServer(routes);
    // Every one of the ten is routed before the first attempt lands (no politeness wait, a router slot each), so
    // none of them can already be routed by the others' evidence: under load, pages parked by the 4-per-domain gate
    // came back after 7 successes and were (rightly) learned, which is not what this test is about.
    crawler = await startE2e('learned', { ROUTER_CONCURRENCY: '16', DOMAIN_MAX_CONCURRENCY: '16' });
    crawler.runtime.startWorkers();
    await crawler.runtime.enqueue(Array.from({ length: 10 }, (_, i) => server!.url(`/docs/p${i}`)));
    await crawler.runtime.waitUntilIdle();
    const sources = await crawler.db.prisma.link.groupBy({ by: ['selectionSource', 'status'], _count: true });
    expect(sources).toEqual([{ selectionSource: 'probe', status: 'done', _count: 10 }]);

    await crawler.runtime.enqueue([server.url('/docs/p10')]);
    await crawler.runtime.waitUntilIdle();
    const eleventh = await linkByUrl(crawler, server.url('/docs/p10'));
    expect(eleventh).toMatchObject({ status: 'done', fetcher: 'simple_http', selectionSource: 'learned' });
    expect(eleventh.attempts[0]?.selectionSource).toBe('learned');
    expect(server.hits('/docs/p10')).toBe(1);
  });

  it('routes by learned playwright evidence with confidence above 0.6 (document test 2)', async () => {
    crawler = await startE2e('learned_pw');
    const now = new Date();
    await crawler.attempts.logAttempts(
      // A loopback "site" with no server: if the learned branch did not fire, the probe would fail locally, never
      // reach the internet.
      Array.from({ length: 10 }, (_, i) => ({ url: `http://127.0.0.5/wiki/A${i}`, fetcher: 'playwright', success: true, attemptedAt: now, selectionSource: 'probe', heuristics: [{ type: 'domain', value: '127.0.0.5' }] })),
    );
    // Only the router runs: the decision is what is under test, not a browser fetch of a site we cannot reach.
    crawler.runtime.startWorkers({ router: true, fetchers: [] });
    const res = await crawler.runtime.enqueue(['http://127.0.0.5/wiki/Learning']);
    const linkId = res.accepted[0]!.linkId;
    const job = await waitForJob(crawler, fetchQueueName('playwright'));
    expect(job).toMatchObject({ linkId, fetcher: 'playwright', selectionSource: 'learned' });
    expect(job.confidence).toBeGreaterThan(0.6);
  });

  it('the .pdf prior routes an unknown site to simple_http and its PDF is stored (document test 3)', async () => {
    const bytes = pdfBytes();
    server = await startTestServer({ '/document.pdf': pdf(bytes) }, { host: '127.0.0.3' });
    crawler = await startE2e('pdf');
    await crawler.runtime.enqueue([server.url('/document.pdf')]);
    crawler.runtime.startWorkers();
    await crawler.runtime.waitUntilIdle();
    const link = await linkByUrl(crawler, server.url('/document.pdf'));
    expect(link).toMatchObject({ status: 'done', fetcher: 'simple_http', selectionSource: 'learned' });
    const stored = await crawler.content.latestForLink(link.id);
    expect(stored?.contentType).toBe('application/pdf');
    expect(Buffer.from(stored!.body).equals(Buffer.from(bytes))).toBe(true);
    expect(server.hits('/document.pdf')).toBe(1);
  });

  it('time decay: two fresh failures outweigh five 60-day-old successes, so the router probes (document test 6)', async () => {
    server = await startTestServer({ '/article': { body: staticArticle() } }, { host: '127.0.0.4' });
    crawler = await startE2e('decay');
    const now = Date.now();
    const row = (success: boolean, ageMs: number) => ({ url: 'http://127.0.0.4/old', fetcher: 'playwright', success, attemptedAt: new Date(now - ageMs), errorType: success ? null : 'timeout', heuristics: [{ type: 'domain', value: '127.0.0.4' }] });
    await crawler.attempts.logAttempts([...Array.from({ length: 5 }, () => row(true, 60 * DAY_MS)), row(false, 0), row(false, 0)]);
    const best = await crawler.attempts.findBestFetcher([{ type: 'domain', value: '127.0.0.4' }], { minSampleSize: 5, now: new Date(now) });
    expect(best.best!.confidence).toBeLessThan(0.6);

    await crawler.runtime.enqueue([server.url('/article')]);
    crawler.runtime.startWorkers();
    await crawler.runtime.waitUntilIdle();
    const link = await linkByUrl(crawler, server.url('/article'));
    expect(link).toMatchObject({ status: 'done', fetcher: 'simple_http', selectionSource: 'probe' });
  });
});

async function waitForJob(c: E2eCrawler, queue: string) {
  for (let i = 0; i < 100; i++) {
    const jobs = await c.runtime.queues.queue(queue).getJobs(['waiting', 'prioritized']);
    if (jobs.length > 0) return jobs[0]!.data as { linkId: string; fetcher: string; selectionSource: string; confidence?: number };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no job arrived on ${queue}`);
}
