import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import type { DigestTotals } from './parse-page.js';
import { crawlWithBullmq } from './ref-bullmq.js';
import { crawlWithCrawlee } from './ref-crawlee.js';
import { crawlWithUndici } from './ref-undici.js';
import { startSyntheticWeb, type SyntheticWeb } from './synthetic-web.js';

const PAGES = 30;
const REDIS_URL = 'redis://127.0.0.1:6379';

// The references are only comparable if they do the same work: every page once, parsed to the same digest.
describe('reference crawls do identical work', () => {
  let web: SyntheticWeb;
  const results = new Map<string, { totals: DigestTotals; pageRequests: number; maxPerPage: number }>();

  beforeAll(async () => {
    web = await startSyntheticWeb({ pages: PAGES, domains: 3 });
    const runs: [string, () => Promise<DigestTotals>][] = [
      ['undici', () => crawlWithUndici({ urls: web.urls, concurrency: 4 })],
      ['crawlee', () => crawlWithCrawlee({ urls: web.urls, concurrency: 4 })],
      ['bullmq', () => crawlWithBullmq({ urls: web.urls, concurrency: 4, redisUrl: REDIS_URL, prefix: `{crawler_test_bench_${randomBytes(4).toString('hex')}}` })],
    ];
    for (const [name, run] of runs) {
      web.resetCounts();
      const totals = await run();
      const stats = web.stats();
      results.set(name, { totals, pageRequests: stats.pageRequests, maxPerPage: stats.maxRequestsPerPage });
    }
  }, 120_000);

  afterAll(async () => {
    await web?.close();
  });

  it.each(['undici', 'crawlee', 'bullmq'])('%s fetches every page exactly once and parses it', (name) => {
    const r = results.get(name)!;
    expect(r.totals.okPages).toBe(PAGES);
    expect(r.totals.failedPages).toBe(0);
    expect(r.pageRequests).toBe(PAGES);
    expect(r.maxPerPage).toBe(1);
    expect(r.totals.links).toBeGreaterThan(PAGES * 10);
  });

  it('all three extract the same links and text', () => {
    const undici = results.get('undici')!.totals;
    for (const name of ['crawlee', 'bullmq']) {
      const t = results.get(name)!.totals;
      expect({ name, links: t.links, textChars: t.textChars }).toEqual({ name, links: undici.links, textChars: undici.textChars });
    }
  });
});
