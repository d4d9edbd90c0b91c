/**
 * A follow crawl of sim-web's traps site (45 real pages among crawler traps), real Postgres and Redis: the budget goes
 * to pages, not to spellings of pages it already has or to URLs that only go deeper into one page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimWeb, trapAreaOf, trapResourceOf, type SimWeb } from '@crawler/sim-web';
import { startE2e, waitFor } from '../__fixtures__/e2e.js';

const ENV = { FETCHERS: 'simple_http:8', DOMAIN_MAX_CONCURRENCY: '8', DOMAIN_MIN_DELAY_MS: '0', ROUTER_CONCURRENCY: '8', PROBE_TIMEOUT_MS: '30000', ALLOW_PRIVATE_NETWORKS: 'true' };

describe('a follow crawl among crawler traps', () => {
  let web: SimWeb;
  beforeAll(async () => {
    web = await startSimWeb({ sites: [{ kind: 'traps' }, { kind: 'static' }], firstHost: '127.0.42.2' });
  });
  afterAll(async () => {
    await web?.close();
  });

  it('fetches each session-id page, each parameter order and each self-repeating path once at most', async () => {
    const site = web.sites[0]!;
    const c = await startE2e('crawl_traps', ENV);
    try {
      // maxDepth bounds the calendar; /big's 100,000 items are pages, not a trap, and would only make the test long.
      const created = await c.runtime.crawls.create({ seeds: [`${site.origin}/`], maxDepth: 6, exclude: ['/big/**'] });
      c.runtime.startWorkers();
      await waitFor(async () => (await c.runtime.crawlStore.view(created.crawl.id))?.state !== 'running', 'crawl to settle', 240_000);

      const perResource = new Map<string, string[]>();
      const perArea = new Map<string, number>();
      for (const r of site.requestLog()) {
        perResource.set(trapResourceOf(r.path), [...(perResource.get(trapResourceOf(r.path)) ?? []), r.path]);
        perArea.set(trapAreaOf(r.path), (perArea.get(trapAreaOf(r.path)) ?? 0) + 1);
      }
      // The six shop pages, whatever session id their links carried.
      expect([...perResource.keys()].filter((k) => k.startsWith('/shop')).sort()).toEqual(['/shop', '/shop/product/1', '/shop/product/2', '/shop/product/3', '/shop/product/4', '/shop/product/5']);
      expect(perArea.get('shop')).toBe(6);
      expect(perResource.get('/list?a=1&b=2')).toHaveLength(1);
      // /deep/, /deep/a/, /deep/a/a/: a third `a` is the trap.
      expect(perArea.get('deep')).toBe(3);
      // Every real page was fetched.
      for (const n of [1, 20, 40]) expect(perResource.has(`/article/${n}`)).toBe(true);
      // The crawl says why: the repeating path is counted, and named, as a trap.
      const view = await c.runtime.crawlStore.view(created.crawl.id);
      expect(view?.counters.outOfScopeByReason.trap).toBeGreaterThanOrEqual(1);
      expect(view?.outOfScopeSamples.trap).toContain(`${site.origin}/deep/a/a/a/`);
    } finally {
      await c.cleanup();
    }
  }, 300_000);
});
