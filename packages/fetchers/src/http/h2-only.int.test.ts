import { constants, createSecureServer, type Http2SecureServer, type IncomingHttpHeaders, type SecureServerOptions, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestCa, startForwardProxy, startTestServer, staticArticle, type ForwardProxy, type TestCa, type TestServer } from '@crawler/testkit';
import { createHttpFetcher, type HttpFetcher } from './http-fetcher.js';
import { FetchError } from '../errors.js';

/** What a fetch came to: `status N <final URL> <title>`, or `code: message`. */
async function outcome(p: Promise<{ status: number; finalUrl: string; text: string | null }>): Promise<string> {
  try {
    const r = await p;
    return `status ${r.status} ${r.finalUrl} ${/<title>([^<]*)<\/title>/.exec(r.text ?? '')?.[1] ?? r.text ?? ''}`;
  } catch (err) {
    if (!(err instanceof FetchError)) throw err;
    return `${err.code}: ${err.message}`;
  }
}

/** An HTTPS server that refuses HTTP/1.1 in ALPN (as `allowHTTP1: false` and some CDNs' h2-only listeners do). */
async function startH2Only(opts: SecureServerOptions, onStream: (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => void): Promise<{ server: Http2SecureServer; origin: string }> {
  const server = createSecureServer({ ...opts, allowHTTP1: false });
  server.on('stream', (stream, headers) => {
    // The streams this server resets on purpose emit their own error (NGHTTP2_INTERNAL_ERROR): expected, not a failure.
    stream.on('error', () => undefined);
    onStream(stream, headers);
  });
  server.on('sessionError', () => undefined);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('simple_http against an HTTP/2-only server', () => {
  let ca: TestCa;
  let h2: { server: Http2SecureServer; origin: string };
  let h1: TestServer;
  let proxy: ForwardProxy;
  let http: HttpFetcher;
  const alpn: string[] = [];

  beforeAll(async () => {
    ca = createTestCa();
    const leaf = ca.issue({ hosts: ['127.0.0.1', 'localhost'] });
    h2 = await startH2Only(leaf, (stream, headers) => {
      const path = String(headers[':path']);
      alpn.push((stream.session?.socket as { alpnProtocol?: string } | undefined)?.alpnProtocol ?? '');
      if (path === '/robots.txt') {
        stream.respond({ ':status': 200, 'content-type': 'text/plain' });
        stream.end('User-agent: *\nDisallow: /private\n');
      } else if (path === '/cookie') {
        stream.respond({ ':status': 302, location: '/echo-cookie', 'set-cookie': 'sid=abc; Path=/' });
        stream.end();
      } else if (path === '/echo-cookie') {
        stream.respond({ ':status': 200, 'content-type': 'text/plain' });
        stream.end(`cookie=${String(headers.cookie ?? '')}`);
      } else if (path === '/reset-mid-body') {
        // Half a page, then RST_STREAM: the stream is cut, the connection lives on.
        stream.respond({ ':status': 200, 'content-type': 'text/html', 'content-length': '100000' });
        stream.write('<html><head><title>Cut</title></head><body>' + 'x'.repeat(2_000), () => stream.close(constants.NGHTTP2_INTERNAL_ERROR));
      } else if (path === '/gzip-reset-mid-body') {
        // The same with a compressed body: its Content-Length counts the compressed bytes.
        const gz = gzipSync(Buffer.from('<html><head><title>Cut</title></head><body>' + 'a readable sentence. '.repeat(2_000)));
        stream.respond({ ':status': 200, 'content-type': 'text/html', 'content-encoding': 'gzip', 'content-length': String(gz.length) });
        stream.write(gz.subarray(0, gz.length >> 1), () => stream.close(constants.NGHTTP2_INTERNAL_ERROR));
      } else if (path === '/goaway-mid-body') {
        // Half a page, then GOAWAY with an error and the connection closed under the stream.
        stream.respond({ ':status': 200, 'content-type': 'text/html', 'content-length': '100000' });
        stream.write('<html><head><title>Gone</title></head><body>' + 'x'.repeat(2_000), () => {
          stream.session?.goaway(constants.NGHTTP2_PROTOCOL_ERROR);
          setTimeout(() => stream.session?.destroy(), 50);
        });
      } else {
        stream.respond({ ':status': 200, 'content-type': 'text/html; charset=utf-8' });
        stream.end(staticArticle({ title: `H2 ${path}` }));
      }
    });
    h1 = await startTestServer({ '/to-h2': { status: 301, headers: { location: `${h2.origin}/landed` }, body: '' } });
    proxy = await startForwardProxy();
    // The test CA is trusted as a private CA is in production (extraCaCerts), not by turning verification off.
    http = createHttpFetcher({ allowPrivateNetworks: true, connectTimeoutMs: 2_000, extraCaCerts: [ca.cert] });
  });

  afterAll(async () => {
    await http?.close();
    await proxy?.close();
    await h1?.close();
    h2?.server.close();
  });

  it('fetches the page over HTTP/2 once the server refuses HTTP/1.1 by ALPN', async () => {
    expect(await outcome(http.fetch({ url: `${h2.origin}/a`, timeoutMs: 10_000 }))).toBe(`status 200 ${h2.origin}/a H2 /a`);
    expect(alpn.at(-1)).toBe('h2');
  });

  it('reads robots.txt the same way (what keeps the site from being paused as unreachable)', async () => {
    const r = await http.fetch({ url: `${h2.origin}/robots.txt`, timeoutMs: 10_000, maxBytes: 512 * 1024, truncate: true });
    expect([r.status, r.text]).toEqual([200, 'User-agent: *\nDisallow: /private\n']);
  });

  it('follows a redirect from an HTTP/1.1 site onto the HTTP/2-only one, and cookies along an HTTP/2 chain', async () => {
    expect(await outcome(http.fetch({ url: h1.url('/to-h2'), timeoutMs: 10_000 }))).toBe(`status 200 ${h2.origin}/landed H2 /landed`);
    expect(await outcome(http.fetch({ url: `${h2.origin}/cookie`, timeoutMs: 10_000 }))).toBe(`status 200 ${h2.origin}/echo-cookie cookie=sid=abc`);
  });

  it('a stream reset or a GOAWAY mid-body is a network_error that says how far the body got, not a hang or half a page', async () => {
    // Each on a session of its own: the first stream of a session reset mid-body came back as a complete 2 KB page.
    for (const path of ['/reset-mid-body', '/goaway-mid-body', '/gzip-reset-mid-body']) {
      const fresh = createHttpFetcher({ allowPrivateNetworks: true, connectTimeoutMs: 2_000, extraCaCerts: [ca.cert] });
      try {
        expect(await outcome(fresh.fetch({ url: `${h2.origin}${path}`, timeoutMs: 10_000 }))).toMatch(/^network_error: .* \(\d+ of \d+ body bytes received\)$/);
        // The origin still answers afterwards: a dead session is not kept in the pool.
        expect(await outcome(fresh.fetch({ url: `${h2.origin}/after`, timeoutMs: 10_000 }))).toBe(`status 200 ${h2.origin}/after H2 /after`);
      } finally {
        await fresh.close();
      }
    }
  });

  it('through a CONNECT proxy too, with TLS end to end over the tunnel', async () => {
    const fresh = createHttpFetcher({ allowPrivateNetworks: true, connectTimeoutMs: 2_000, extraCaCerts: [ca.cert] });
    try {
      const r = fresh.fetch({ url: `${h2.origin}/proxied`, timeoutMs: 10_000, exit: { tier: 'dc', proxyUrl: proxy.url } });
      expect(await outcome(r)).toBe(`status 200 ${h2.origin}/proxied H2 /proxied`);
      expect(proxy.tunnels).toBeGreaterThan(0);
    } finally {
      await fresh.close();
    }
  });

  it('a server that refuses both HTTP/1.1 and HTTP/2 by ALPN is a tls_error (a browser gets no further)', async () => {
    const leaf = ca.issue({ hosts: ['127.0.0.1'] });
    const odd = tls.createServer({ ...leaf, ALPNProtocols: ['acme-tls/1'] }, (s) => s.destroy());
    await new Promise<void>((r) => odd.listen(0, '127.0.0.1', r));
    try {
      const url = `https://127.0.0.1:${(odd.address() as AddressInfo).port}/`;
      expect(await outcome(http.fetch({ url, timeoutMs: 10_000 }))).toMatch(/^tls_error: the server accepts neither HTTP\/1.1 nor HTTP\/2/);
    } finally {
      odd.close();
    }
  });

  it('a certificate from an untrusted CA is still a tls_error over HTTP/2', async () => {
    const stranger = createHttpFetcher({ allowPrivateNetworks: true, connectTimeoutMs: 2_000 });
    try {
      expect(await outcome(stranger.fetch({ url: `${h2.origin}/a`, timeoutMs: 10_000 }))).toMatch(/^tls_error: .*UNABLE_TO_VERIFY/);
    } finally {
      await stranger.close();
    }
  });
});
