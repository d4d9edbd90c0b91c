import { gzipSync } from 'node:zlib';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, staticArticle, type TestServer } from '@crawler/testkit';
import { createPlaywrightFetcher, type PlaywrightFetcher } from './playwright-fetcher.js';
import { FetchError } from '../errors.js';

const PDF = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n');
const ZIP = Buffer.from('504b0506000000000000000000000000000000000000', 'hex');
const CSV = 'id,name\n1,caf\u00e9\n';
const CAP = 256 * 1024;

/** A cookie-and-reload wall: without `clearance=ok` every path answers a 503 page whose script sets it and reloads. */
function walled(serve: (req: IncomingMessage, res: ServerResponse) => void) {
  return (req: IncomingMessage, res: ServerResponse) => {
    if (/(?:^|;\s*)clearance=ok(?:;|$)/.test(req.headers.cookie ?? '')) return serve(req, res);
    res
      .writeHead(503, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
      .end('<!DOCTYPE html><html><head><title>Just a moment...</title></head><body><p>Checking your browser before accessing the site.</p><script>setTimeout(function () { document.cookie = "clearance=ok; path=/"; location.reload(); }, 200);</script></body></html>');
  };
}

/** Files a browser's navigation ends on: Chromium downloads them or shows them in its PDF viewer, and keeps the bytes either way. */
describe('files in the browser', () => {
  let server: TestServer;
  let other: TestServer;
  let fetcher: PlaywrightFetcher;
  const seen: Array<{ path: string; cookie: string | undefined; ua: string | undefined }> = [];

  beforeAll(async () => {
    other = await startTestServer({ '/mirror/data.zip': { headers: { 'content-type': 'application/zip', 'content-disposition': 'attachment; filename="data.zip"' }, body: ZIP } }, { host: '127.0.0.2' });
    server = await startTestServer({
      '/report.pdf': { headers: { 'content-type': 'application/pdf' }, body: PDF },
      '/archive.zip': { headers: { 'content-type': 'application/zip', 'content-disposition': 'attachment; filename="archive.zip"' }, body: ZIP },
      '/export.csv': { headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': 'attachment; filename="export.csv"' }, body: CSV },
      '/download/1': (_req, res) => res.writeHead(302, { location: '/report.pdf' }).end(),
      '/download/away': (_req, res) => res.writeHead(302, { location: other.url('/mirror/data.zip') }).end(),
      '/download/inward': (_req, res) => res.writeHead(302, { location: '/landing' }).end(),
      '/landing': { body: staticArticle({ title: 'Your download is ready' }) },
      '/huge.bin': { headers: { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment' }, body: Buffer.alloc(CAP * 4, 7) },
      '/huge.pdf': { headers: { 'content-type': 'application/pdf' }, body: Buffer.concat([PDF, Buffer.alloc(CAP * 4, 32)]) },
      // Small on the wire, past the cap once inflated.
      '/bomb.csv': { headers: { 'content-type': 'text/csv', 'content-encoding': 'gzip', 'content-disposition': 'attachment' }, body: gzipSync(Buffer.alloc(CAP * 8, 'a')) },
      '/walled/report.pdf': walled((req, res) => {
        seen.push({ path: req.url ?? '', cookie: req.headers.cookie, ua: req.headers['user-agent'] });
        res.writeHead(200, { 'content-type': 'application/pdf' }).end(PDF);
      }),
      '/walled/archive.zip': walled((req, res) => {
        seen.push({ path: req.url ?? '', cookie: req.headers.cookie, ua: req.headers['user-agent'] });
        res.writeHead(200, { 'content-type': 'application/zip', 'content-disposition': 'attachment' }).end(ZIP);
      }),
    });
    fetcher = createPlaywrightFetcher({ allowPrivateNetworks: true, maxBytes: CAP, browser: { challengeWaitMs: 10_000 } });
  });

  afterAll(async () => {
    await fetcher.close();
    await server.close();
    await other.close();
  });

  const summary = (r: Awaited<ReturnType<PlaywrightFetcher['fetch']>>) => ({ fetcher: r.fetcher, status: r.status, contentType: r.contentType, bytes: Buffer.from(r.body).toString('hex'), finalUrl: r.finalUrl });

  it('returns the bytes of a PDF, an attachment and a CSV download, as plain HTTP stores them', async () => {
    expect(summary(await fetcher.fetch({ url: server.url('/report.pdf') }))).toEqual({ fetcher: 'playwright', status: 200, contentType: 'application/pdf', bytes: PDF.toString('hex'), finalUrl: server.url('/report.pdf') });
    expect(summary(await fetcher.fetch({ url: server.url('/archive.zip') }))).toEqual({ fetcher: 'playwright', status: 200, contentType: 'application/zip', bytes: ZIP.toString('hex'), finalUrl: server.url('/archive.zip') });
    const csv = await fetcher.fetch({ url: server.url('/export.csv') });
    expect({ contentType: csv.contentType, text: csv.text, charset: csv.charset }).toEqual({ contentType: 'text/csv', text: CSV, charset: 'utf-8' });
  }, 60_000);

  it('follows a download link that redirects to a file, on its host or another, and one that leads back to a page', async () => {
    const same = await fetcher.fetch({ url: server.url('/download/1') });
    expect({ ...summary(same), chain: same.redirectChain }).toEqual({ fetcher: 'playwright', status: 200, contentType: 'application/pdf', bytes: PDF.toString('hex'), finalUrl: server.url('/report.pdf'), chain: [server.url('/download/1')] });
    const away = await fetcher.fetch({ url: server.url('/download/away') });
    expect({ ...summary(away), chain: away.redirectChain }).toEqual({ fetcher: 'playwright', status: 200, contentType: 'application/zip', bytes: ZIP.toString('hex'), finalUrl: other.url('/mirror/data.zip'), chain: [server.url('/download/away')] });
    const inward = await fetcher.fetch({ url: server.url('/download/inward') });
    expect({ contentType: inward.contentType, finalUrl: inward.finalUrl, title: /<h1>([^<]*)<\/h1>/.exec(inward.text ?? '')?.[1] }).toEqual({ contentType: 'text/html', finalUrl: server.url('/landing'), title: 'Your download is ready' });
  }, 60_000);

  it('fails a file past the byte cap as too_large, whether downloaded, shown as a PDF or inflated past it', async () => {
    for (const path of ['/huge.bin', '/huge.pdf', '/bomb.csv']) {
      const err = await fetcher.fetch({ url: server.url(path) }).catch((e: unknown) => e);
      expect({ path, error: err instanceof FetchError ? err.code : String(err) }).toEqual({ path, error: 'too_large' });
    }
  }, 60_000);

  it('gets a file behind a wall the browser clears, with the clearance cookie and the user agent it earned it with', async () => {
    // The attachment first: the wall's script reloads onto a download, which leaves the challenge on screen.
    for (const path of ['/walled/archive.zip', '/walled/report.pdf']) {
      const r = await fetcher.fetch({ url: server.url(path) });
      expect({ path, status: r.status, fetcher: r.fetcher, bytes: r.body.length, cleared: r.challenge?.cleared ?? null }).toEqual({
        path, status: 200, fetcher: 'playwright', bytes: path.endsWith('.pdf') ? PDF.length : ZIP.length, cleared: path.endsWith('.zip') ? true : null,
      });
    }
    // Every request that got a file carried the clearance and Chromium's user agent (never plain HTTP's own).
    expect(seen.length).toBeGreaterThanOrEqual(2);
    for (const s of seen) {
      expect(s.cookie).toMatch(/clearance=ok/);
      expect(s.ua).toMatch(/Chrome\//);
    }
  }, 60_000);
});
