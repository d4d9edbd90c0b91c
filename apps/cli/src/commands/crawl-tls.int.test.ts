/**
 * `crawl crawl https://…` end to end, as a user runs it: the CLI in a child process, real Redis and Postgres, local
 * HTTPS sites signed by a CA made for this file and trusted through NODE_EXTRA_CA_CERTS.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisConnection, deleteRedisPrefix } from '@crawler/queue';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { createTestCa, startTestServer, staticArticle, type TestServer, REDIS_URL } from '@crawler/testkit';
import { runCrawl } from '../__fixtures__/crawl-process.js';

const PREFIX = `{crawler_test_cli_tls_${process.pid}}`;
const DAY_MS = 86_400_000;

let db: TestDatabase;
let dir: string;
let caFile: string;
const servers: TestServer[] = [];
const hung = new Set<Socket>();
let hang: TcpServer;
let h2only: Http2SecureServer;
const site: Record<'good' | 'expired' | 'wrongHost' | 'unknownCa' | 'plain', TestServer> = {} as never;
let hangOrigin: string;
let h2Origin: string;

interface ReportLink { url: string; status: string; fetcher: string | null; attemptCount: number; errorType: string | null; error: string | null }

async function crawl(urls: string[], env: Record<string, string>): Promise<{ code: number | null; links: ReportLink[]; stderr: string }> {
  const { code, stdout, stderr } = await runCrawl(['crawl', '--json', ...urls], {
    env: {
      DATABASE_URL: db.url,
      REDIS_URL,
      QUEUE_PREFIX: PREFIX,
      FETCH_ALLOW_HOSTS: '127.0.0.0/8',
      NODE_EXTRA_CA_CERTS: caFile,
      DOMAIN_MIN_DELAY_MS: '0',
      LOG_LEVEL: 'warn',
      ...env,
    },
  });
  let links: ReportLink[] = [];
  try {
    links = (JSON.parse(stdout) as { links: ReportLink[] }).links;
  } catch {
    throw new Error(`no JSON report (exit ${code}): ${stdout}\n${stderr}`);
  }
  return { code, links, stderr };
}

beforeAll(async () => {
  db = await createTestDatabase('cli_tls');
  dir = mkdtempSync(join(tmpdir(), 'crawl-tls-'));
  const ca = createTestCa();
  caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, ca.cert);
  // The CA goes out in each chain, as a TLS-inspecting proxy sends its issuing CA.
  const chained = (leaf: { cert: string; key: string }) => ({ cert: leaf.cert + ca.cert, key: leaf.key });
  const pages = { '*': { body: staticArticle({ title: 'Secure' }) }, '/robots.txt': { status: 404 } };
  const start = async (host: string, tls?: { cert: string; key: string }, routes = pages) => {
    const s = await startTestServer(routes, { host, ...(tls ? { tls } : {}) });
    servers.push(s);
    return s;
  };
  site.good = await start('127.0.0.1', chained(ca.issue({ hosts: ['127.0.0.1'] })));
  site.expired = await start('127.0.0.2', chained(ca.issue({ hosts: ['127.0.0.2'], notBefore: new Date(Date.now() - 2 * DAY_MS), notAfter: new Date(Date.now() - DAY_MS) })));
  site.wrongHost = await start('127.0.0.3', chained(ca.issue({ hosts: ['127.0.0.9'] })));
  const stranger = createTestCa('a CA nobody trusts');
  const strangerLeaf = stranger.issue({ hosts: ['127.0.0.4'] });
  site.unknownCa = await start('127.0.0.4', { cert: strangerLeaf.cert + stranger.cert, key: strangerLeaf.key });
  site.plain = await start('127.0.0.6', undefined, { '*': (req, res) => void res.writeHead(301, { location: site.good.url(req.url ?? '/') }).end() });
  hang = createTcpServer((s) => hung.add(s));
  await new Promise<void>((r) => hang.listen(0, '127.0.0.5', r));
  hangOrigin = `https://127.0.0.5:${(hang.address() as AddressInfo).port}`;
  h2only = createSecureServer({ ...chained(ca.issue({ hosts: ['127.0.0.7'] })), allowHTTP1: false }, (req, res) => {
    if (req.url === '/robots.txt') res.writeHead(404).end();
    else res.end(staticArticle({ title: 'H2' }));
  });
  await new Promise<void>((r) => h2only.listen(0, '127.0.0.7', r));
  h2Origin = `https://127.0.0.7:${(h2only.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const s of hung) s.destroy();
  hang?.close();
  h2only?.close();
  await Promise.all(servers.map((s) => s.close()));
  const r = createRedisConnection(REDIS_URL, 'producer');
  await deleteRedisPrefix(r, PREFIX);
  r.disconnect();
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const byUrl = (links: ReportLink[]) => Object.fromEntries(links.map((l) => [l.url, l]));

describe('crawl crawl over HTTPS', () => {
  it('simple_http: stores trusted pages (and an http → https redirect), fails bad certificates at once with tls_error, pauses a silent handshake', { timeout: 120_000 }, async () => {
    const path = '/simple';
    const urls = { good: site.good.url(path), plain: site.plain.url(`${path}-r`), expired: site.expired.url(path), wrongHost: site.wrongHost.url(path), unknownCa: site.unknownCa.url(path), hang: `${hangOrigin}${path}` };
    const res = await crawl(Object.values(urls), { FETCHERS: 'simple_http:4', FETCH_TIMEOUT_MS: '3000' });
    const links = byUrl(res.links);
    expect(links[urls.good]).toMatchObject({ status: 'done', fetcher: 'simple_http', attemptCount: 1 });
    expect(links[urls.plain]).toMatchObject({ status: 'done', fetcher: 'simple_http', attemptCount: 1 });
    for (const [which, error] of [['expired', /CERT_HAS_EXPIRED/], ['wrongHost', /ERR_TLS_CERT_ALTNAME_INVALID/], ['unknownCa', /SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY/]] as const) {
      expect(links[urls[which]], which).toMatchObject({ status: 'failed', errorType: 'tls_error', error: expect.stringMatching(error) });
    }
    // Not a certificate problem: the site may answer later, so it is paused as any unreachable site is.
    expect(links[urls.hang]).toMatchObject({ status: 'paused', errorType: 'site_unreachable' });
    expect(res.code).toBe(1);
  });

  // The stealth browser meets these sites in the fetchers' own TLS tests; one browser process here keeps this file short.
  for (const fetcher of ['playwright']) {
    it(`${fetcher}: stores a trusted page and an http → https redirect, and fails an expired certificate with tls_error`, { timeout: 120_000 }, async () => {
      const path = `/${fetcher}`;
      const urls = { good: site.good.url(path), plain: site.plain.url(`${path}-r`), expired: site.expired.url(path) };
      // Learning off: every link goes to the one fetcher named, no probe by plain HTTP first.
      const res = await crawl(Object.values(urls), { FETCHERS: `${fetcher}:2`, LEARNING_MODE_ENABLED: 'false', DEFAULT_FETCHER: fetcher });
      const links = byUrl(res.links);
      expect(links[urls.good]).toMatchObject({ status: 'done', fetcher });
      expect(links[urls.plain]).toMatchObject({ status: 'done', fetcher });
      expect(links[urls.expired]).toMatchObject({ status: 'failed', errorType: 'tls_error', error: expect.stringMatching(/CERT_HAS_EXPIRED/) });
    });
  }
});
