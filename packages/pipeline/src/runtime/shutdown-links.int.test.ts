/**
 * What a stopped crawler leaves in Postgres: links its router handed to a fetcher whose fetch had not started are
 * waiting, not being fetched, and read `queued` once no fetch worker serves their queue; the next crawler fetches them.
 */
import { describe, expect, it } from 'vitest';
import { html, slowHeaders, staticArticle, startTestServer } from '@crawler/testkit';
import { createRuntime } from '../index.js';
import { startE2e, waitFor } from '../__fixtures__/e2e.js';

const ENV = { FETCHERS: 'simple_http:1', FETCH_INLINE: 'false', DOMAIN_MAX_CONCURRENCY: '1', ROUTER_CONCURRENCY: '8', PROBE_TIMEOUT_MS: '30000' };

describe('a crawler stopped while fetch jobs wait', () => {
  it('leaves the links not being fetched queued, not fetching, and a later crawler fetches them all', async () => {
    const site = await startTestServer({ '/robots.txt': { status: 404 }, '/': html(staticArticle()), '*': slowHeaders(800) }, { host: '127.0.0.2' });
    const c = await startE2e('shutdown_links', ENV);
    const urls = Array.from({ length: 10 }, (_, i) => site.url(`/p/${i}`));
    try {
      await c.runtime.enqueue(urls);
      c.runtime.startWorkers();
      const fetching = () => c.db.prisma.link.count({ where: { status: 'fetching' } });
      await waitFor(async () => (await fetching()) >= 2, 'links handed to the fetcher', 120_000);
      await c.runtime.close({ drainTimeoutMs: 60_000 });
      const after = await c.db.prisma.link.groupBy({ by: ['status'], _count: true });
      const byStatus = Object.fromEntries(after.map((r) => [r.status, r._count]));
      expect(byStatus.fetching ?? 0, JSON.stringify(byStatus)).toBe(0);
      expect(byStatus.queued ?? 0, JSON.stringify(byStatus)).toBeGreaterThanOrEqual(2);

      const next = createRuntime(c.config, { prisma: c.db.prisma });
      try {
        next.startWorkers();
        await waitFor(async () => (await c.db.prisma.link.count({ where: { status: 'done' } })) === urls.length, 'every link done', 180_000);
      } finally {
        await next.close({ drainTimeoutMs: 5_000 });
      }
      // Each page once: a link given back to `queued` keeps its fetch job, it is not routed and fetched twice.
      expect(urls.map((u) => site.hits(new URL(u).pathname))).toEqual(urls.map(() => 1));
    } finally {
      await c.cleanup();
      await site.close();
    }
  }, 360_000);
});
