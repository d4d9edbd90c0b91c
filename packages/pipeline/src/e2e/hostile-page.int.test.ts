/**
 * End to end with the SSRF guard on (only the site's host allowed, no private networks): JS-rendered pages whose
 * scripts, once rendered, try to reach a private address in the background — a download link through a 302, a
 * script navigation through a 302, a fetch() through a 302. Each link ends `done` by a browser with the page's
 * rendered content, nothing reaches the private address, and each refused attempt is logged at warn with the page.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '@crawler/core';
import { HOSTILE_RENDERED_TEXT, hostileRoutes, startPrivateTarget, startTestServer, type PrivateTarget, type TestServer } from '@crawler/testkit';
import { startE2e, waitFor, type E2eCrawler } from '../__fixtures__/e2e.js';

let crawler: E2eCrawler | undefined;
let site: TestServer | undefined;
let inner: PrivateTarget | undefined;

afterEach(async () => {
  await crawler?.cleanup();
  await site?.close();
  await inner?.close();
  crawler = undefined;
});

const warnings: Record<string, unknown>[] = [];
const logger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (o: object | string) => void warnings.push(typeof o === 'string' ? { msg: o } : (o as Record<string, unknown>)),
  error: () => undefined,
  child: () => logger,
};

describe('end to end: a hostile page cannot fail its own fetch', () => {
  it('ends every link done with its rendered content; 0 requests reach the private address', async () => {
    inner = await startPrivateTarget('127.0.0.9');
    site = await startTestServer(hostileRoutes(inner.origin), { host: '127.0.6.80' });
    crawler = await startE2e('hostile', { ALLOW_PRIVATE_NETWORKS: 'false', FETCH_ALLOW_HOSTS: '127.0.6.80', FETCH_TIMEOUT_MS: '30000' }, { logger });
    const urls = ['download-302', 'location-302', 'fetch-302', 'iframe-302'].map((v) => site!.url(`/hostile/${v}`));
    const { accepted } = await crawler.runtime.enqueue(urls);
    crawler.runtime.startWorkers();
    await waitFor(async () => (await crawler!.db.prisma.link.count({ where: { status: { in: ['done', 'failed'] } } })) === urls.length, 'every link settled', 180_000);

    const links = await crawler.db.prisma.link.findMany({ where: { id: { in: accepted.map((a) => a.linkId) } } });
    expect(links.map((l) => [l.url, l.status, l.errorType ?? null]).sort()).toEqual(urls.map((u) => [u, 'done', null]).sort());
    for (const link of links) {
      // The page needs script to show its content: a browser fetched it, and what it rendered was kept.
      expect(['playwright', 'playwright_stealth']).toContain(link.fetcher);
      const stored = await crawler.content.latestForLink(link.id);
      expect(new TextDecoder().decode(stored!.body)).toContain(HOSTILE_RENDERED_TEXT);
    }
    // The case, logged with its page. (Four pages share the site's context here, so a background fetch() may
    // not even leave the browser before its page is done: the fetcher-level test checks every variant's warning.)
    const download = urls[0]!;
    expect(warnings.some((w) => w['pageUrl'] === download && String(w['target']).startsWith(`${inner.origin}/`)), JSON.stringify(warnings)).toBe(true);
    expect(warnings.filter((w) => typeof w['target'] === 'string').every((w) => urls.includes(String(w['pageUrl'])) && String(w['target']).startsWith(`${inner!.origin}/`))).toBe(true);
    expect(inner.requests).toEqual([]);
    expect(inner.connections).toBe(0);
  }, 240_000);
});
