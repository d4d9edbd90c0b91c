/**
 * Why a crawl refused the links it did not follow: GET /crawls/:id's outOfScope by reason (another site, no include
 * matched, an exclude matched, nofollow) with the first URLs of each, counted by the frontier over a real crawl.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { html, staticArticle, startTestServer, type TestServer } from '@crawler/testkit';
import { startE2e, waitFor } from '../__fixtures__/e2e.js';

const ENV = { FETCHERS: 'simple_http:4', ROBOTS_ENABLED: 'false', PROBE_TIMEOUT_MS: '30000' };

/** An article whose page also links these anchors (raw HTML: `rel` included). */
const pageWith = (anchors: string[]) => html(staticArticle().replace('</main>', `<nav>${anchors.join('\n')}</nav></main>`));

let site: TestServer;

beforeAll(async () => {
  site = await startTestServer({
    '/docs/': pageWith([
      '<a href="/docs/a">in scope</a>',
      '<a href="/blog/x">no include</a>',
      '<a href="/docs/private/y">excluded</a>',
      '<a href="https://elsewhere.example/z">another site</a>',
      '<a rel="nofollow" href="/docs/b">nofollow</a>',
      // Not http(s): never a link of the crawl, so in no counter.
      '<a href="mailto:editor@example.com">mail</a>',
      // Off-site and nofollow: the scope's refusal (followNofollow would not follow it either).
      '<a rel="nofollow" href="https://ads.example/click">ad</a>',
    ]),
    '/docs/a': pageWith(['<a href="https://another.example/w">another site</a>', '<a href="/docs/private/q">excluded</a>']),
    '*': html(staticArticle()),
  });
});

afterAll(async () => {
  await site?.close();
});

describe('a crawl\'s refusals by reason', () => {
  it('counts each rule apart, outOfScope their sum, with the refused URLs in order of discovery', async () => {
    const c = await startE2e('crawl_refusals', ENV);
    try {
      const created = await c.runtime.crawls.create({ seeds: [site.url('/docs/')], include: ['/docs/**'], exclude: ['/docs/private/**'] });
      c.runtime.startWorkers();
      await waitFor(async () => (await c.runtime.crawlStore.view(created.crawl.id))?.state !== 'running', 'the crawl to settle', 120_000);
      const view = (await c.runtime.crawlStore.view(created.crawl.id))!;
      expect(view.counters).toMatchObject({ admitted: 2, done: 2, outOfScope: 7 });
      expect(view.counters.outOfScopeByReason).toEqual({ scope: 3, include: 1, exclude: 2, trap: 0, nofollow: 1 });
      expect(view.outOfScopeSamples).toEqual({
        scope: ['https://elsewhere.example/z', 'https://ads.example/click', 'https://another.example/w'],
        include: [site.url('/blog/x')],
        exclude: [site.url('/docs/private/y'), site.url('/docs/private/q')],
        nofollow: [site.url('/docs/b')],
      });
      expect(site.hits('/docs/b') + site.hits('/blog/x') + site.hits('/docs/private/y')).toBe(0);
    } finally {
      await c.cleanup();
    }
  }, 180_000);
});
