import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestCa, redirect, startForwardProxy, startTestServer, staticArticle, type ForwardProxy, type TestCa, type TestServer } from '@crawler/testkit';
import { createDefaultRegistry, type FetcherRegistry } from './registry.js';
import { FetchError } from './errors.js';

const FETCHERS = ['simple_http', 'playwright', 'playwright_stealth'] as const;

/** What a fetch came to: `status N <final URL> <title>`, or `code: message`. */
async function outcome(registry: FetcherRegistry, fetcher: string, url: string, timeoutMs = 20_000, proxyUrl?: string): Promise<string> {
  try {
    const r = await registry.get(fetcher).fetch({ url, timeoutMs, ...(proxyUrl ? { exit: { tier: 'residential', proxyUrl } } : {}) });
    return `status ${r.status} ${r.finalUrl} ${/<title>([^<]*)<\/title>/.exec(r.text ?? '')?.[1] ?? ''}`;
  } catch (err) {
    if (!(err instanceof FetchError)) throw err;
    return `${err.code}: ${err.message}`;
  }
}

describe('fetchers over TLS', () => {
  let ca: TestCa;
  let untrusted: TestServer;
  let hang: TcpServer;
  const hung = new Set<Socket>();
  let h2only: Http2SecureServer;
  let registry: FetcherRegistry;
  beforeAll(async () => {
    ca = createTestCa();
    const leaf = ca.issue({ hosts: ['127.0.0.1', 'localhost'] });
    untrusted = await startTestServer({ '/': { body: staticArticle({ title: 'Secure' }) } }, { tls: leaf });
    hang = createTcpServer((s) => hung.add(s));
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
    h2only = createSecureServer({ ...leaf, allowHTTP1: false }, (_req, res) => res.end(staticArticle({ title: 'H2' })));
    await new Promise<void>((r) => h2only.listen(0, '127.0.0.1', r));
    registry = createDefaultRegistry({ allowPrivateNetworks: true, connectTimeoutMs: 2_000 });
  });
  afterAll(async () => {
    await registry?.closeAll();
    for (const s of hung) s.destroy();
    hang?.close();
    h2only?.close();
    await untrusted?.close();
  });

  for (const f of FETCHERS) {
    it(`${f}: a certificate from a CA nobody trusts is a tls_error`, async () => {
      expect(await outcome(registry, f, untrusted.url('/'))).toMatch(/^tls_error: .*(UNABLE_TO_VERIFY|ERR_CERT_AUTHORITY_INVALID)/);
    });
    it(`${f}: a server that accepts TCP and never finishes the TLS handshake is a timeout`, async () => {
      expect(await outcome(registry, f, `https://127.0.0.1:${(hang.address() as AddressInfo).port}/`, 4_000)).toMatch(/^timeout: /);
    });
  }

  it('simple_http: an HTTP/2-only server is asked again over HTTP/2, whose certificate is checked like any other', async () => {
    // (h2-only.int.test.ts fetches such a server with its CA trusted.)
    expect(await outcome(registry, 'simple_http', `https://127.0.0.1:${(h2only.address() as AddressInfo).port}/`)).toMatch(/^tls_error: .*UNABLE_TO_VERIFY/);
  });
});

describe('fetchers trusting a private CA (extraCaCerts, env NODE_EXTRA_CA_CERTS)', () => {
  const DAY_MS = 86_400_000;
  let ca: TestCa;
  let good: TestServer;
  let expired: TestServer;
  let wrongHost: TestServer;
  let plain: TestServer;
  let h2only: Http2SecureServer;
  let proxy: ForwardProxy;
  let registry: FetcherRegistry;
  beforeAll(async () => {
    proxy = await startForwardProxy();
    ca = createTestCa();
    // The CA goes out in the chain, as a TLS-inspecting proxy sends its issuing CA: what Chromium's SPKI list needs.
    const chained = (leaf: { cert: string; key: string }) => ({ cert: leaf.cert + ca.cert, key: leaf.key });
    const page = { '/': { body: staticArticle({ title: 'Secure' }) } };
    good = await startTestServer(page, { tls: chained(ca.issue({ hosts: ['127.0.0.1'] })) });
    expired = await startTestServer(page, { tls: chained(ca.issue({ hosts: ['127.0.0.1'], notBefore: new Date(Date.now() - 2 * DAY_MS), notAfter: new Date(Date.now() - DAY_MS) })) });
    wrongHost = await startTestServer(page, { tls: chained(ca.issue({ hosts: ['127.0.0.2'] })) });
    plain = await startTestServer({ '/': redirect(good.url('/'), 301), '/cookies': (req, res) => res.end(`<title>cookies: ${req.headers.cookie ?? ''}</title>`) });
    // A Secure cookie set on the way through an https hop, and a plain one, then a downgrade to http://.
    good.route('/downgrade', { status: 302, headers: { location: plain.url('/cookies'), 'set-cookie': 'sid=s3cret; Path=/; Secure; HttpOnly' } });
    good.route('/downgrade-plain', { status: 302, headers: { location: plain.url('/cookies'), 'set-cookie': 'lang=en; Path=/' } });
    h2only = createSecureServer({ ...chained(ca.issue({ hosts: ['127.0.0.1'] })), allowHTTP1: false }, (_req, res) => res.end(staticArticle({ title: 'H2' })));
    await new Promise<void>((r) => h2only.listen(0, '127.0.0.1', r));
    registry = createDefaultRegistry({ allowPrivateNetworks: true, extraCaCerts: [ca.cert] });
  });
  afterAll(async () => {
    await registry?.closeAll();
    h2only?.close();
    await Promise.all([good, expired, wrongHost, plain, proxy].map((s) => s?.close()));
  });

  for (const f of FETCHERS) {
    it(`${f}: stores the page of a site whose certificate the CA issued`, async () => {
      expect(await outcome(registry, f, good.url('/'))).toBe(`status 200 ${good.url('/')} Secure`);
    });
    it(`${f}: follows an http → https redirect`, async () => {
      expect(await outcome(registry, f, plain.url('/'))).toBe(`status 200 ${good.url('/')} Secure`);
    });
    it(`${f}: checks an IP-literal site's certificate against its address through an exit proxy's tunnel too`, async () => {
      const tunnels = proxy.tunnels;
      expect(await outcome(registry, f, good.url('/'), 20_000, proxy.url)).toBe(`status 200 ${good.url('/')} Secure`);
      expect(proxy.tunnels).toBeGreaterThan(tunnels);
    });
  }

  it('simple_http: a Secure cookie an https hop set is not sent on to an http:// hop of the same host', async () => {
    expect(await outcome(registry, 'simple_http', good.url('/downgrade-plain'))).toBe(`status 200 ${plain.url('/cookies')} cookies: lang=en`);
    expect(await outcome(registry, 'simple_http', good.url('/downgrade'))).toBe(`status 200 ${plain.url('/cookies')} cookies: `);
  });

  it('simple_http: through an exit proxy, a certificate for another host is still a tls_error', async () => {
    expect(await outcome(registry, 'simple_http', wrongHost.url('/'), 20_000, proxy.url)).toMatch(/^tls_error: ERR_TLS_CERT_ALTNAME_INVALID: .*IP: 127\.0\.0\.1 is not in the cert's list/);
  });

  it('simple_http: an expired certificate or one for another host is a tls_error, CA trusted or not', async () => {
    expect(await outcome(registry, 'simple_http', expired.url('/'))).toMatch(/^tls_error: CERT_HAS_EXPIRED/);
    expect(await outcome(registry, 'simple_http', wrongHost.url('/'))).toMatch(/^tls_error: ERR_TLS_CERT_ALTNAME_INVALID/);
  });

  it('playwright: reads an HTTP/2-only site', async () => {
    const url = `https://127.0.0.1:${(h2only.address() as AddressInfo).port}/`;
    expect(await outcome(registry, 'playwright', url)).toBe(`status 200 ${url} H2`);
  });
});
