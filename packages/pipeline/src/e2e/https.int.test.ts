/**
 * The crawler's main flows over HTTPS, as a user runs it against real sites: a simulated web whose sites serve TLS with
 * certificates of a CA made at start, trusted the way the README says (NODE_EXTRA_CA_CERTS, read by the config), with
 * the address guard on (FETCH_ALLOW_HOSTS names the web's range, no ALLOW_PRIVATE_NETWORKS), so the browsers reach the
 * sites through the egress proxy's CONNECT tunnels and its checks. One crawler for the file; each case crawls its own
 * site (or pages) until idle.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createDefaultRegistry, RedisClearanceStore } from '@crawler/fetchers';
import { CLEARANCE_COOKIE, startSimWeb, type SimWeb } from '@crawler/sim-web';
import { startForwardProxy, startTestServer, staticArticle, type ForwardProxy, type TestServer } from '@crawler/testkit';
import { REDIS_URL, startE2e, type E2eCrawler } from '../__fixtures__/e2e.js';

let web: SimWeb;
let proxy: ForwardProxy;
let outside: TestServer;
let crawler: E2eCrawler;
let dir: string;

const SITES = ['static', 'spa', 'wall', 'hsts', 'expired', 'wrong-host', 'downgrade', 'ranged'] as const;
const site = (name: (typeof SITES)[number]) => web.sites[SITES.indexOf(name)]!;
const overPlainHttp = (s: ReturnType<typeof site>, urls: string[]) => urls.map((u) => u.replace(s.origin, s.plainOrigin!));

beforeAll(async () => {
  web = await startSimWeb({
    https: true,
    firstHost: '127.0.7.2',
    sites: [
      { kind: 'static', name: 'static' },
      { kind: 'spa', name: 'spa' },
      { kind: 'interstitial', name: 'wall', challengeDelayMs: 300 },
      { kind: 'static', name: 'hsts', hsts: true },
      { kind: 'static', name: 'expired', certificate: 'expired' },
      { kind: 'static', name: 'wrong-host', certificate: 'wrong_host' },
      { kind: 'static', name: 'downgrade', plainHttp: 'downgrade' },
      // Refuses the worker's own address, as sites refuse ranges: only the exit proxy (leaving from 127.0.3.9) gets in.
      { kind: 'static', name: 'ranged', blockedAddresses: ['127.0.0.'] },
    ],
  });
  proxy = await startForwardProxy({ localAddress: '127.0.3.9' });
  // A site the CA vouches for on an address the allow list does not name: the guard, not TLS, must stop it.
  outside = await startTestServer({ '/': { body: staticArticle({ title: 'private' }) } }, { tls: (({ cert, key }) => ({ cert: cert + web.ca!.cert, key }))(web.ca!.issue({ hosts: ['127.0.0.1'] })) });
  dir = mkdtempSync(join(tmpdir(), 'https-e2e-'));
  writeFileSync(join(dir, 'ca.pem'), web.ca!.cert);
  crawler = await startE2e('https', {
    NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem'),
    ALLOW_PRIVATE_NETWORKS: 'false',
    FETCH_ALLOW_HOSTS: '127.0.7.0/24',
    PROXY_TIERS: JSON.stringify([{ name: 'residential', cost: 10, urls: [proxy.url] }]),
    CHALLENGE_WAIT_MS: '10000',
    FETCH_TIMEOUT_MS: '20000',
    // Blocks pause the domain; a millisecond keeps the exit ladder's climb inside the test.
    PAUSE_BLOCK_BASE_MS: '1',
    PAUSE_MAX_MS: '5',
  });
  crawler.runtime.startWorkers();
}, 60_000);

afterAll(async () => {
  await crawler?.cleanup();
  await Promise.all([web?.close(), proxy?.close(), outside?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Enqueue, crawl until idle; the links (by URL) with their attempts and stored pages, and one line of figures. */
async function crawl(label: string, urls: string[]) {
  const { accepted } = await crawler.runtime.enqueue(urls);
  await crawler.runtime.waitUntilIdle();
  const links = await crawler.db.prisma.link.findMany({
    where: { id: { in: accepted.map((a) => a.linkId) } },
    include: { attempts: { orderBy: { id: 'asc' } }, contents: true },
    orderBy: { url: 'asc' },
  });
  const done = links.filter((l) => l.status === 'done').length;
  console.log(`https e2e ${label}: ${done}/${links.length} done, ${links.length - done} failed, ${links.reduce((n, l) => n + l.attempts.length, 0)} attempts`);
  return links;
}

const bodyOf = async (linkId: string) => new TextDecoder().decode((await crawler.content.latestForLink(linkId))!.body);

describe('end to end over HTTPS (CA trusted through NODE_EXTRA_CA_CERTS, address guard on)', () => {
  it('fetches a static site with plain HTTP, its certificate checked', async () => {
    const links = await crawl('static', site('static').urls(4, 1));
    expect(links.map((l) => [l.status, l.fetcher])).toEqual(links.map(() => ['done', 'simple_http']));
    for (const l of links) expect(await bodyOf(l.id)).toContain(`<h1>static page ${/(\d+)$/.exec(l.url)![1]}</h1>`);
    expect(site('static').stats()).toMatchObject({ served: 4, blocked: 0, requests: { browser: 0 } });
  }, 60_000);

  it('renders a JS site in the browser through the egress proxy\'s CONNECT tunnel', async () => {
    const links = await crawl('spa', site('spa').urls(3, 1));
    expect(links.map((l) => [l.status, l.fetcher])).toEqual(links.map(() => ['done', 'playwright']));
    for (const l of links) expect(await bodyOf(l.id)).toContain('data-rendered="true"');
    // The site's own count: every page rendered by a browser (its script's beacon came back over TLS too).
    expect(site('spa').stats()).toMatchObject({ served: 3, requests: { browser: 3 } });
  }, 60_000);

  it('waits a cookie-and-reload wall out once; its Secure clearance cookie serves the other pages and a second worker\'s browser', async () => {
    const wall = site('wall');
    const links = await crawl('wall', wall.urls(4, 1));
    expect(links.map((l) => l.status)).toEqual(links.map(() => 'done'));
    for (const l of links) expect(await bodyOf(l.id)).toContain(`<h1>wall page ${/(\d+)$/.exec(l.url)![1]}</h1>`);
    const browser = wall.requestLog().filter((r) => r.client === 'browser');
    expect(browser.filter((r) => r.outcome === 'challenge')).toHaveLength(1);
    expect(wall.stats().solves).toBe(1);

    // The clearance kept for the fleet is the Secure cookie the wall set over HTTPS, still Secure.
    const flavour = links[0]!.fetcher!;
    const redis = new Redis(REDIS_URL);
    const store = new RedisClearanceStore({ redis, prefix: crawler.prefix });
    try {
      const kept = (await store.load(wall.domain, flavour)).filter((c) => c.name === CLEARANCE_COOKIE);
      expect(kept.map((c) => [c.domain, c.secure])).toEqual([[wall.domain, true]]);
      // A second worker (its own Chromium) starts with it and passes the wall without a challenge.
      const second = createDefaultRegistry({ allowHosts: ['127.0.7.0/24'], extraCaCerts: [web.ca!.cert], browser: { challengeWaitMs: 10_000 } }, { clearance: store });
      try {
        const r = await second.get(flavour).fetch({ url: wall.urls(1, 20)[0]!, timeoutMs: 20_000 });
        expect([r.status, r.text]).toEqual([200, expect.stringContaining('<h1>wall page 20</h1>')]);
      } finally {
        await second.closeAll();
      }
    } finally {
      redis.disconnect();
    }
    expect(wall.requestLog().filter((r) => r.client === 'browser' && r.outcome === 'challenge')).toHaveLength(1);
  }, 60_000);

  it('follows http:// → https:// redirects (plain HTTP and browser) and stores the https page', async () => {
    const plain = await crawl('http→https static', overPlainHttp(site('static'), site('static').urls(3, 10)));
    const spa = await crawl('http→https spa', overPlainHttp(site('spa'), site('spa').urls(2, 10)));
    for (const l of [...plain, ...spa]) {
      expect(l.status).toBe('done');
      expect(l.contents.map((c) => c.finalUrl)).toEqual([l.url.replace(/^http:\/\/([^:]+):\d+/, (_m, h: string) => web.site(h)!.origin)]);
    }
  }, 60_000);

  it('follows an https:// → http:// downgrade and stores the page where it landed', async () => {
    const s = site('downgrade');
    const links = await crawl('https→http', s.urls(3, 1));
    expect(links.map((l) => [l.status, l.contents.map((c) => c.finalUrl)])).toEqual(links.map((l) => ['done', [l.url.replace(s.origin, s.plainOrigin!)]]));
  }, 60_000);

  it('crawls a site that sends HSTS, over https and from its http:// links', async () => {
    const s = site('hsts');
    const links = await crawl('hsts', [...s.urls(2, 1), ...overPlainHttp(s, s.urls(2, 10))]);
    expect(links.map((l) => l.status)).toEqual(links.map(() => 'done'));
    expect(links.every((l) => l.contents[0]!.finalUrl.startsWith(s.origin))).toBe(true);
    expect(links[0]!.contents[0]!.responseHeaders).toMatchObject({ 'strict-transport-security': 'max-age=31536000' });
  }, 60_000);

  it('fails an expired certificate and one for another host at once with tls_error, one handshake per link at most', async () => {
    const links = await crawl('bad certificates', [...site('expired').urls(3, 1), ...site('wrong-host').urls(3, 1)]);
    expect(links.map((l) => [l.status, l.lastErrorType])).toEqual(links.map(() => ['failed', 'tls_error']));
    expect(links.filter((l) => l.url.startsWith(site('expired').origin)).every((l) => /CERT_HAS_EXPIRED/.test(l.lastError ?? ''))).toBe(true);
    expect(links.filter((l) => l.url.startsWith(site('wrong-host').origin)).every((l) => /ERR_TLS_CERT_ALTNAME_INVALID/.test(l.lastError ?? ''))).toBe(true);
    // No retry storm: no more TLS handshakes than links (robots.txt's included), and no page ever served.
    console.log(`https e2e bad certificates: ${site('expired').connections()} + ${site('wrong-host').connections()} handshakes for 3 + 3 links`);
    expect(site('expired').connections()).toBeLessThanOrEqual(4);
    expect(site('wrong-host').connections()).toBeLessThanOrEqual(4);
    expect(site('expired').stats().pageRequests + site('wrong-host').stats().pageRequests).toBe(0);
  }, 60_000);

  it('reaches a site that refuses the worker\'s address through the exit proxy, certificate checked end to end', async () => {
    const s = site('ranged');
    const links = await crawl('exit proxy', s.urls(3, 1));
    expect(links.map((l) => l.status)).toEqual(links.map(() => 'done'));
    expect(links.map((l) => l.attempts.at(-1)!.exitTier)).toEqual(links.map(() => 'residential'));
    expect(s.requestLog().filter((r) => r.outcome === 'served').map((r) => r.address)).toEqual(['127.0.3.9', '127.0.3.9', '127.0.3.9']);
  }, 60_000);

  it('still refuses an address the allow list does not name, its certificate good or not', async () => {
    const links = await crawl('guard', [outside.url('/')]);
    expect(links.map((l) => [l.status, l.lastErrorType])).toEqual([['failed', 'blocked_address']]);
    expect(outside.connections).toBe(0);
  }, 60_000);
});
