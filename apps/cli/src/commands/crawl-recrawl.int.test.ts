/**
 * `crawl crawl --follow --max-age` on a site crawled before: real CLI processes, real Redis and Postgres, a loopback
 * site whose pages change and grow between the crawls.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisConnection, deleteRedisPrefix } from '@crawler/queue';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { startRevisitSite, type RevisitSite } from '@crawler/testkit';
import { runCrawl, type CrawlResult } from '../__fixtures__/crawl-process.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `{crawler_test_cli_recrawl_${process.pid}}`;

let db: TestDatabase;
let site: RevisitSite;

function crawl(args: string[]): Promise<CrawlResult> {
  return runCrawl(['crawl', ...args], {
    env: {
      DATABASE_URL: db.url, REDIS_URL, QUEUE_PREFIX: PREFIX, ALLOW_PRIVATE_NETWORKS: 'true', FETCHERS: 'simple_http:4',
      DOMAIN_MIN_DELAY_MS: '0', PROBE_TIMEOUT_MS: '30000', LOG_LEVEL: 'warn',
    },
  });
}

type Report = { crawl: { id: string; counters: Record<string, number> } };

beforeAll(async () => {
  db = await createTestDatabase('cli_recrawl');
  site = await startRevisitSite({ staticPages: ['one', 'two'], host: '127.0.1.61' });
});

afterAll(async () => {
  await site?.close();
  const r = createRedisConnection(REDIS_URL, 'producer');
  await deleteRedisPrefix(r, PREFIX);
  r.disconnect();
  await db?.drop();
});

describe('crawl crawl --follow --max-age', () => {
  it('re-crawls a site as a new crawl: stale pages again, new pages found, the old crawl untouched', async () => {
    const first = await crawl([`${site.origin}/`, '--follow', '--json']);
    expect(first.code, first.stderr).toBe(0);
    const old = JSON.parse(first.stdout) as Report;
    expect(old.crawl.counters).toMatchObject({ admitted: 3, done: 3 });

    site.add('three');
    site.change('one');
    const second = await crawl([`${site.origin}/`, '--follow', '--max-age', '0', '--json']);
    expect(second.code, second.stderr).toBe(0);
    const again = JSON.parse(second.stdout) as Report;
    expect(again.crawl.id).not.toBe(old.crawl.id);
    expect(again.crawl.counters).toMatchObject({ admitted: 4, refreshed: 3, done: 4, failed: 0 });
    expect([site.requests().get('/'), site.requestsOf('one'), site.requestsOf('two'), site.requestsOf('three')]).toEqual([2, 2, 2, 1]);
    // The first crawl's own counters, read again from Postgres, are what they were.
    const oldNow = await db.prisma.crawl.findUniqueOrThrow({ where: { id: old.crawl.id } });
    expect([oldNow.admitted, Number(oldNow.handedOverDone), Number(oldNow.refreshed)]).toEqual([3, 3, 0]);

    const bad = await crawl([`${site.origin}/`, '--follow', '--max-age', 'soon']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--max-age must be a duration/);
  }, 300_000);
});
