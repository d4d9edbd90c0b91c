/**
 * `crawl crawl --follow` and a second `crawl run` sharing its crawl: real CLI processes, real Redis and Postgres, a
 * generated loopback site graph bigger than the page budget.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisConnection, deleteRedisPrefix } from '@crawler/queue';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { startSiteGraph, type SiteGraph, REDIS_URL } from '@crawler/testkit';
import { startCrawl, type CrawlProcess } from '../__fixtures__/crawl-process.js';

const PREFIX = `{crawler_test_cli_follow_${process.pid}}`;

let db: TestDatabase;
let graph: SiteGraph;

function start(args: string[]): CrawlProcess {
  return startCrawl(args, {
    env: {
      DATABASE_URL: db.url,
      REDIS_URL,
      QUEUE_PREFIX: PREFIX,
      ALLOW_PRIVATE_NETWORKS: 'true',
      FETCHERS: 'simple_http:4',
      DOMAIN_MIN_DELAY_MS: '0',
      DOMAIN_MAX_CONCURRENCY: '8',
      // A probe timed out on a starved machine still reached the server: see crawl.int.test.ts.
      PROBE_TIMEOUT_MS: '30000',
      LOG_LEVEL: 'warn',
    },
  });
}

beforeAll(async () => {
  db = await createTestDatabase('cli_follow');
  graph = await startSiteGraph({ pagesPerHost: 400, firstHost: '127.0.1.30' });
});

afterAll(async () => {
  await graph?.close();
  const r = createRedisConnection(REDIS_URL, 'producer');
  await deleteRedisPrefix(r, PREFIX);
  r.disconnect();
  await db?.drop();
});

describe('crawl crawl --follow with a second crawl run process', () => {
  it('fetches exactly --max-pages 500 pages between the two processes, none twice, nothing off-site', async () => {
    expect(graph.expected().size).toBeGreaterThan(700);
    const first = start(['crawl', ...graph.seeds, '--follow', '--max-pages', '500', '--scope', 'same-site', '--json']);
    // The second process joins once the crawl exists; it serves the same queues, so it takes its share of the pages.
    for (let i = 0; i < 600 && (await db.prisma.crawl.count()) === 0; i++) await new Promise((r) => setTimeout(r, 100));
    const second = start(['run', '--until-idle']);
    const [a, b] = await Promise.all([first.done, second.done]);
    expect(b.code, b.stderr).toBe(0);
    expect(a.code, a.stderr).toBe(0);
    const report = JSON.parse(a.stdout) as { crawl: { status: string; counters: Record<string, number> }; totals: { links: number; done: number } };
    expect(report.crawl.status).toBe('done');
    expect(report.crawl.counters).toMatchObject({ admitted: 500, done: 500, failed: 0, queued: 0, routing: 0, fetching: 0, paused: 0 });
    expect(report.totals).toMatchObject({ links: 500, done: 500 });

    const requests = graph.pageRequests();
    // One request per page: a 404 answered to the probe is reused, not asked again.
    expect(requests.size).toBe(500);
    expect([...requests].filter(([, n]) => n > 1).map(([k, n]) => `${k} ×${n}`)).toEqual([]);
    expect(graph.offSiteRequests()).toBe(0);
    const crawl = await db.prisma.crawl.findFirstOrThrow();
    expect(await db.prisma.link.count({ where: { crawlId: crawl.id, status: 'done' } })).toBe(500);
  }, 600_000);
});

describe('crawl crawl --follow of a site already crawled', () => {
  it('says why nothing is fetched, and how to crawl it again', async () => {
    const seed = graph.seeds[0]!;
    await start(['crawl', seed, '--follow', '--max-pages', '1']).done;
    const again = await start(['crawl', seed, '--follow', '--max-pages', '1']).done;
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('0 admitted, 1 duplicate');
    expect(again.stderr).toContain('every seed is already stored');
    expect(again.stderr).toContain('--max-age 0');
    const fresh = await start(['crawl', seed, '--follow', '--max-pages', '1', '--max-age', '1h']).done;
    expect(fresh.stderr).toContain('fetched more recently than --max-age');
  }, 120_000);

  it('says a seed in progress for another producer is being fetched, not that it is stored', async () => {
    for (const [i, maxAge] of [[], ['--max-age', '0']].entries()) {
      // Enqueued with no worker running: the link is queued, its page not stored yet.
      const seed = `${graph.seeds[0]!}?in-progress=${i}`;
      const enqueued = await start(['enqueue', seed]).done;
      expect(enqueued.code, enqueued.stderr).toBe(0);
      const crawl = await start(['crawl', seed, '--follow', '--max-pages', '1', ...maxAge]).done;
      expect(crawl.stdout).toContain('0 admitted, 1 duplicate');
      expect(crawl.stderr).not.toContain('already stored');
      expect(crawl.stderr).not.toContain('fetched more recently');
      expect(crawl.stderr).toContain('in progress');
    }
  }, 120_000);
});
