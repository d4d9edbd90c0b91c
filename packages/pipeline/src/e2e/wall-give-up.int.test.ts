/**
 * A site behind a wall no tool of the fleet passes (a firewall's block page, 403, for plain HTTP and both browsers),
 * fed new links while it walls, end to end on real Redis and Postgres: every link ends failed with the wall's error
 * once the strongest tool has been refused for WALL_MAX_WAIT_MS, instead of pausing for as long as links come. A wall
 * that comes down within that time is crawled.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSimWeb, type SimWeb } from '@crawler/sim-web';
import { startE2e, waitFor, type E2eCrawler } from '../__fixtures__/e2e.js';

let crawler: E2eCrawler | undefined;
let web: SimWeb | undefined;

afterEach(async () => {
  await crawler?.cleanup();
  await web?.close();
  crawler = undefined;
  web = undefined;
});

// Short pauses so the wall's whole life fits in the test: 1 s doubling to 4 s, links ending 8 s after stealth's refusal.
const SHORT = { PAUSE_BLOCK_BASE_MS: '1000', PAUSE_MAX_MS: '4000', CHALLENGE_WAIT_MS: '3000', FETCH_TIMEOUT_MS: '20000' };

/** Feed the site `batches` × 2 new links, one batch a second, as a producer does; the links' ids. */
async function feed(c: E2eCrawler, urls: (n: number, from: number) => string[], batches: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < batches; i++) {
    const { accepted } = await c.runtime.enqueue(urls(2, 2 * i + 1));
    ids.push(...accepted.map((a) => a.linkId));
    await new Promise((r) => setTimeout(r, 1_000));
  }
  return ids;
}

const settled = async (c: E2eCrawler, n: number) => (await c.db.prisma.link.count({ where: { status: { in: ['done', 'failed'] } } })) === n;

describe('end to end: a wall no tool passes', () => {
  it('fails every link fed to it with the wall\'s error once the strongest tool has been refused for WALL_MAX_WAIT_MS', async () => {
    web = await startSimWeb({ sites: [{ kind: 'botwall', wallFamily: 'blocked', name: 'wall' }], firstHost: '127.0.9.40' });
    const site = web.sites[0]!;
    crawler = await startE2e('wall_give_up', { ...SHORT, WALL_MAX_WAIT_MS: '8000' });
    crawler.runtime.startWorkers();
    const ids = await feed(crawler, (n, from) => site.urls(n, from), 6);
    await waitFor(() => settled(crawler!, ids.length), 'every link settled', 50_000);

    const links = await crawler.db.prisma.link.findMany({ where: { id: { in: ids } } });
    expect(links.map((l) => [l.status, l.lastErrorType])).toEqual(links.map(() => ['failed', 'blocked_captcha']));
    for (const l of links) expect(l.lastError).toMatch(/wall refused every tool of the fleet up to playwright_stealth \(\d+ refusals in a row/);
    const stats = site.stats();
    console.log(`wall e2e: ${ids.length} links failed; the site saw ${stats.pageRequests} page requests (plain ${stats.requests.plain}, browser ${stats.requests.browser})`);
    expect(stats.served).toBe(0);
    // The stealth browser was refused (the wall's wait starts there), and the site was asked at least once by it.
    expect(await crawler.db.prisma.fetcherAttempt.count({ where: { fetcher: 'playwright_stealth', isBanned: true } })).toBeGreaterThan(0);
  }, 60_000);

  it('crawls a wall that comes down within WALL_MAX_WAIT_MS', async () => {
    // The wall refuses everyone for the site's first 3 page requests, then serves its pages.
    web = await startSimWeb({ sites: [{ kind: 'botwall', wallFamily: 'blocked', name: 'lifted', changes: [{ kind: 'static', afterRequests: 3 }] }], firstHost: '127.0.9.50' });
    const site = web.sites[0]!;
    crawler = await startE2e('wall_lifted', { ...SHORT, WALL_MAX_WAIT_MS: '600000' });
    crawler.runtime.startWorkers();
    const ids = await feed(crawler, (n, from) => site.urls(n, from), 3);
    await waitFor(() => settled(crawler!, ids.length), 'every link settled', 50_000);

    const links = await crawler.db.prisma.link.findMany({ where: { id: { in: ids } } });
    expect(links.map((l) => l.status)).toEqual(links.map(() => 'done'));
    expect(site.stats().served).toBeGreaterThanOrEqual(ids.length);
  }, 60_000);
});
