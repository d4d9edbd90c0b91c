import { readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  forbidden,
  jsRenderedPage,
  redirect,
  slowHeaders,
  startTestServer,
  staticArticle,
  tooManyRequests,
  webdriverGatedPage,
  type TestServer,
} from '@crawler/testkit';
import { validateResponse } from '@crawler/core';
import { createDefaultRegistry, type FetcherRegistry } from '../registry.js';
import type { Page } from 'playwright-core';
import { createPlaywrightFetcher, type BrowserHooks, type PlaywrightFetcher } from './playwright-fetcher.js';
import { FetchError } from '../errors.js';

/** SIGKILL the Chromium processes this test process launched: a real crash, not a polite close. */
function killChildChromium(): number {
  let killed = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8').trim();
      const [, comm = '', rest = ''] = stat.match(/^\d+ \((.*)\) (.*)$/) ?? [];
      const ppid = Number(rest.split(' ')[1]);
      if (ppid === process.pid && /chrom/i.test(comm)) {
        process.kill(Number(entry), 'SIGKILL');
        killed++;
      }
    } catch {
      // The process went away while we looked.
    }
  }
  return killed;
}

/** A static article whose script sends the main frame to `target` once the page has loaded. */
/**
 * A page whose script navigates to `target` before the page has finished arriving (the rest of its body comes 1 s
 * later): Chromium stops parsing it when the navigation starts, and a target that never becomes a document leaves it
 * half-parsed, without DOMContentLoaded.
 */
function navigatesEarlyTo(title: string, target: string): (req: IncomingMessage, res: ServerResponse) => void {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.write(`<!DOCTYPE html><html><head><title>${title}</title></head><body><h1>${title}</h1><script>location.href = '${target}';</script>`);
    const rest = setTimeout(() => res.end('<p>The rest of the page.</p></body></html>'), 1_000);
    res.on('close', () => clearTimeout(rest));
  };
}

function navigatesTo(title: string, target: string): string {
  return staticArticle({ title }).replace('</body>', `<script>setTimeout(function () { location.href = '${target}'; }, 50);</script></body>`);
}

/**
 * A wall no detector of ours knows: its script sets the cookie `name` and asks for the same URL again (or, with
 * `leave`, sends the reader home: a page that sets a cookie and moves on is not a wall). A request carrying the cookie
 * gets the article. `unreadable`: the script runs at once and the body never finishes, so the wall's HTML can never be
 * read back; otherwise the body is whole and the script waits 1 s, longer than the page takes to settle (so the
 * fetcher must wait for it). The wording and the obfuscated calls keep it clear of the challenge detectors, as a wall
 * family we have not met would be.
 */
function unknownWall(status: number, name: string, opts: { unreadable?: boolean; leave?: boolean } = {}): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (!opts.leave && new RegExp(`(^|;\\s*)${name}=1`).test(req.headers.cookie ?? '')) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(staticArticle({ title: 'Past the wall' }));
      return;
    }
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    const go = opts.leave ? "w['loc' + 'ation']['hr' + 'ef'] = '/'" : "w['loc' + 'ation']['rel' + 'oad']()";
    const step = `var w = window; w.document['coo' + 'kie'] = '${name}=1; path=/'; ${go};`;
    res.write(`<!DOCTYPE html><html><head><title>One moment</title></head><body><p>Hold on.</p><script>${opts.unreadable ? step : `setTimeout(function () { ${step} }, 1000);`}</script>`);
    if (!opts.unreadable) {
      res.end('</body></html>');
      return;
    }
    const never = setTimeout(() => res.end('</body></html>'), 15_000);
    res.on('close', () => clearTimeout(never));
  };
}

const CHALLENGE = /Just a moment\.\.\.|\/cdn-cgi\/challenge-platform\//;

describe('browser fetchers (one shared Chromium)', () => {
  let server: TestServer;
  let registry: FetcherRegistry;

  beforeAll(async () => {
    server = await startTestServer({
      '/': { body: staticArticle({ title: 'Static in a browser' }) },
      '/spa': { body: jsRenderedPage({ title: 'Rendered', paragraphs: ['Only a browser reads this sentence.'], renderDelayMs: 100 }) },
      '/gated': { body: webdriverGatedPage({ title: 'Behind the gate' }) },
      '/probe-ua': {
        body: `<html><body><script>document.body.setAttribute('data-ua', navigator.userAgent);document.body.setAttribute('data-wd', String(navigator.webdriver));</script></body></html>`,
      },
      '/img.png': { headers: { 'content-type': 'image/png' }, body: new Uint8Array([137, 80, 78, 71]) },
      '/with-image': { body: `<html><body><p>picture below</p><img src="/img.png"></body></html>` },
      '/moved': redirect('/'),
      '/slow': slowHeaders(5000),
      '/403': forbidden(),
      '/429': tooManyRequests(60),
      // Pages whose script navigates the main frame somewhere that never becomes a document: a file download
      // ("your download starts shortly"), a bytes-only type Chromium also downloads, and a 204.
      '/download-page': { body: navigatesTo('Download page', '/file.zip') },
      '/file.zip': { headers: { 'content-type': 'application/zip', 'content-disposition': 'attachment; filename="f.zip"' }, body: new Uint8Array([80, 75, 3, 4]) },
      '/bytes-page': { body: navigatesTo('Bytes page', '/file.bin') },
      '/file.bin': { headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array([0, 1, 2, 3]) },
      '/no-content-page': { body: navigatesTo('No content page', '/no-content') },
      '/no-content': (_req, res) => res.writeHead(204).end(),
      '/early-download-page': navigatesEarlyTo('Early download page', '/file.zip'),
      '/early-no-content-page': navigatesEarlyTo('Early no content page', '/no-content'),
      '/unread-503': unknownWall(503, 'pass_u503', { unreadable: true }),
      '/unread-200': unknownWall(200, 'pass_u200', { unreadable: true }),
      '/unknown-403': unknownWall(403, 'pass_k403'),
      '/unknown-200': unknownWall(200, 'pass_k200'),
      '/cookie-then-home': unknownWall(200, 'pass_home', { unreadable: true, leave: true }),
      '/forbidden-then-home': unknownWall(403, 'pass_fhome', { leave: true }),
      // Documents that commit and then break: a body that is not the gzip it claims, a chunked body cut short.
      '/gzip-lie': { headers: { 'content-type': 'text/html', 'content-encoding': 'gzip' }, body: staticArticle({ title: 'Not gzip' }) },
      '/cut-chunked': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.write(`<!doctype html><html><head><title>Cut</title></head><body><p>${'The start of a page. '.repeat(50)}`);
        setImmediate(() => res.socket?.destroy());
      },
    });
    registry = createDefaultRegistry({ allowPrivateNetworks: true, browser: { maxPages: 2 } });
  });

  afterAll(async () => {
    await registry.closeAll();
    await server.close();
  });

  it('renders a JS page the plain HTTP fetcher sees empty', async () => {
    const plain = await registry.get('direct_access').fetch({ url: server.url('/spa') });
    expect(plain.text?.replace(/<script[\s\S]*?<\/script>/g, '')).not.toContain('Only a browser reads');
    const rendered = await registry.get('playwright').fetch({ url: server.url('/spa') });
    expect(rendered.fetcher).toBe('playwright');
    expect(rendered.status).toBe(200);
    expect(rendered.contentType).toBe('text/html');
    expect(rendered.text).toContain('<p>Only a browser reads this sentence.</p>');
    expect(rendered.text).toContain('data-rendered="true"');
  });

  it('returns the main document status, headers and redirect chain', async () => {
    const pw = registry.get('playwright');
    const moved = await pw.fetch({ url: server.url('/moved') });
    expect(moved.finalUrl).toBe(server.url('/'));
    expect(moved.redirectChain).toEqual([server.url('/moved')]);
    expect(moved.text).toContain('Static in a browser');
    expect(moved.headers['content-type']).toContain('text/html');
    expect((await pw.fetch({ url: server.url('/403') })).status).toBe(403);
    const limited = await pw.fetch({ url: server.url('/429') });
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('60');
  });

  it('keeps the page a main-frame navigation left in place: a download or a 204 is not the document', async () => {
    for (const [path, title] of [['/download-page', 'Download page'], ['/bytes-page', 'Bytes page'], ['/no-content-page', 'No content page']] as const) {
      for (const name of ['playwright', 'playwright_stealth']) {
        const r = await registry.get(name).fetch({ url: server.url(path) });
        expect({ path, name, status: r.status, contentType: r.contentType, finalUrl: r.finalUrl }).toEqual({ path, name, status: 200, contentType: 'text/html', finalUrl: server.url(path) });
        expect(r.text).toContain(`<h1>${title}</h1>`);
        expect(r.challenge).toBeUndefined();
      }
    }
    // The navigations did happen: each target was asked for (once per fetcher).
    expect([server.hits('/file.zip'), server.hits('/file.bin'), server.hits('/no-content')]).toEqual([2, 2, 2]);
  }, 120_000); // six browser fetches: a clean-clone CI run at load 17 took over 30 s

  it('keeps a page whose script left for a download or a 204 before the page had loaded, as far as it was parsed', async () => {
    // DOMContentLoaded never comes for such a page: waiting for it ran the fetch into its deadline (a clean-clone CI
    // run met this with the pages above, whose script waits 50 ms, on a loaded machine).
    for (const [path, title] of [['/early-download-page', 'Early download page'], ['/early-no-content-page', 'Early no content page']] as const) {
      const r = await registry.get('playwright').fetch({ url: server.url(path) });
      expect({ path, status: r.status, contentType: r.contentType, finalUrl: r.finalUrl }).toEqual({ path, status: 200, contentType: 'text/html', finalUrl: server.url(path) });
      expect(r.text).toContain(`<h1>${title}</h1>`);
      expect(r.challenge).toBeUndefined();
    }
  }, 90_000);

  it('records a wall it got through that it could not read or did not know, by what the page did', async () => {
    // Known only by what the page did: a wall's status that became a page, or the same URL asked for again with a
    // cookie the first request did not carry; whether the wall's HTML was gone before it could be read (its script
    // reloaded before its body ended) or was read and matched no detector.
    for (const path of ['/unread-503', '/unread-200', '/unknown-403', '/unknown-200']) {
      const r = await registry.get('playwright').fetch({ url: server.url(path) });
      expect({ path, status: r.status, challenge: r.challenge }).toMatchObject({ path, status: 200, challenge: { vendor: null, cleared: true } });
      expect(r.challenge!.documents.map((d) => d.url)).toEqual([server.url(path), server.url(path)]);
      expect(r.text).toContain('Past the wall');
    }
    // A page that sets a cookie and sends the reader elsewhere met no wall, whatever its status.
    for (const path of ['/cookie-then-home', '/forbidden-then-home']) {
      const moved = await registry.get('playwright').fetch({ url: server.url(path) });
      expect({ path, finalUrl: moved.finalUrl, status: moved.status, challenge: moved.challenge }).toEqual({ path, finalUrl: server.url('/'), status: 200, challenge: undefined });
      expect(moved.text).toContain('<h1>Static in a browser</h1>');
    }
  }, 90_000);

  it('blocks images by default', async () => {
    server.resetHits();
    const r = await registry.get('playwright').fetch({ url: server.url('/with-image') });
    expect(r.text).toContain('picture below');
    expect(server.hits('/img.png')).toBe(0);
  });

  it('is stopped by a webdriver gate that the stealth fetcher passes', async () => {
    const plain = await registry.get('playwright').fetch({ url: server.url('/gated') });
    expect(plain.text).toMatch(CHALLENGE);
    expect(plain.text).not.toContain('Behind the gate');
    expect(validateResponse({ status: plain.status, headers: plain.headers, body: plain.body }).blockType).toBe('blocked_captcha');
    const stealth = await registry.get('playwright_stealth').fetch({ url: server.url('/gated') });
    expect(stealth.fetcher).toBe('playwright_stealth');
    expect(stealth.text).not.toMatch(CHALLENGE);
    expect(stealth.text).toContain('<h1>Behind the gate</h1>');
    expect(validateResponse({ status: stealth.status, headers: stealth.headers, body: stealth.body }).isBlocked).toBe(false);
  }, 90_000); // the plain browser waits out the gate for CHALLENGE_WAIT_MS (15 s) before it gives up: 23-30 s in CI runs

  it('hides webdriver and headless markers only in stealth', async () => {
    const attrs = (html: string | null) => ({
      ua: html?.match(/data-ua="([^"]*)"/)?.[1] ?? '',
      wd: html?.match(/data-wd="([^"]*)"/)?.[1] ?? '',
    });
    const plain = attrs((await registry.get('playwright').fetch({ url: server.url('/probe-ua') })).text);
    expect(plain.wd).toBe('true');
    const stealth = attrs((await registry.get('playwright_stealth').fetch({ url: server.url('/probe-ua') })).text);
    expect(stealth.wd).toBe('false');
    expect(stealth.ua).toMatch(/Chrome\/\d+/);
    expect(stealth.ua).not.toContain('Headless');
  });

  it('maps refused connections and deadlines to FetchError codes', async () => {
    const closed = await startTestServer({});
    const url = closed.url('/');
    await closed.close();
    const refused = await registry.get('playwright').fetch({ url }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(FetchError);
    expect((refused as FetchError).code).toBe('network_error');
    const blocked = await registry.get('playwright').fetch({ url: 'file:///etc/passwd' }).catch((e: unknown) => e);
    expect((blocked as FetchError).code).toBe('blocked_scheme');
    const late = await registry.get('playwright').fetch({ url: server.url('/slow'), timeoutMs: 800 }).catch((e: unknown) => e);
    expect((late as FetchError).code).toBe('timeout');
    expect((late as FetchError).retryable).toBe(true);
  });

  it('fails a document that breaks after it committed with its own error, instead of waiting for the deadline', async () => {
    // With a deadline that the wait for DOMContentLoaded would run into, the code tells which ended the fetch.
    const lie = await registry.get('playwright').fetch({ url: server.url('/gzip-lie'), timeoutMs: 8_000 }).catch((e: unknown) => e);
    expect([(lie as FetchError).code, (lie as FetchError).message]).toEqual(['decode_error', expect.stringContaining('ERR_CONTENT_DECODING_FAILED')]);
    const cut = await registry.get('playwright').fetch({ url: server.url('/cut-chunked'), timeoutMs: 8_000 }).catch((e: unknown) => e);
    expect((cut as FetchError).code).toBe('network_error');
  }, 30_000);
  // The SSRF guard in the browser (redirects, subresources, WebSockets, popups, downloads): egress.int.test.ts.
});

describe('browser pool lifecycle', () => {
  let server: TestServer;
  let fetcher: PlaywrightFetcher;

  beforeAll(async () => {
    server = await startTestServer({ '/*': { body: staticArticle() } });
    fetcher = createPlaywrightFetcher({ allowPrivateNetworks: true, browser: { maxPages: 2, maxPagesPerBrowser: 3, maxPagesPerContext: 2 } });
  });

  afterAll(async () => {
    await fetcher.close();
    await server.close();
  });

  it('launches lazily, retires the browser after N pages and relaunches', async () => {
    expect(fetcher.pool.stats().launches).toBe(0);
    for (let i = 0; i < 4; i++) {
      const r = await fetcher.fetch({ url: server.url(`/p${i}`) });
      expect(r.status).toBe(200);
    }
    const stats = fetcher.pool.stats();
    expect(stats.launches).toBe(2);
    expect(stats.pagesOpened).toBe(4);
    // 2 pages per context: contexts for pages 1-2 and 3 on the first browser, 4 on the second.
    expect(stats.contextsCreated).toBe(3);
  });

  it('relaunches after the browser disconnects', async () => {
    const before = fetcher.pool.stats().launches;
    expect(killChildChromium()).toBeGreaterThan(0);
    for (let i = 0; i < 100 && fetcher.pool.stats().browserRunning; i++) await new Promise((r) => setTimeout(r, 50));
    expect(fetcher.pool.stats().browserRunning).toBe(false);
    const r = await fetcher.fetch({ url: server.url('/after-crash') });
    expect(r.status).toBe(200);
    expect(fetcher.pool.stats().launches).toBe(before + 1);
  });

  it('returns the result of a page whose close Chromium acknowledged and dropped, and closes that page', async () => {
    let dropped: Page | undefined;
    // As Chromium does with a close that races a navigation's commit (a meta refresh, a script setting `location`): the
    // close is acknowledged, the page stays open, and Playwright's page.close() never settles.
    const hooks: BrowserHooks = {
      profile: 'drops-a-close',
      async newContext(browser) {
        const context = await browser.newContext();
        const newPage = context.newPage.bind(context);
        context.newPage = async () => {
          const page = await newPage();
          if (!dropped) {
            dropped = page;
            page.close = () => new Promise<void>(() => undefined);
          }
          return page;
        };
        return context;
      },
    };
    const dropping = createPlaywrightFetcher({ allowPrivateNetworks: true, browser: { maxPages: 2, maxPagesPerBrowser: 3, maxPagesPerContext: 2 } }, { pool: fetcher.pool, hooks, onClose: async () => undefined });
    try {
      const r = await dropping.fetch({ url: server.url('/close-dropped'), timeoutMs: 20_000 });
      expect({ status: r.status, closed: dropped?.isClosed(), inFlight: fetcher.pool.stats().inFlight }).toEqual({ status: 200, closed: true, inFlight: 0 });
      expect((await dropping.fetch({ url: server.url('/after-dropped-close') })).status).toBe(200);
    } finally {
      await dropping.close();
    }
  }, 60_000);
});

describe('idle contexts', () => {
  it('closes a site context after it has been idle for contextIdleMs', async () => {
    const server = await startTestServer({ '/': { body: staticArticle() } });
    const fetcher = createPlaywrightFetcher({ allowPrivateNetworks: true, browser: { contextIdleMs: 300 } });
    try {
      await fetcher.fetch({ url: server.url('/') });
      expect(fetcher.pool.stats().contextsCreated).toBe(1);
      // Bounded wait for the sweeper, not a timing assertion: it must happen, however slow the machine.
      for (let i = 0; i < 100 && fetcher.pool.stats().openContexts > 0; i++) await new Promise((r) => setTimeout(r, 100));
      expect(fetcher.pool.stats().openContexts).toBe(0);
      // The next job for the site gets a fresh context on the same browser.
      await fetcher.fetch({ url: server.url('/') });
      expect(fetcher.pool.stats()).toMatchObject({ contextsCreated: 2, launches: 1 });
    } finally {
      await fetcher.close();
      await server.close();
    }
  });
});
