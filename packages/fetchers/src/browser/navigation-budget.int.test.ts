import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, staticArticle, type Routes, type TestServer } from '@crawler/testkit';
import { createPlaywrightFetcher, type PlaywrightFetcher } from './playwright-fetcher.js';
import { MAX_NAVIGATIONS, NavigationBudget } from './navigation-budget.js';
import { loadPlaywright } from './playwright-module.js';
import { resolveFetchersOptions } from '../options.js';

/** A page that sends the browser somewhere on load: a meta refresh in its head, or a script at the end of its body. */
function page(title: string, { head = '', script = '' }: { head?: string; script?: string }): string {
  const html = staticArticle({ title }).replace('</head>', `${head}</head>`);
  return script ? html.replace('</body>', `<script>${script}</script></body>`) : html;
}

/**
 * Pages that navigate the browser again and again, by accident (a misconfigured refresh) or as a crawler trap: each
 * navigation is a request to the site that no politeness gate sees, so one fetch must make a bounded number of them.
 */
describe('a page that keeps navigating the browser', () => {
  let server: TestServer;
  let fetcher: PlaywrightFetcher;
  // The production set-up: every request through the egress proxy, the page's own navigations guarded by a route.
  let guardedServer: TestServer;
  let guarded: PlaywrightFetcher;

  beforeAll(async () => {
    const routes: Routes = {
      '/': { body: staticArticle({ title: 'An ordinary page' }) },
      '/refresh-self': { body: page('Refreshes itself', { head: '<meta http-equiv="refresh" content="0">' }) },
      '/refresh-next': (req, res) => {
        const n = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('n') ?? '0');
        res.writeHead(200, { 'content-type': 'text/html' }).end(page(`Step ${n}`, { head: `<meta http-equiv="refresh" content="0; url=/refresh-next?n=${n + 1}">` }));
      },
      '/reload-loop': { body: page('Reloads itself', { script: 'location.reload();' }) },
      '/href-loop': (req, res) => {
        const n = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('n') ?? '0');
        res.writeHead(200, { 'content-type': 'text/html' }).end(page(`Hop ${n}`, { script: `location.href = '/href-loop?n=${n + 1}';` }));
      },
      // A redirect chain of a few hops made by scripts, as some sites do: within the budget, it ends on its content.
      '/hop-1': { body: page('Hop 1', { script: "location.replace('/hop-2');" }) },
      '/hop-2': { body: page('Hop 2', { head: '<meta http-equiv="refresh" content="0; url=/hop-3">' }) },
      '/hop-3': { body: page('Hop 3', { script: "location.href = '/landed';" }) },
      '/landed': { body: staticArticle({ title: 'Landed after three hops' }) },
      // An iframe that refreshes itself (a widget's misconfigured refresh): its navigations are requests to the site too.
      '/framed': { body: page('Hosts a frame', { script: "document.body.appendChild(Object.assign(document.createElement('iframe'), { src: '/frame-refresh' }));" }) },
      '/frame-refresh': { body: '<!DOCTYPE html><html><head><meta http-equiv="refresh" content="0"></head><body>frame</body></html>' },
    };
    server = await startTestServer(routes);
    fetcher = createPlaywrightFetcher({ allowPrivateNetworks: true });
    guardedServer = await startTestServer(routes, { host: '127.0.1.47' });
    guarded = createPlaywrightFetcher({ allowHosts: ['127.0.1.47'] });
  });

  afterAll(async () => {
    await Promise.all([fetcher?.close(), guarded?.close()]);
    await Promise.all([server?.close(), guardedServer?.close()]);
  });

  // Before the budget, one fetch of /refresh-self sent the site 38 requests, one of /refresh-next 51.
  it.each([
    ['a meta refresh to itself', false, '/refresh-self', 'Refreshes itself'],
    ['a meta refresh to the next URL each time', false, '/refresh-next', 'Step'],
    ['a script that reloads the page', false, '/reload-loop', 'Reloads itself'],
    ['a script that goes to the next URL each time', false, '/href-loop', 'Hop'],
    ['a meta refresh to itself', true, '/refresh-self', 'Refreshes itself'],
    ['a script that goes to the next URL each time', true, '/href-loop', 'Hop'],
  ])('stops %s after a bounded number of navigations and returns the page it stopped on (guarded: %s)', async (_name, isGuarded, path, title) => {
    const [site, browser] = isGuarded ? [guardedServer, guarded] : [server, fetcher];
    site.resetHits();
    const r = await browser.fetch({ url: site.url(path), timeoutMs: 20_000 });
    // The fetch is over: anything the page still tried would show up in the count now.
    const requests = site.requests.filter((q) => q.path.startsWith(path)).length;
    expect({ status: r.status, title: r.text?.includes(title), bounded: requests <= MAX_NAVIGATIONS }).toEqual({ status: 200, title: true, bounded: true });
    expect(requests).toBeGreaterThan(1);
    // The page returned is the last one the site was asked for.
    expect(r.finalUrl).toBe(site.url(site.requests.filter((q) => q.path.startsWith(path)).at(-1)!.path));
    const next = await browser.fetch({ url: site.url('/') });
    expect(next.text).toContain('An ordinary page');
  }, 60_000);

  it('bounds an iframe that refreshes itself as it bounds the page, and returns the page', async () => {
    server.resetHits();
    const r = await fetcher.fetch({ url: server.url('/framed'), timeoutMs: 20_000 });
    const frameRequests = server.requests.filter((q) => q.path === '/frame-refresh').length;
    expect({ status: r.status, page: r.text?.includes('Hosts a frame'), bounded: frameRequests <= MAX_NAVIGATIONS }).toEqual({ status: 200, page: true, bounded: true });
    expect(frameRequests).toBeGreaterThan(1);
  }, 60_000);

  // The fetcher closes its page after the render returns: a refresh the page starts in between went out unbudgeted,
  // the ninth request for /refresh-self that the guarded case above saw about once in 35 runs.
  it('keeps the bound after the render stopped it, until the page closes', async () => {
    const { chromium } = await loadPlaywright();
    const browser = await chromium.launch({ executablePath: resolveFetchersOptions({}).chromiumPath });
    try {
      const page = await browser.newPage();
      server.resetHits();
      const budget = NavigationBudget.watch(page);
      await page.goto(server.url('/refresh-self'), { waitUntil: 'commit' });
      await budget.stop();
      // Unbounded, the refresh loop sent about ten requests a second here (53 in 5 s).
      await new Promise((r) => setTimeout(r, 2_000));
      expect(server.requests.filter((q) => q.path === '/refresh-self').length).toBe(MAX_NAVIGATIONS);
    } finally {
      await browser.close();
    }
  }, 60_000);

  it('follows a chain of a few hops made by scripts and a refresh to its content', async () => {
    const r = await fetcher.fetch({ url: server.url('/hop-1') });
    expect({ finalUrl: r.finalUrl, landed: r.text?.includes('Landed after three hops') }).toEqual({ finalUrl: server.url('/landed'), landed: true });
  });
});
