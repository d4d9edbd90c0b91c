import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import type { Logger } from '@crawler/core';
import { HOSTILE_RENDERED_TEXT, startTestServer, type TestServer } from '@crawler/testkit';
import { createDefaultRegistry, type FetcherRegistry } from '../registry.js';
import { FetchError } from '../errors.js';

const CAP = 1024 * 1024;

/** A response that never ends, counting what it managed to write (what the proxy let Chromium pull). */
function endless(sent: { bytes: number }, contentType: string, prefix: string) {
  const chunk = Buffer.alloc(64 * 1024, 'a');
  return (_req: unknown, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': contentType });
    res.write(prefix);
    const pump = () => {
      while (!res.destroyed && res.write(chunk)) sent.bytes += chunk.length;
      if (!res.destroyed) res.once('drain', pump);
    };
    res.on('close', () => res.removeAllListeners('drain'));
    pump();
  };
}

/**
 * The browsers' egress proxy caps every response it relays at the fetchers' `maxBytes` (FETCH_MAX_BYTES): an endless
 * stream is cut there, not at FETCH_TIMEOUT_MS. The crawler's own document cut that way is `too_large`; a subresource
 * cut that way is the page's own business (like everything it fetches in the background): logged, and the page is
 * done with what it rendered.
 */
describe('browser egress byte cap', () => {
  let site: TestServer;
  let registry: FetcherRegistry;
  const mainSent = { bytes: 0 };
  const subSent = { bytes: 0 };
  const warnings: Record<string, unknown>[] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (o: object | string) => void warnings.push(typeof o === 'string' ? { msg: o } : (o as Record<string, unknown>)),
    error: () => undefined,
    child: () => logger,
  };

  beforeAll(async () => {
    site = await startTestServer({
      '/endless': endless(mainSent, 'text/html; charset=utf-8', '<!doctype html><html><body><p>'),
      '/endless.js': endless(subSent, 'application/javascript', '/* '),
      '/page': {
        body: `<!doctype html><html><body><div id="root"></div><script>document.getElementById('root').innerHTML = '<p>${HOSTILE_RENDERED_TEXT}</p>';</script>
<script src="/endless.js"></script></body></html>`,
      },
    }, { host: '127.0.0.2' });
    // The guard on, as in production; a fetch deadline far away, so only the cap can end these streams in time.
    registry = createDefaultRegistry({ allowHosts: ['127.0.0.2'], maxBytes: CAP, timeoutMs: 120_000, logger, browser: { maxPages: 1 } });
  });

  afterAll(async () => {
    await registry.closeAll();
    await site.close();
  });

  it.each(['playwright', 'playwright_stealth'])('%s: an endless main document ends too_large, having pulled about the cap', async (name) => {
    mainSent.bytes = 0;
    const err = (await registry.get(name).fetch({ url: site.url('/endless') }).catch((e: unknown) => e)) as FetchError;
    expect(err).toBeInstanceOf(FetchError);
    expect(err.code).toBe('too_large');
    // Bounded: the server could write the cap plus what socket buffers hold, not the minutes' worth a deadline allows.
    expect(mainSent.bytes).toBeLessThan(CAP * 8);
  }, 150_000);

  it.each(['playwright', 'playwright_stealth'])('%s: an endless subresource is cut and the page is done with what it rendered', async (name) => {
    subSent.bytes = 0;
    warnings.length = 0;
    const url = site.url('/page');
    const result = await registry.get(name).fetch({ url });
    expect(result.status).toBe(200);
    expect(result.text).toContain(HOSTILE_RENDERED_TEXT);
    expect(subSent.bytes).toBeLessThan(CAP * 8);
    expect(warnings.some((w) => w['pageUrl'] === url && String(w['target']).endsWith('/endless.js')), JSON.stringify(warnings)).toBe(true);
  }, 150_000);
});

/** Chromium loads a page with up to 256 KiB of response headers; the proxy in front of it must relay them too. */
describe('browser egress response headers', () => {
  let site: TestServer;
  let registry: FetcherRegistry;

  beforeAll(async () => {
    site = await startTestServer({
      '/big-headers': (_req, res) =>
        void res.writeHead(200, { 'content-type': 'text/html', 'x-policy': 'a'.repeat(100_000) }).end(`<!doctype html><html><body><p>${HOSTILE_RENDERED_TEXT}</p></body></html>`),
    }, { host: '127.0.0.2' });
    registry = createDefaultRegistry({ allowHosts: ['127.0.0.2'], browser: { maxPages: 1 } });
  });

  afterAll(async () => {
    await registry.closeAll();
    await site.close();
  });

  it('relays 100 KB of response headers to the browser (a big CSP, many cookies) instead of failing the page', async () => {
    const result = await registry.get('playwright').fetch({ url: site.url('/big-headers') });
    expect(result.status).toBe(200);
    expect(result.text).toContain(HOSTILE_RENDERED_TEXT);
  }, 60_000);
});
