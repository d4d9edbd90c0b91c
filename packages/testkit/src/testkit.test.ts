import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  challengePage,
  connectionReset,
  emptyPage,
  encodedPage,
  gzipBomb,
  jsRenderedPage,
  pdf,
  pdfBytes,
  redirectChain,
  redirectLoop,
  robotsTxt,
  SAMPLE_TEXTS,
  startTestServer,
  staticArticle,
  tooManyRequests,
  webdriverGatedPage,
  type TestServer,
} from './index.js';

describe('startTestServer', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      '/': { body: staticArticle({ links: ['/a', '/b'] }) },
      '/items/*': (req, res) => res.end(`item ${req.url}`),
      '/delayed': { body: 'late', delayMs: 50 },
      '/robots.txt': robotsTxt('User-agent: *\nDisallow: /private\n'),
      '/429': tooManyRequests(30),
      '/reset': connectionReset(),
      '/bomb': gzipBomb(4 * 1024 * 1024),
      '/cp1251': encodedPage({ charset: 'windows-1251', via: 'header', text: SAMPLE_TEXTS.russian }),
      '/doc.pdf': pdf(pdfBytes()),
      ...redirectChain('/r', 3, '/'),
      ...redirectLoop('/loop-a', '/loop-b'),
    });
  });
  afterAll(() => server.close());

  it('binds loopback on an ephemeral port and serves declarative routes', async () => {
    expect(server.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.port).toBeGreaterThan(0);
    const res = await fetch(server.url('/'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const text = await res.text();
    expect(text).toContain('<a href="/a">');
    expect(Buffer.byteLength(text)).toBeGreaterThan(500);
  });

  it('matches prefix routes, records hits per path and 404s unknown paths', async () => {
    server.resetHits();
    expect(await (await fetch(server.url('/items/7?x=1'))).text()).toBe('item /items/7?x=1');
    expect((await fetch(server.url('/nope'))).status).toBe(404);
    await (await fetch(server.url('/delayed'))).text();
    expect(server.hits()).toBe(3);
    expect(server.hits('/items/7')).toBe(1);
    expect(server.requests[0]).toMatchObject({ method: 'GET', path: '/items/7?x=1' });
  });

  it('sends redirect chains and loops as Location headers', async () => {
    const r1 = await fetch(server.url('/r/1'), { redirect: 'manual' });
    expect(r1.status).toBe(302);
    expect(r1.headers.get('location')).toBe('/r/2');
    const r3 = await fetch(server.url('/r/3'), { redirect: 'manual' });
    expect(r3.headers.get('location')).toBe('/');
    const loop = await fetch(server.url('/loop-b'), { redirect: 'manual' });
    expect(loop.headers.get('location')).toBe('/loop-a');
  });

  it('serves 429 with Retry-After and resets connections', async () => {
    const r = await fetch(server.url('/429'));
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('30');
    await expect(fetch(server.url('/reset'))).rejects.toThrow();
  });

  it('serves a gzip bomb that is small on the wire and large inflated', async () => {
    const r = await fetch(server.url('/bomb'), { headers: { 'accept-encoding': 'identity' } });
    expect(r.headers.get('content-encoding')).toBe('gzip');
    const wire = Buffer.from(await r.arrayBuffer());
    // fetch may or may not inflate; measure both ways against the 4 MiB we asked for.
    const inflated = wire[0] === 0x1f && wire[1] === 0x8b ? gunzipSync(wire) : wire;
    expect(inflated.length).toBeGreaterThan(4 * 1024 * 1024);
  });

  it('encodes windows-1251 so that only the declared charset decodes it', async () => {
    const r = await fetch(server.url('/cp1251'));
    expect(r.headers.get('content-type')).toBe('text/html; charset=windows-1251');
    const bytes = new Uint8Array(await r.arrayBuffer());
    expect(new TextDecoder('windows-1251').decode(bytes)).toContain(SAMPLE_TEXTS.russian);
    expect(new TextDecoder('utf-8').decode(bytes)).not.toContain('Привет');
  });

  it('serves a PDF', async () => {
    const r = await fetch(server.url('/doc.pdf'));
    expect(r.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await r.arrayBuffer()).subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('binds another loopback address as a separate host', async () => {
    const other = await startTestServer({ '/': { body: 'other host' } }, { host: '127.0.0.2' });
    try {
      expect(other.origin.startsWith('http://127.0.0.2:')).toBe(true);
      expect(await (await fetch(other.url('/'))).text()).toBe('other host');
    } finally {
      await other.close();
    }
  });
});

describe('page builders', () => {
  it('gives the JS-rendered shell no visible text', () => {
    const page = jsRenderedPage({ paragraphs: ['Only the browser sees this sentence.'] });
    const withoutScripts = page.replace(/<script[\s\S]*?<\/script>/g, '').replace(/<noscript[\s\S]*?<\/noscript>/g, '');
    expect(withoutScripts).not.toContain('Only the browser');
    expect(page).toContain('Only the browser sees this sentence.');
  });

  it('makes the gated page a Cloudflare challenge until the script lets a browser through', () => {
    const page = webdriverGatedPage();
    expect(page).toContain('<title>Just a moment...</title>');
    expect(page).toContain('/cdn-cgi/challenge-platform/');
    expect(page).toContain('n.webdriver === true');
    expect(page).not.toContain('Welcome past the gate');
    const payload = page.match(/atob\('([^']+)'\)/)?.[1] ?? '';
    expect(Buffer.from(payload, 'base64').toString('utf8')).toContain('<h1>Welcome past the gate</h1>');
  });

  it('builds vendor challenge pages with their markers', () => {
    expect(challengePage('datadome')).toContain('captcha-delivery.com');
    expect(challengePage('perimeterx')).toContain('px-captcha');
    expect(challengePage('akamai')).toContain('Access Denied');
    expect(emptyPage()).not.toMatch(/<p>/);
  });
});
