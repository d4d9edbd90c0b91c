import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, staticArticle, type TestServer } from '@crawler/testkit';
import { createPlaywrightFetcher, type PlaywrightFetcher } from './playwright-fetcher.js';

/** Pages of the open web that fight the browser rather than the crawler: each must end in bounded time, and the next page must still load. */
describe('hostile pages in the browser', () => {
  let server: TestServer;
  let fetcher: PlaywrightFetcher;

  beforeAll(async () => {
    server = await startTestServer({
      '/': { body: staticArticle({ title: 'An ordinary page' }) },
      // A router bug of a single-page app: history.pushState in a tight timer loop, forever.
      '/push-storm': {
        body: staticArticle({ title: 'Push storm' }).replace(
          '</body>',
          '<script>var i = 0; setInterval(function () { for (var j = 0; j < 50; j++) history.pushState({}, "", "/p" + i++); }, 1);</script></body>',
        ),
      },
    });
    fetcher = createPlaywrightFetcher({ allowPrivateNetworks: true });
  });

  afterAll(async () => {
    await fetcher.close();
    await server.close();
  });

  it('renders a page that floods the history with pushState within its deadline, and the next page loads', async () => {
    // Playwright launches Chromium without its IPC flooding protection: such a page then flooded the browser process,
    // no other page loaded, and closing it took close to a minute past a 10 s deadline.
    const started = Date.now();
    const storm = await fetcher.fetch({ url: server.url('/push-storm'), timeoutMs: 10_000 }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(13_000);
    expect(storm).toMatchObject({ status: 200, text: expect.stringContaining('Push storm') });
    const next = await fetcher.fetch({ url: server.url('/'), timeoutMs: 10_000 });
    expect(next.text).toContain('An ordinary page');
  }, 120_000);
});
