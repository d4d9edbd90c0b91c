/**
 * One solve per wall across the hosts of a domain: pages of sibling hosts (www.example.com and shop.example.com)
 * that meet the same wall at once wait for one solve, keyed by the registrable domain, and the solver's cookies
 * decide who may use them. A `Domain=example.com` clearance serves every sibling (one solve); a host-only one
 * serves only its host, and the sibling's waiters then solve once for themselves (two solves), none left waiting.
 * Within one browser pool and across two pools sharing Redis (a fleet's workers). The sim-web wall counts solves.
 *
 * The names reach the sim sites through a test exit proxy that resolves them itself (no DNS).
 *
 * Two counts, each exact. The fetch results say which pages waited a wall out (a solve the crawler chose to make); the
 * sim's solve log says which host each solve was made on. The sim's count also holds a waiter whose own copy of the
 * check ran out before the page left it: the check takes long enough (`CHECK_MS`) that on a loaded machine a waiter,
 * which leaves within about 1.3 s there (measured with 12 busy loops on 2 cores), still leaves in time.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createPlaywrightFetcher, RedisClearanceStore, type FetchResult, type PlaywrightFetcher } from '@crawler/fetchers';
import { deleteRedisPrefix } from '@crawler/queue';
import { startForwardProxy, type ForwardProxy } from '@crawler/testkit';
import { startSimWeb, type SimWeb } from '@crawler/sim-web';

// How long the sim's check runs before its script sets the cookie. Long enough for every page to meet the wall while
// it runs, and for a waiter to leave the wall before its own copy of the check ends: more than twice the 1.3 s a
// waiter took to leave on a machine loaded far past the suite's load. Each solve waits it out (seven in this file).
const CHECK_MS = 3_000;

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const prefix = `{crawler_test_sibling_flight_${process.pid}}`;
const fetchers: PlaywrightFetcher[] = [];
let web: SimWeb | undefined;
let proxy: ForwardProxy | undefined;

afterAll(async () => {
  for (const f of fetchers) await f.close();
  await proxy?.close();
  await web?.close();
  await deleteRedisPrefix(redis, prefix);
  redis.disconnect();
});

type Site = SimWeb['sites'][number];

async function setUp(): Promise<{ wide: Site; hostOnly: Site; fleetWide: Site; fleetHostOnly: Site; plain: Site }> {
  web ??= await startSimWeb({
    sites: [
      { kind: 'interstitial', challengeDelayMs: CHECK_MS, name: 'domain-wide', clearanceCookieDomain: 'example.com' },
      { kind: 'interstitial', challengeDelayMs: CHECK_MS, name: 'host-only' },
      { kind: 'interstitial', challengeDelayMs: CHECK_MS, name: 'fleet-wide', clearanceCookieDomain: 'example.net' },
      { kind: 'interstitial', challengeDelayMs: CHECK_MS, name: 'fleet-host-only' },
      { kind: 'static', name: 'plain' },
    ],
    firstHost: '127.0.6.100',
  });
  const [wide, hostOnly, fleetWide, fleetHostOnly, plain] = web.sites as [Site, Site, Site, Site, Site];
  proxy ??= await startForwardProxy({
    hosts: {
      'www.example.com': wide.domain,
      'shop.example.com': wide.domain,
      'www.example.org': hostOnly.domain,
      'shop.example.org': hostOnly.domain,
      'img.example.org': hostOnly.domain,
      'www.example.net': fleetWide.domain,
      'shop.example.net': fleetWide.domain,
      'www.example.info': fleetHostOnly.domain,
      'shop.example.info': fleetHostOnly.domain,
      'plain.example.edu': plain.domain,
    },
  });
  return { wide, hostOnly, fleetWide, fleetHostOnly, plain };
}

function fetcher(): PlaywrightFetcher {
  const f = createPlaywrightFetcher(
    // Waits long enough for three solves one after another (3 s checks), on a busy machine too.
    { allowPrivateNetworks: true, browser: { maxPages: 9, challengeWaitMs: 45_000 }, timeoutMs: 100_000 },
    { clearance: new RedisClearanceStore({ redis, prefix }) },
  );
  fetchers.push(f);
  return f;
}

const exit = () => ({ tier: 'datacenter' as const, proxyUrl: proxy!.url });
const on = (url: string, host: string): string => {
  const u = new URL(url);
  u.hostname = host;
  return u.href;
};
/** `perHost` pages of `site` on each of the sibling hosts `hosts` of `domain`, interleaved. */
const siblingPages = (site: Site, domain: string, hosts: string[], perHost: number): string[] =>
  site.urls(hosts.length * perHost).map((url, i) => on(url, `${hosts[i % hosts.length]!}.${domain}`));

/** The hosts of the pages that waited a wall out, sorted: the solves the crawler chose to make. */
const waitedOut = (results: FetchResult[]): string[] =>
  results
    .filter((r) => r.challenge?.cleared)
    .map((r) => new URL(r.url).hostname)
    .sort();

// Not retried: a site's counts add up over tries, so a retry of a failed count fails too.
describe('concurrent pages of sibling hosts behind one wall', () => {
  it('one browser pool, Domain clearance: 2 hosts × 4 pages at once, one solve', async () => {
    const { wide } = await setUp();
    const f = fetcher();
    const results = await Promise.all(siblingPages(wide, 'example.com', ['www', 'shop'], 4).map((url) => f.fetch({ url, exit: exit() })));
    expect(results.map((x) => x.status)).toEqual(results.map(() => 200));
    for (const x of results) expect(x.text).toContain('domain-wide page');
    expect(waitedOut(results)).toHaveLength(1);
    expect(wide.stats().solvedOn).toHaveLength(1);
  }, 180_000);

  it('one browser pool, host-only clearance, 3 hosts × 3 pages: each host solves once (the third waits for the second), no page left behind', async () => {
    const { hostOnly } = await setUp();
    const f = fetcher();
    const results = await Promise.all(siblingPages(hostOnly, 'example.org', ['www', 'shop', 'img'], 3).map((url) => f.fetch({ url, exit: exit() })));
    expect(results.map((x) => x.status)).toEqual(results.map(() => 200));
    for (const x of results) expect(x.text).toContain('host-only page');
    expect(waitedOut(results)).toEqual(['img.example.org', 'shop.example.org', 'www.example.org']);
    expect(hostOnly.stats().solvedOn.sort()).toEqual(['img.example.org', 'shop.example.org', 'www.example.org']);
  }, 180_000);

  it.each([
    { name: 'Domain clearance: one solve', site: 'fleetWide', domain: 'example.net', solves: 1 },
    { name: 'host-only clearance: one solve per host, no page left behind', site: 'fleetHostOnly', domain: 'example.info', solves: 2 },
  ] as const)('two browser pools sharing Redis, one host each, $name', async ({ site: which, domain, solves }) => {
    const sites = await setUp();
    const site = sites[which];
    const a = fetcher();
    const b = fetcher();
    // Both Chromiums running before the walled pages start, so the pages meet the wall together.
    await Promise.all([a, b].map((f, i) => f.fetch({ url: on(sites.plain.urls(2, which === 'fleetWide' ? 0 : 2)[i]!, 'plain.example.edu'), exit: exit() })));
    const results = await Promise.all(
      site.urls(8).map((url, i) => (i % 2 === 0 ? a.fetch({ url: on(url, `www.${domain}`), exit: exit() }) : b.fetch({ url: on(url, `shop.${domain}`), exit: exit() }))),
    );
    expect(results.map((x) => x.status)).toEqual(results.map(() => 200));
    for (const x of results) expect(x.text).toContain(`${site.name} page`);
    expect(waitedOut(results), 'pages that waited the wall out').toHaveLength(solves);
    expect(site.stats().solvedOn, 'hosts the sim saw solve').toHaveLength(solves);
    if (solves === 2) expect(site.stats().solvedOn.sort()).toEqual([`shop.${domain}`, `www.${domain}`]);
  }, 180_000);
});
