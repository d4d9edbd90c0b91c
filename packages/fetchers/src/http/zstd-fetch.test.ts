import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawZstdFrame, rleZstdFrame, startTestServer, staticArticle, type TestServer } from '@crawler/testkit';
import { createHttpFetcher, type HttpFetcher } from './http-fetcher.js';
import { probe } from './probe.js';
import { FetchError } from '../errors.js';

const fixture = (name: string) => readFileSync(new URL(`./__fixtures__/zstd/${name}`, import.meta.url));
const PAGE_SHA256 = '18f3b8f436061a70b4458007d3a3d263764b1e9f39f06ce5456a8c8648cea71f';
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const html = { 'content-type': 'text/html; charset=utf-8' };

async function failure(p: Promise<unknown>): Promise<FetchError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(FetchError);
  return err as FetchError;
}

describe('simple_http and content-encoding: zstd, which Chrome offers and sites send it', () => {
  let server: TestServer;
  let http: HttpFetcher;
  const article = Buffer.from(staticArticle({ title: 'Harbour news', links: ['/next'] }));

  beforeAll(async () => {
    const zstd = (body: Uint8Array, encoding = 'zstd') => ({ headers: { ...html, 'content-encoding': encoding }, body });
    server = await startTestServer({
      // The reference encoder's frames: with a content size (as for a file), and streamed under an 8 MiB window.
      '/zstd-19': zstd(fixture('page.html.19.zst')),
      '/zstd-streamed': (_req, res) => {
        // Chunked, in pieces that split blocks, as a server compressing on the fly writes it.
        res.writeHead(200, { ...html, 'content-encoding': 'zstd' });
        const body = fixture('page.html.w23.zst');
        for (let at = 0; at < body.length; at += 5000) res.write(body.subarray(at, at + 5000));
        res.end();
      },
      // Codings in the order applied: undone from the last.
      '/gzip-zstd': zstd(rawZstdFrame(gzipSync(article)), 'gzip, zstd'),
      '/zstd-gzip': zstd(gzipSync(rawZstdFrame(article)), 'zstd, gzip'),
      '/zstd-br': zstd(brotliCompressSync(fixture('page.html.19.zst')), 'zstd, br'),
      '/zstd-zstd': zstd(rawZstdFrame(rawZstdFrame(article)), 'zstd, zstd'),
      // Not zstd at all, and zstd no browser decodes.
      '/zstd-lie': zstd(article),
      '/zstd-big-window': zstd(rawZstdFrame(article, { windowLog: 27 })),
      // 64 KiB that decode to 2 GiB, and 64 KiB of one-byte blocks under an 8 MiB window (each costs fzstd the window).
      '/zstd-bomb': zstd(rleZstdFrame(16_384, 128 * 1024)),
      '/zstd-costly': zstd(rleZstdFrame(16_384, 1, { windowLog: 23 })),
      '/echo-headers': (req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.headers)),
    });
    http = createHttpFetcher({ allowPrivateNetworks: true });
  });

  afterAll(async () => {
    await http?.close();
    await server?.close();
  });

  it('offers zstd as Chrome does, in the probe as in the fetch', async () => {
    const fetched = JSON.parse((await http.fetch({ url: server.url('/echo-headers') })).text ?? '{}');
    const probed = JSON.parse((await probe(http, server.url('/echo-headers'))).text ?? '{}');
    expect([fetched['accept-encoding'], probed['accept-encoding']]).toEqual(['gzip, deflate, br, zstd', 'gzip, deflate, br, zstd']);
  });

  it('decodes the reference encoder\'s frames, whole and streamed, in the fetch and in the probe', async () => {
    for (const path of ['/zstd-19', '/zstd-streamed']) {
      const r = await http.fetch({ url: server.url(path) });
      expect([path, r.body.length, sha256(r.body), r.charset]).toEqual([path, 150_241, PAGE_SHA256, 'utf-8']);
      expect(r.text).toContain('<title>Typical page</title>');
    }
    expect(sha256((await probe(http, server.url('/zstd-19'))).body)).toBe(PAGE_SHA256);
  });

  it('undoes zstd stacked with other codings, in the order they were applied', async () => {
    for (const path of ['/gzip-zstd', '/zstd-gzip', '/zstd-zstd']) expect((await http.fetch({ url: server.url(path) })).text, path).toContain('<h1>Harbour news</h1>');
    expect(sha256((await http.fetch({ url: server.url('/zstd-br') })).body)).toBe(PAGE_SHA256);
  });

  it('cuts a long zstd page to its first maxBytes when asked to truncate', async () => {
    const r = await http.fetch({ url: server.url('/zstd-streamed'), maxBytes: 64 * 1024, truncate: true });
    expect([r.body.length, Buffer.from(r.body).toString('latin1').startsWith('<!DOCTYPE html>')]).toEqual([64 * 1024, true]);
  });

  it('fails a body labelled zstd that is not, and a frame with a window browsers refuse, as decode_error: the same answer next time', async () => {
    const lie = await failure(http.fetch({ url: server.url('/zstd-lie') }));
    expect([lie.code, lie.retryable, lie.message]).toEqual(['decode_error', false, expect.stringContaining('not a zstd frame')]);
    const big = await failure(http.fetch({ url: server.url('/zstd-big-window') }));
    expect([big.code, big.message]).toEqual(['decode_error', expect.stringContaining('134217728-byte window')]);
  });

  it('cuts a zstd bomb by its decoded size or its ratio, and a body of tiny blocks by the work it costs, each as too_large', async () => {
    const bySize = await failure(http.fetch({ url: server.url('/zstd-bomb'), maxBytes: 2 * 1024 * 1024 }));
    expect([bySize.code, bySize.message]).toEqual(['too_large', 'body exceeds 2097152 bytes']);
    const byRatio = await failure(http.fetch({ url: server.url('/zstd-bomb'), maxBytes: 40 * 1024 * 1024 }));
    expect([byRatio.code, byRatio.message]).toEqual(['too_large', expect.stringMatching(/inflates more than \d+ times/)]);
    const truncated = await failure(http.fetch({ url: server.url('/zstd-bomb'), maxBytes: 40 * 1024 * 1024, truncate: true }));
    expect(truncated.code).toBe('too_large');
    const costly = await failure(http.fetch({ url: server.url('/zstd-costly') }));
    expect([costly.code, costly.retryable, costly.message]).toEqual(['too_large', false, expect.stringContaining('costs too much to decode')]);
  });
});
