import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectionReset,
  encodedPage,
  endlessBody,
  forbidden,
  gzipBomb,
  jsRenderedPage,
  pdf,
  pdfBytes,
  rawZstdFrame,
  redirect,
  redirectChain,
  redirectLoop,
  resetMidBody,
  SAMPLE_TEXTS,
  slowBody,
  slowHeaders,
  startTestServer,
  staticArticle,
  tooManyRequests,
  type TestServer,
} from '@crawler/testkit';
import { gzipSync, brotliCompressSync, deflateRawSync, deflateSync } from 'node:zlib';
import type { IncomingMessage } from 'node:http';
import { createHttpFetcher, type HttpFetcher } from './http-fetcher.js';
import { probe } from './probe.js';
import { FetchError } from '../errors.js';

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(FetchError);
    return (err as FetchError).code;
  }
  throw new Error('expected the fetch to fail');
}

describe('simple_http against local servers', () => {
  let server: TestServer;
  let other: TestServer;
  let http: HttpFetcher;

  beforeAll(async () => {
    const article = staticArticle({ title: 'Harbour news', links: ['/next'] });
    other = await startTestServer({ '/landing': { body: staticArticle({ title: 'Other host' }) } }, { host: '127.0.0.2' });
    server = await startTestServer({
      '/': { body: article },
      '/spa': { body: jsRenderedPage({ paragraphs: ['Only a browser reads this sentence.'] }) },
      '/gzip': { headers: { 'content-encoding': 'gzip', 'content-type': 'text/html' }, body: gzipSync(article) },
      '/br': { headers: { 'content-encoding': 'br', 'content-type': 'text/html' }, body: brotliCompressSync(article) },
      '/deflate-raw': { headers: { 'content-encoding': 'deflate', 'content-type': 'text/html' }, body: deflateRawSync(article) },
      // A body that is not what its Content-Encoding says.
      '/gzip-lie': { headers: { 'content-encoding': 'gzip', 'content-type': 'text/html' }, body: article },
      '/br-lie': { headers: { 'content-encoding': 'br', 'content-type': 'text/html' }, body: 'plain text, no brotli here' },
      // Codings listed in the order applied (RFC 9110): undone from the last; identity is none.
      '/gzip-gzip': { headers: { 'content-encoding': 'gzip, gzip', 'content-type': 'text/html' }, body: gzipSync(gzipSync(article)) },
      '/gzip-br': { headers: { 'content-encoding': 'gzip, br', 'content-type': 'text/html' }, body: brotliCompressSync(gzipSync(article)) },
      '/gzip-identity': { headers: { 'content-encoding': 'gzip, identity', 'content-type': 'text/html' }, body: gzipSync(article) },
      // A coding we cannot undo: a compress (.Z) stream, alone and inside gzip.
      '/compress': { headers: { 'content-encoding': 'compress', 'content-type': 'text/html' }, body: Buffer.from([0x1f, 0x9d, 0x90, 0x3c, 0xe0, 0xc0, 0x01, 0x02]) },
      '/gzip-compress': { headers: { 'content-encoding': 'compress, gzip', 'content-type': 'text/html' }, body: gzipSync(Buffer.from([0x1f, 0x9d, 0x90, 0x3c, 0xe0, 0xc0, 0x01, 0x02])) },
      // Gzipped twice under one label (an app and its proxy both compressing), and gzip with no label at all.
      '/gzip-twice': { headers: { 'content-encoding': 'gzip', 'content-type': 'text/html' }, body: gzipSync(gzipSync(article)) },
      '/gzip-unlabelled': { headers: { 'content-type': 'text/html; charset=utf-8' }, body: gzipSync(article) },
      // A gzip file is a file, whatever its bytes.
      '/archive.gz': { headers: { 'content-type': 'application/gzip' }, body: gzipSync(article) },
      // A label that names no coding over a plain body (a common misconfiguration): browsers show the page.
      '/mislabelled': { headers: { 'content-encoding': 'utf-8', 'content-type': 'text/html' }, body: article },
      '/slow-headers': slowHeaders(3000),
      '/slow-body': slowBody({ chunks: 40, intervalMs: 100 }),
      '/stalling-body': slowBody({ chunks: 3, intervalMs: 1500 }),
      '/endless': endlessBody(),
      '/bomb': gzipBomb(30 * 1024 * 1024),
      // Empty gzip members, one after another for ever: nothing ever decodes, the bytes keep coming.
      '/empty-members': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
        const member = gzipSync(Buffer.alloc(0));
        const many = Buffer.concat(Array.from({ length: 2_000 }, () => member));
        const pump = () => {
          while (!res.destroyed && res.write(many)) {
            /* until the socket buffer is full */
          }
          if (!res.destroyed) res.once('drain', pump);
        };
        res.on('close', () => res.removeAllListeners('drain'));
        pump();
      },
      // A 5 MB robots.txt, its length declared.
      '/big-plain': { headers: { 'content-type': 'text/plain' }, body: 'User-agent: *\n' + 'Disallow: /private-0123456789abcdef\n'.repeat(150_000) },
      // 3 MiB of varied text: compresses a few times, as real pages do.
      '/big-gzip': {
        headers: { 'content-encoding': 'gzip', 'content-type': 'text/plain' },
        body: gzipSync(Buffer.from(Array.from({ length: 3 * 1024 * 1024 / 16 }, (_, i) => `${(i * 2654435761) % 1e9}`.padStart(15, '0') + '\n').join(''))),
      },
      '/cp1251-header': encodedPage({ charset: 'windows-1251', via: 'header', text: SAMPLE_TEXTS.russian }),
      '/cp1251-meta': encodedPage({ charset: 'windows-1251', via: 'meta', text: SAMPLE_TEXTS.russian }),
      '/latin1-meta': encodedPage({ charset: 'iso-8859-1', via: 'meta', text: SAMPLE_TEXTS.french }),
      '/403': forbidden(),
      '/429': tooManyRequests(120),
      '/503': { status: 503, body: 'down' },
      '/reset': connectionReset(),
      '/reset-mid-body': resetMidBody(2048),
      // A compressed body cut in half: Content-Length counts the compressed bytes.
      '/gzip-cut': (req, res) => {
        const whole = gzipSync(Buffer.from('<p>' + 'word '.repeat(50_000) + '</p>'));
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip', 'content-length': String(whole.length) });
        res.write(whole.subarray(0, 100), () => setTimeout(() => req.socket.destroy(), 20));
      },
      '/doc.pdf': pdf(pdfBytes()),
      // 100 KB of response headers (a big CSP, many cookies): Chromium takes up to 256 KiB.
      '/big-headers': (_req, res) => res.writeHead(200, { 'content-type': 'text/html', 'x-policy': 'a'.repeat(100_000) }).end(staticArticle({ title: 'Big headers' })),
      '/huge-headers': (_req, res) => res.writeHead(200, { 'content-type': 'text/html', 'x-policy': 'a'.repeat(300_000) }).end('x'),
      '/echo-headers': (req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.headers)),
      '/to-other': redirect(`${other.url('/landing')}`, 301),
      '/see-other': redirect('/', 303),
      ...redirectChain('/chain', 3, '/'),
      ...redirectChain('/long', 12, '/'),
      ...redirectLoop('/loop-a', '/loop-b'),
      // A cookie check: the first visit sets a cookie and redirects to itself; a visit with the cookie gets the page.
      '/cookie-check': (req, res) => {
        if (/(^|; )seen=1(;|$)/.test(req.headers.cookie ?? '')) res.writeHead(200, { 'content-type': 'text/html' }).end(staticArticle({ title: 'Past the cookie check' }));
        else res.writeHead(302, { location: '/cookie-check', 'set-cookie': 'seen=1; Path=/; HttpOnly' }).end();
      },
      // Location as raw bytes on the wire (Node writes a header string as Latin-1): UTF-8, and bytes that are no UTF-8.
      '/to-utf8': (_req, res) => res.writeHead(301, { location: Buffer.from('/café/ñ?q=ü', 'utf8').toString('latin1') }).end(),
      '/to-latin1': (_req, res) => res.writeHead(301, { location: '/caf\xe9' }).end(),
      // Content-Type sent twice (a framework's plus a proxy's): the last wins, as in Fetch's "extract a MIME type".
      '/type-twice': (_req, res) => {
        res.setHeader('content-type', ['text/html; charset=windows-1251', 'text/html']);
        res.end(Buffer.from(encodedPage({ charset: 'windows-1251', via: 'header', text: SAMPLE_TEXTS.russian }).body as Uint8Array));
      },
      '/caf%C3%A9/%C3%B1': { body: staticArticle({ title: 'Café' }) },
      '/caf%E9': { body: staticArticle({ title: 'Latin-1 café' }) },
      // A cookie that never satisfies the check is still a loop.
      '/cookie-loop': (_req, res) => res.writeHead(302, { location: '/cookie-loop', 'set-cookie': 'seen=0; Path=/' }).end(),
    });
    http = createHttpFetcher({ allowPrivateNetworks: true, maxBytes: 1024 * 1024 });
  });

  afterAll(async () => {
    await http.close();
    await server.close();
    await other.close();
  });

  it('fetches a static article with browser-like headers and decoded text', async () => {
    const r = await http.fetch({ url: server.url('/') });
    expect(r.fetcher).toBe('simple_http');
    expect(r.status).toBe(200);
    expect(r.contentType).toBe('text/html');
    expect(r.text).toContain('<h1>Harbour news</h1>');
    expect(r.body.length).toBeGreaterThan(500);
    expect(r.finalUrl).toBe(server.url('/'));
    expect(r.redirectChain).toEqual([]);
    expect(r.timings.headersMs).not.toBeNull();
    const echoed = JSON.parse((await http.fetch({ url: server.url('/echo-headers'), headers: { 'X-Job': '7' } })).text ?? '{}');
    expect(echoed['user-agent']).toMatch(/Chrome\/\d+/);
    expect(echoed['accept-language']).toBe('en-US,en;q=0.9');
    expect(echoed['accept-encoding']).toBe('gzip, deflate, br, zstd');
    expect(echoed['sec-ch-ua']).toContain('Chromium');
    expect(echoed['x-job']).toBe('7');
  });

  it('sees only the empty shell of a JS-rendered page', async () => {
    const r = await http.fetch({ url: server.url('/spa') });
    expect(r.text).toContain('<div id="app"></div>');
    expect(r.text?.replace(/<script[\s\S]*?<\/script>/g, '')).not.toContain('Only a browser reads');
  });

  it.each(['/gzip', '/br', '/deflate-raw', '/gzip-gzip', '/gzip-br', '/gzip-identity'])('decompresses %s by hand', async (path) => {
    const r = await http.fetch({ url: server.url(path) });
    expect(r.text).toContain('<h1>Harbour news</h1>');
  });

  it.each(['/compress', '/gzip-compress'])('fails %s, a coding it cannot undo, as decode_error instead of keeping the encoded bytes as the page', async (path) => {
    const err = (await http.fetch({ url: server.url(path) }).catch((e: unknown) => e)) as FetchError;
    expect([err.code, err.message]).toEqual(['decode_error', expect.stringMatching(/cannot decode content-encoding compress/)]);
  });

  it.each(['/gzip-twice', '/gzip-unlabelled'])('inflates %s, a text body still gzipped, instead of storing gzip bytes as the page', async (path) => {
    const r = await http.fetch({ url: server.url(path) });
    expect(r.text).toContain('<h1>Harbour news</h1>');
  });

  it('keeps a gzip file served as one as its bytes', async () => {
    const r = await http.fetch({ url: server.url('/archive.gz') });
    expect([r.contentType, r.text, Buffer.from(r.body).equals(gzipSync(staticArticle({ title: 'Harbour news', links: ['/next'] })))]).toEqual(['application/gzip', null, true]);
  });

  it('keeps a plain body under a content-encoding that names no coding, as browsers do', async () => {
    const r = await http.fetch({ url: server.url('/mislabelled') });
    expect(r.text).toContain('<h1>Harbour news</h1>');
  });

  it.each(['/gzip-lie', '/br-lie'])('fails %s, a body that is not what its Content-Encoding says, as decode_error: the same answer next time', async (path) => {
    const err = (await http.fetch({ url: server.url(path) }).catch((e: unknown) => e)) as FetchError;
    expect([err.code, err.retryable]).toEqual(['decode_error', false]);
  });

  it('times out on slow headers with the headers timeout and on a trickling body with the deadline', async () => {
    expect(await codeOf(http.fetch({ url: server.url('/slow-headers'), timeoutMs: 10_000, headersTimeoutMs: 300 } as never))).toBe('timeout');
    expect(await codeOf(http.fetch({ url: server.url('/slow-body'), timeoutMs: 600 }))).toBe('timeout');
    // A body that stalls between chunks trips the body (idle) timeout long before the overall deadline.
    const stalled = http.fetch({ url: server.url('/stalling-body'), timeoutMs: 20_000, bodyTimeoutMs: 400 } as never);
    const stalledErr = await stalled.catch((e: FetchError) => e);
    expect((stalledErr as FetchError).code).toBe('timeout');
    expect((stalledErr as FetchError).message).toContain('UND_ERR_BODY_TIMEOUT');
    const slow = await http.fetch({ url: server.url('/slow-body'), timeoutMs: 600 }).catch((e: FetchError) => e);
    expect((slow as FetchError).retryable).toBe(true);
  });

  it('cuts an endless body, a gzip bomb and a stream of empty gzip members: decoded bytes, compressed bytes and ratio', async () => {
    expect(await codeOf(http.fetch({ url: server.url('/endless') }))).toBe('too_large');
    const bomb = http.fetch({ url: server.url('/bomb'), maxBytes: 2 * 1024 * 1024 });
    expect(await codeOf(bomb)).toBe('too_large');
    // Under a limit larger than what it inflates to, the bomb is still cut: by its compression ratio.
    const ratio = await http.fetch({ url: server.url('/bomb'), maxBytes: 40 * 1024 * 1024 }).catch((e: unknown) => e);
    expect((ratio as FetchError).code).toBe('too_large');
    expect((ratio as FetchError).message).toMatch(/inflates more than \d+ times/);
    // A stream of empty gzip members decodes to nothing for ever: the compressed bytes are counted too.
    const empty = await http.fetch({ url: server.url('/empty-members'), maxBytes: 1024 * 1024 }).catch((e: unknown) => e);
    expect((empty as FetchError).code).toBe('too_large');
    expect((empty as FetchError).message).toMatch(/compressed body exceeds/);
    // An ordinary compressed page larger than the ratio check's threshold passes.
    const big = await http.fetch({ url: server.url('/big-gzip'), maxBytes: 10 * 1024 * 1024 });
    expect(big.body.length).toBe(3 * 1024 * 1024);
  });

  it('cuts a long body to its first maxBytes when asked to truncate (a 5 MB robots.txt), plain and compressed', async () => {
    // An endless body, a declared length past the limit, and 3 MiB of gzip: each is its first 256 KiB.
    const endless = await http.fetch({ url: server.url('/endless'), maxBytes: 256 * 1024, truncate: true });
    expect(endless.body.length).toBe(256 * 1024);
    const declared = await http.fetch({ url: server.url('/big-plain'), maxBytes: 256 * 1024, truncate: true });
    expect(declared.body.length).toBe(256 * 1024);
    expect(declared.text!.startsWith('User-agent: *\nDisallow: /private-')).toBe(true);
    const gzip = await http.fetch({ url: server.url('/big-gzip'), maxBytes: 256 * 1024, truncate: true });
    expect(gzip.body.length).toBe(256 * 1024);
    // A body within the limit is whole; without `truncate` the long one still fails; a bomb is still cut by its ratio.
    expect((await http.fetch({ url: server.url('/'), maxBytes: 256 * 1024, truncate: true })).text).toContain('Harbour news');
    expect(await codeOf(http.fetch({ url: server.url('/big-plain'), maxBytes: 256 * 1024 }))).toBe('too_large');
    expect(await codeOf(http.fetch({ url: server.url('/bomb'), maxBytes: 40 * 1024 * 1024, truncate: true }))).toBe('too_large');
  });

  it('follows redirects by hand, records the chain, and stops loops and long chains', async () => {
    const r = await http.fetch({ url: server.url('/chain/1') });
    expect(r.status).toBe(200);
    expect(r.finalUrl).toBe(server.url('/'));
    expect(r.redirectChain).toEqual([server.url('/chain/1'), server.url('/chain/2'), server.url('/chain/3')]);
    expect(await codeOf(http.fetch({ url: server.url('/loop-a') }))).toBe('redirect_loop');
    expect(await codeOf(http.fetch({ url: server.url('/long/1') }))).toBe('too_many_redirects');
    const cross = await http.fetch({ url: server.url('/to-other') });
    expect(cross.finalUrl).toBe(other.url('/landing'));
    expect(cross.text).toContain('Other host');
    expect((await http.fetch({ url: server.url('/see-other') })).status).toBe(200);
  });

  it('reads a Location sent as raw UTF-8 as UTF-8, as browsers do, and keeps other bytes percent-encoded', async () => {
    const utf8 = await http.fetch({ url: server.url('/to-utf8') });
    expect([utf8.status, utf8.finalUrl]).toEqual([200, server.url('/caf%C3%A9/%C3%B1?q=%C3%BC')]);
    const latin1 = await http.fetch({ url: server.url('/to-latin1') });
    expect([latin1.status, latin1.finalUrl]).toEqual([200, server.url('/caf%E9')]);
  });

  it('sends the cookies a redirect set on the next hops, as a browser does: a cookie check that redirects to itself is no loop', async () => {
    const r = await http.fetch({ url: server.url('/cookie-check') });
    expect([r.status, r.finalUrl, r.redirectChain]).toEqual([200, server.url('/cookie-check'), [server.url('/cookie-check')]]);
    expect(r.text).toContain('Past the cookie check');
    expect(await codeOf(http.fetch({ url: server.url('/cookie-loop') }))).toBe('redirect_loop');
  });

  it('decodes windows-1251 and ISO-8859-1 declared by header or <meta>', async () => {
    for (const path of ['/cp1251-header', '/cp1251-meta']) {
      const r = await http.fetch({ url: server.url(path) });
      expect(r.text).toContain(SAMPLE_TEXTS.russian);
    }
    expect((await http.fetch({ url: server.url('/latin1-meta') })).text).toContain(SAMPLE_TEXTS.french);
  });

  it('reads a Content-Type sent twice as one type, keeping the charset an earlier one gave it', async () => {
    const r = await http.fetch({ url: server.url('/type-twice') });
    expect(r.contentType).toBe('text/html');
    expect(r.headers['content-type']).toBe('text/html; charset=windows-1251');
    expect(r.text).toContain(SAMPLE_TEXTS.russian);
  });

  it('returns 403, 429 and 503 as results, not errors', async () => {
    const f = await http.fetch({ url: server.url('/403') });
    expect(f.status).toBe(403);
    const t = await http.fetch({ url: server.url('/429') });
    expect(t.status).toBe(429);
    expect(t.headers['retry-after']).toBe('120');
    expect((await http.fetch({ url: server.url('/503') })).status).toBe(503);
  });

  it('reads response headers as large as a browser does, and fails larger ones as too_large, not a network error to retry', async () => {
    expect((await http.fetch({ url: server.url('/big-headers') })).text).toContain('Big headers');
    const huge = await http.fetch({ url: server.url('/huge-headers') }).catch((e: unknown) => e);
    expect([(huge as FetchError).code, (huge as FetchError).retryable]).toEqual(['too_large', false]);
  });

  it('turns a connection reset into a retryable network_error', async () => {
    const err = await http.fetch({ url: server.url('/reset') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FetchError);
    expect((err as FetchError).code).toBe('network_error');
    expect((err as FetchError).retryable).toBe(true);
    expect((err as FetchError).url).toBe(server.url('/reset'));
    const mid = await http.fetch({ url: server.url('/reset-mid-body') }).catch((e: unknown) => e);
    expect((mid as FetchError).code).toBe('network_error');
    // How far the body got is in the message: a server that cuts its responses short, not one that never answered.
    expect((mid as FetchError).message).toMatch(/\(2048 of 20480 body bytes received\)$/);
    const gz = await http.fetch({ url: server.url('/gzip-cut') }).catch((e: unknown) => e);
    expect((gz as FetchError).code).toBe('network_error');
    expect((gz as FetchError).message).toMatch(/\(100 of \d+ body bytes received\)$/);
  });

  it('keeps binary bodies as bytes without text', async () => {
    const r = await http.fetch({ url: server.url('/doc.pdf') });
    expect(r.contentType).toBe('application/pdf');
    expect(r.text).toBeNull();
    expect(Buffer.from(r.body.subarray(0, 5)).toString()).toBe('%PDF-');
  });

  it('refuses connection refused and unresolvable hosts with their codes', async () => {
    const closed = await startTestServer({});
    const url = closed.url('/');
    await closed.close();
    expect(await codeOf(http.fetch({ url }))).toBe('network_error');
    expect(await codeOf(http.fetch({ url: 'http://no-such-host.invalid/' }))).toBe('dns_error');
  });

  it('aborts when the caller aborts', async () => {
    const ac = new AbortController();
    const p = http.fetch({ url: server.url('/slow-headers'), signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    expect(await codeOf(p)).toBe('aborted');
  });

  it('probes with the same fetcher and a short deadline', async () => {
    const ok = await probe(http, server.url('/'));
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('Harbour news');
    expect(await codeOf(probe(http, server.url('/slow-headers'), { timeoutMs: 300 }))).toBe('timeout');
  });
});

describe('simple_http with a body cut short', () => {
  let server: TestServer;
  let http: HttpFetcher;
  const page = Buffer.from(staticArticle({ title: 'Cut short', paragraphs: Array.from({ length: 400 }, (_, i) => `Paragraph ${i} of a long article.`) }));
  // zstd in raw blocks of 4 KiB (with a checksum), so half the body holds whole blocks.
  const zstd = rawZstdFrame(page, { blockBytes: 4096, windowLog: 17, checksum: true });
  const coded = { gzip: gzipSync(page), deflate: deflateSync(page), br: brotliCompressSync(page), zstd };

  /**
   * A response written on the socket by hand: `framing` says how its end is known (`close`: the connection's end,
   * HTTP/1.0 style; `length`: a Content-Length for the whole body; `chunked`: chunks, with no last chunk when cut).
   */
  const raw = (coding: keyof typeof coded | null, framing: 'close' | 'length' | 'chunked', sentBytes: (whole: Buffer) => number) =>
    (req: IncomingMessage): void => {
      const whole = coding === null ? page : coded[coding];
      const sent = whole.subarray(0, sentBytes(whole));
      const head = [
        'HTTP/1.1 200 OK',
        'content-type: text/html; charset=utf-8',
        ...(coding ? [`content-encoding: ${coding}`] : []),
        ...(framing === 'length' ? [`content-length: ${whole.length}`] : framing === 'chunked' ? ['transfer-encoding: chunked'] : []),
        'connection: close',
      ].join('\r\n');
      const body = framing === 'chunked' ? Buffer.concat([Buffer.from(`${sent.length.toString(16)}\r\n`), sent, Buffer.from('\r\n')]) : sent;
      // A graceful close (FIN), not a reset: nothing but the missing bytes tells the client the body is short.
      req.socket.end(Buffer.concat([Buffer.from(`${head}\r\n\r\n`), body]));
    };
  const half = (b: Buffer) => Math.floor(b.length / 2);
  const whole = (b: Buffer) => b.length;

  beforeAll(async () => {
    server = await startTestServer({
      '/gzip-close-cut': raw('gzip', 'close', half),
      '/deflate-close-cut': raw('deflate', 'close', half),
      '/br-close-cut': raw('br', 'close', half),
      '/zstd-close-cut': raw('zstd', 'close', half),
      '/gzip-close-whole': raw('gzip', 'close', whole),
      '/br-close-whole': raw('br', 'close', whole),
      '/zstd-close-whole': raw('zstd', 'close', whole),
      '/gzip-length-cut': raw('gzip', 'length', half),
      '/zstd-length-cut': raw('zstd', 'length', half),
      '/plain-length-cut': raw(null, 'length', half),
      '/gzip-chunked-cut': raw('gzip', 'chunked', half),
      // All the compressed data and most of gzip's 8-byte trailer, framed whole by its Content-Length: browsers show
      // such a page (old servers write it so), and so do we.
      '/gzip-no-trailer': (_req, res) => {
        const body = coded.gzip.subarray(0, coded.gzip.length - 5);
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip', 'content-length': String(body.length) }).end(body);
      },
      // The same for zstd: a frame missing most of its checksum.
      '/zstd-no-checksum': (_req, res) => {
        const body = coded.zstd.subarray(0, coded.zstd.length - 3);
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'zstd', 'content-length': String(body.length) }).end(body);
      },
    });
    http = createHttpFetcher({ allowPrivateNetworks: true });
  });

  afterAll(async () => {
    await http.close();
    await server.close();
  });

  it('fails a compressed body whose connection closed before its stream ended, instead of storing half a page', async () => {
    for (const path of ['/gzip-close-cut', '/deflate-close-cut', '/br-close-cut', '/zstd-close-cut']) {
      const err = await http.fetch({ url: server.url(path) }).catch((e: unknown) => e);
      expect(err, path).toBeInstanceOf(FetchError);
      // The connection was cut: transient, as a reset mid-body is, and the message says how far the body got.
      expect([(err as FetchError).code, (err as FetchError).retryable], path).toEqual(['network_error', true]);
      expect((err as FetchError).message, path).toMatch(/closed before the end of the \w+ stream \(\d+ body bytes received\)$/);
    }
  });

  it('fails a body shorter than its Content-Length or with no last chunk, compressed or not', async () => {
    for (const path of ['/gzip-length-cut', '/plain-length-cut', '/gzip-chunked-cut', '/zstd-length-cut']) {
      const err = await http.fetch({ url: server.url(path) }).catch((e: unknown) => e);
      expect(err, path).toBeInstanceOf(FetchError);
      expect((err as FetchError).retryable, path).toBe(true);
    }
  });

  it('keeps a whole compressed body that only the closed connection ends, and a framed one missing its gzip trailer or zstd checksum', async () => {
    for (const path of ['/gzip-close-whole', '/br-close-whole', '/zstd-close-whole', '/gzip-no-trailer', '/zstd-no-checksum']) {
      const r = await http.fetch({ url: server.url(path) });
      expect(r.text, path).toContain('Paragraph 399 of a long article.');
    }
  });
});
