/**
 * Servers a crawl meets on the open web that browsers load and plain HTTP used to lose, end to end on real Redis and
 * Postgres: an HTTPS site that speaks only HTTP/2 (its robots.txt too), and a site whose pages have a head undici's
 * parser refuses (a bare LF for CRLF). Each link ends `done` with its page stored, by the tool that can read it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import tls from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestCa, rawHttpHandler, robotsTxt, staticArticle, type TestCa } from '@crawler/testkit';
import { startE2e, waitFor, type E2eCrawler } from '../__fixtures__/e2e.js';

let crawler: E2eCrawler | undefined;
const cleanups: (() => unknown)[] = [];

afterEach(async () => {
  await crawler?.cleanup();
  crawler = undefined;
  for (const c of cleanups.splice(0)) await c();
});

async function settled(c: E2eCrawler, linkId: string, timeoutMs: number) {
  return waitFor(async () => {
    const l = await c.db.prisma.link.findUnique({ where: { id: linkId } });
    return l && ['done', 'failed'].includes(l.status) ? l : null;
  }, 'the link done or failed', timeoutMs);
}

/** A CA made for the test, trusted by the crawler as a private CA is (NODE_EXTRA_CA_CERTS): its file's path and the CA. */
function trustedCa(): { ca: TestCa; file: string } {
  const ca = createTestCa();
  const dir = mkdtempSync(join(tmpdir(), 'quirky-ca-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'ca.pem'), ca.cert);
  return { ca, file: join(dir, 'ca.pem') };
}

/**
 * A connection handler that answers robots.txt by the book (often a static file) and every other path with `page`
 * under a head that uses LF alone, as old CGI scripts write; `paths` collects what was asked.
 */
function bareLfServer(page: string, paths: string[] = []): (socket: Socket) => void {
  return rawHttpHandler((_head, path) => {
    paths.push(path);
    const body = path === '/robots.txt' ? (robotsTxt().body as string) : page;
    const eol = path === '/robots.txt' ? '\r\n' : '\n';
    const type = path === '/robots.txt' ? 'text/plain' : 'text/html; charset=utf-8';
    return { bytes: Buffer.from(`HTTP/1.1 200 OK${eol}content-type: ${type}${eol}content-length: ${Buffer.byteLength(body)}${eol}connection: close${eol}${eol}${body}`) };
  });
}

describe('end to end: servers browsers load and undici is strict about', () => {
  it('an HTTP/2-only HTTPS site (robots.txt included) is crawled by plain HTTP, not paused as unreachable', async () => {
    const { ca, file } = trustedCa();
    const paths: string[] = [];
    const server: Http2SecureServer = createSecureServer({ ...ca.issue({ hosts: ['127.0.0.1'] }), allowHTTP1: false }, (req, res) => {
      paths.push(req.url);
      if (req.url === '/robots.txt') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end(robotsTxt().body as string);
      } else {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(staticArticle({ title: 'Spoken in h2' }));
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => server.close());
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/article`;

    // Plain HTTP only: no browser could have fetched it instead.
    crawler = await startE2e('h2_only', { FETCHERS: 'simple_http:2', NODE_EXTRA_CA_CERTS: file });
    const { accepted } = await crawler.runtime.enqueue([url]);
    crawler.runtime.startWorkers();
    const link = await settled(crawler, accepted[0]!.linkId, 30_000);

    expect([link.status, link.lastErrorType, link.fetcher]).toEqual(['done', null, 'simple_http']);
    expect(paths).toContain('/robots.txt');
    const stored = await crawler.content.latestForLink(link.id);
    expect(new TextDecoder().decode(stored!.body)).toContain('<title>Spoken in h2</title>');
  }, 60_000);

  it('a page whose head has bare LFs goes to the browser, which stores it, instead of failing as a network error', async () => {
    const page = staticArticle({ title: 'Bare LF' });
    const paths: string[] = [];
    // Over HTTPS, where Chromium parses the bytes itself through its egress tunnel (the next test: http://).
    const { ca, file } = trustedCa();
    // The CA goes out in the chain: Chromium trusts a private CA by its key in the chain (chromiumCaArgs).
    const leaf = ca.issue({ hosts: ['127.0.0.1'] });
    const server = tls.createServer({ cert: leaf.cert + ca.cert, key: leaf.key }, bareLfServer(page, paths));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => server.close());
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/article`;

    crawler = await startE2e('bare_lf', { FETCHERS: 'simple_http:2,playwright:1', FETCH_TIMEOUT_MS: '30000', NODE_EXTRA_CA_CERTS: file });
    const { accepted } = await crawler.runtime.enqueue([url]);
    crawler.runtime.startWorkers();
    const link = await settled(crawler, accepted[0]!.linkId, 90_000);

    expect([link.status, link.lastErrorType, link.fetcher]).toEqual(['done', null, 'playwright']);
    const stored = await crawler.content.latestForLink(link.id);
    expect(new TextDecoder().decode(stored!.body)).toContain('<title>Bare LF</title>');
    // Plain HTTP's attempt is logged as the wrong tool, which is what the router learns from.
    const attempts = await crawler.db.prisma.fetcherAttempt.findMany({ where: { linkId: link.id, selectionSource: { not: 'prior' } }, orderBy: { id: 'asc' } });
    expect(attempts.map((a) => [a.fetcher, a.success, a.errorType ?? null])).toEqual([
      ['simple_http', false, 'wrong_tool'],
      ['playwright', true, null],
    ]);
  }, 120_000);

  it('over plain http:// too: the browser egress reads a bare-LF head as Chromium would, not with Node\'s strict parser', async () => {
    const page = staticArticle({ title: 'Bare LF over http' });
    const server = createTcpServer(bareLfServer(page));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => server.close());
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/article`;

    crawler = await startE2e('bare_lf_http', { FETCHERS: 'simple_http:2,playwright:1', FETCH_TIMEOUT_MS: '30000' });
    const { accepted } = await crawler.runtime.enqueue([url]);
    crawler.runtime.startWorkers();
    const link = await settled(crawler, accepted[0]!.linkId, 90_000);

    expect([link.status, link.lastErrorType, link.fetcher]).toEqual(['done', null, 'playwright']);
    const stored = await crawler.content.latestForLink(link.id);
    expect(new TextDecoder().decode(stored!.body)).toContain('<title>Bare LF over http</title>');
  }, 120_000);
});
