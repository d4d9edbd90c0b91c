/**
 * Every way a fetch fails on the real web, end to end: the request that leaves for the site on behalf of a link is in
 * the attempt log with its heuristics, and the link ends with a last_error that says what happened. Each failure kind
 * on a host of its own (its own domain to politeness and to the learned selection), crawled until idle.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createTcpServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimWeb, type SimWeb } from '@crawler/sim-web';
import { endlessBody, rawHttpHandler, redirect, slowBody, slowHeaders, startForwardProxy, startTestServer, staticArticle, type ForwardProxy, type TestServer } from '@crawler/testkit';
import { startE2e, type E2eCrawler } from '../__fixtures__/e2e.js';

const cleanups: (() => unknown)[] = [];
let web: SimWeb;
let caFile: string;
let faulty: TestServer;
let malformed: Server;
let malformedOrigin: string;
let refusedOrigin: string;

/** A link after its crawl: status, error, and its attempts (fetcher, error type, how many heuristics). */
interface Audited {
  kind: string;
  status: string;
  lastErrorType: string | null;
  lastError: string | null;
  attempts: { fetcher: string; errorType: string | null; heuristics: number; errorMessage: string | null }[];
}

const FAST = {
  FETCHERS: 'simple_http:4,playwright:1',
  MAX_ATTEMPTS: '3',
  PAUSE_MAX_MS: '5',
  PAUSE_BLOCK_BASE_MS: '1',
  UNREACHABLE_PAUSE_BASE_MS: '1',
  ROBOTS_UNREACHABLE_TTL_MS: '1',
  FETCH_TIMEOUT_MS: '1500',
  PROBE_TIMEOUT_MS: '700',
  FETCH_MAX_BYTES: '200000',
  LOG_LEVEL: 'silent',
};

beforeAll(async () => {
  web = await startSimWeb({
    https: true,
    firstHost: '127.0.9.2',
    sites: [
      { kind: 'static', name: 'expired', certificate: 'expired' },
      { kind: 'static', name: 'wrong-host', certificate: 'wrong_host' },
    ],
  });
  const dir = mkdtempSync(join(tmpdir(), 'attempt-log-'));
  caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, web.ca!.cert);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }), () => web.close());

  faulty = await startTestServer({
    '/robots.txt': { status: 404, body: 'none' },
    '/reset/*': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': '50000' });
      res.write('<!doctype html><html><body><p>half a page');
      setTimeout(() => res.socket?.destroy(), 50);
    },
    '/slow-headers/*': slowHeaders(10_000),
    '/slow-body/*': slowBody({ chunks: 100, intervalMs: 400 }),
    '/huge/*': endlessBody(),
    '/loop/*': (req, res) => {
      res.writeHead(302, { location: req.url! }).end();
    },
    '/hops/*': (req, res) => {
      const n = Number(/(\d+)$/.exec(req.url!)?.[1] ?? 0);
      res.writeHead(302, { location: req.url!.replace(/\d+$/, String(n + 1)) }).end();
    },
    '/bad-location/*': redirect('http://exa mple.com:99999/x'),
    '/ok/*': { body: staticArticle({ title: 'fine' }) },
  }, { host: '127.0.9.10' });
  cleanups.push(() => faulty.close());

  malformed = createTcpServer(rawHttpHandler((_head, path) => ({
    bytes: path === '/robots.txt' ? 'HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n' : 'HELLO THIS IS NOT HTTP\r\n\r\n',
  })));
  await new Promise<void>((r) => malformed.listen(0, '127.0.9.11', r));
  malformedOrigin = `http://127.0.9.11:${(malformed.address() as AddressInfo).port}`;
  cleanups.push(() => malformed.close());

  // A port nothing listens on: taken, then given back.
  const probe = createTcpServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.9.12', r));
  refusedOrigin = `http://127.0.9.12:${(probe.address() as AddressInfo).port}`;
  await new Promise<void>((r) => probe.close(() => r()));
}, 60_000);

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function crawl(crawler: E2eCrawler, cases: Record<string, string[]>): Promise<Audited[]> {
  const byUrl = new Map<string, string>();
  for (const [kind, urls] of Object.entries(cases)) for (const u of urls) byUrl.set(u, kind);
  faulty.resetHits();
  const handshakes = web.sites.map((x) => x.connections());
  const { accepted } = await crawler.runtime.enqueue([...byUrl.keys()]);
  // Idle does not wait for paused links (a paused link must not keep --until-idle alive), and under load the last
  // link can be between two attempts, in its pause of a few ms: it is waited for until it ends.
  const ids = accepted.map((a) => a.linkId);
  for (let round = 0; round < 50; round++) {
    await crawler.runtime.waitUntilIdle();
    if ((await crawler.db.prisma.link.count({ where: { id: { in: ids }, status: 'paused' } })) === 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  console.log(`attempt-log handshakes: ${web.sites.map((x, i) => `${x.name} ${x.connections() - handshakes[i]!}`).join(', ')}`);
  const links = await crawler.db.prisma.link.findMany({
    where: { id: { in: ids } },
    include: { attempts: { orderBy: { id: 'asc' }, include: { _count: { select: { heuristics: true } } } } },
    orderBy: { url: 'asc' },
  });
  const out = links.map((l) => ({
    kind: byUrl.get(l.url) ?? l.url,
    status: l.status,
    lastErrorType: l.lastErrorType,
    lastError: l.lastError,
    attempts: l.attempts.map((a) => ({ fetcher: a.fetcher, errorType: a.errorType, heuristics: a._count.heuristics, errorMessage: a.errorMessage })),
  }));
  for (const [i, a] of out.entries()) {
    const u = links[i]!.url;
    const hits = u.startsWith(faulty.origin) ? faulty.hits(new URL(u).pathname) : '?';
    console.log(`attempt-log ${a.kind}: ${hits} hits: ${a.status} ${a.lastErrorType} | ${a.attempts.length} attempts [${a.attempts.map((x) => `${x.fetcher}:${x.errorType}:${x.heuristics}h`).join(', ')}] | ${a.lastError}`);
  }
  return out;
}

const urls = (origin: string, path: string, n = 2) => Array.from({ length: n }, (_, i) => `${origin}${path}${i + 1}`);

describe.each([
  ['inline', 'true', 'true'],
  ['queued', 'false', 'true'],
  ['norobots', 'true', 'false'],
])('every failed request is in the attempt log (%s fetch path)', (label, inline, robots) => {
  let crawler: E2eCrawler;
  let results: Audited[];

  beforeAll(async () => {
    crawler = await startE2e(`attempt_log_${label}`, { ...FAST, FETCH_INLINE: inline, ROBOTS_ENABLED: robots, NODE_EXTRA_CA_CERTS: caFile });
    crawler.runtime.startWorkers();
    results = await crawl(crawler, {
      reset: urls(faulty.origin, '/reset/'),
      slow_headers: urls(faulty.origin, '/slow-headers/'),
      slow_body: urls(faulty.origin, '/slow-body/'),
      huge: urls(faulty.origin, '/huge/'),
      loop: urls(faulty.origin, '/loop/'),
      hops: urls(faulty.origin, '/hops/'),
      bad_location: urls(faulty.origin, '/bad-location/'),
      malformed: urls(malformedOrigin, '/page/'),
      refused: urls(refusedOrigin, '/page/'),
      dns: urls('http://no-such-host.invalid', '/page/'),
      tls_expired: web.sites[0]!.urls(2, 1),
      tls_wrong_host: web.sites[1]!.urls(2, 1),
    });
  }, 240_000);

  afterAll(async () => {
    const rollups = await crawler.db.prisma.$queryRawUnsafe<{ subset_key: string; fetcher: string; attempts: number }[]>(
      "SELECT subset_key, fetcher, sum(attempts)::int AS attempts FROM heuristic_rollups WHERE subset_key LIKE 'domain%' GROUP BY 1, 2 ORDER BY 1, 2");
    for (const r of rollups) console.log(`attempt-log rollup ${label}: ${r.subset_key.replace(/[\x1e\x1f]/g, '=')} ${r.fetcher} ${r.attempts}`);
    await crawler?.cleanup();
  });

  it('ends every link failed, with an error type and a message', () => {
    for (const r of results) {
      expect([r.kind, r.status]).toEqual([r.kind, 'failed']);
      expect(r.lastErrorType, r.kind).toBeTruthy();
      expect(r.lastError, r.kind).toBeTruthy();
    }
  });

  it('logs every request made for a page as an attempt with its heuristics, the last one naming the link\'s error', () => {
    // With robots.txt on, a site nobody answers is paused on its robots.txt and then fails site_unreachable: no
    // request for the page left, so none is logged (design: "no page was asked for").
    const unasked = robots === 'true' ? ['refused', 'dns'] : [];
    for (const r of results.filter((x) => !unasked.includes(x.kind))) {
      expect(r.attempts.length, r.kind).toBeGreaterThan(0);
      for (const a of r.attempts) expect(a.heuristics, r.kind).toBeGreaterThan(0);
      expect(r.attempts.at(-1)!.errorType, r.kind).toBe(r.lastErrorType);
    }
    for (const r of results.filter((x) => unasked.includes(x.kind))) {
      expect([r.kind, r.lastErrorType, r.attempts]).toEqual([r.kind, 'site_unreachable', []]);
      // What the network said, not only that robots.txt could not be read.
      expect(r.lastError, r.kind).toMatch(r.kind === 'dns' ? /ENOTFOUND/ : /ECONNREFUSED/);
    }
  });

  it('learns nothing about the tools from a refused certificate: every tool meets it', async () => {
    const tlsDomains = web.sites.map((x) => x.domain);
    const rolled = await crawler.db.prisma.heuristicRollup.findMany({ where: { OR: tlsDomains.map((d) => ({ subsetKey: { contains: d } })) } });
    expect(rolled).toEqual([]);
    for (const d of tlsDomains) {
      const learned = await crawler.attempts.findBestFetcher([{ type: 'domain', value: d }], { strategy: 'scan' });
      expect(learned.scores.every((sc) => sc.sampleSize === 0), d).toBe(true);
    }
  });

  it('an answer that is not HTTP fails as a protocol_error of plain HTTP, not as a page for a browser', () => {
    const garbage = results.filter((r) => r.kind === 'malformed');
    expect(garbage).toHaveLength(2);
    for (const r of garbage) {
      expect([r.lastErrorType, [...new Set(r.attempts.map((a) => `${a.fetcher}:${a.errorType}`))]]).toEqual(['protocol_error', ['simple_http:protocol_error']]);
      expect(r.lastError).toMatch(/Expected HTTP\//);
    }
  });

  it('a refused certificate: the one handshake made for each link is its attempt (tls_error), its message on the link', () => {
    const tls = results.filter((r) => r.kind.startsWith('tls_'));
    expect(tls).toHaveLength(4);
    for (const r of tls) {
      expect([r.lastErrorType, r.attempts.map((a) => [a.fetcher, a.errorType])]).toEqual(['tls_error', [['simple_http', 'tls_error']]]);
      expect(r.attempts[0]!.errorMessage).toMatch(r.kind === 'tls_expired' ? /CERT_HAS_EXPIRED/ : /ERR_TLS_CERT_ALTNAME_INVALID/);
      expect(r.lastError).toMatch(r.kind === 'tls_expired' ? /CERT_HAS_EXPIRED/ : /ERR_TLS_CERT_ALTNAME_INVALID/);
    }
  });
});

describe('a request no exit carries is not the site\'s failure', () => {
  let crawler: E2eCrawler;
  let refusing: ForwardProxy;
  let results: Audited[];

  beforeAll(async () => {
    // One proxy of the tier refuses the site (Squid's http_access deny), the other is down (nothing listens).
    refusing = await startForwardProxy({ refuse: () => true });
    const dead = refusedOrigin.replace('127.0.9.12', '127.0.0.1');
    crawler = await startE2e('attempt_log_exits', {
      ...FAST,
      PROXY_TIERS: JSON.stringify([{ name: 'datacenter', cost: 1, urls: [refusing.url, dead] }]),
      PROXY_DIRECT: 'false',
      PROXY_UNHEALTHY_MS: '1000',
    });
    crawler.runtime.startWorkers();
    results = await crawl(crawler, { exit_refused: urls(faulty.origin, '/ok/') });
  }, 120_000);

  afterAll(async () => {
    await crawler?.cleanup();
    await refusing?.close();
  });

  it('fails proxy_unavailable, saying what each proxy said, and logs no attempt against the site or the fetcher', () => {
    expect(faulty.hits()).toBe(0);
    for (const r of results) {
      expect([r.status, r.lastErrorType, r.attempts]).toEqual(['failed', 'proxy_unavailable', []]);
      expect(r.lastError).toMatch(/datacenter/);
    }
  });
});
