/**
 * One solve per wall: when many pages of a walled site start at once, one of them waits out the challenge and the
 * others wait for its clearance instead of each solving the wall themselves — within one browser pool, and across
 * pools (a fleet's workers) that share clearance through Redis. The sim-web wall counts solves: clearance tokens that
 * came back for the first time.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createDefaultRegistry, RedisClearanceStore, type FetcherRegistry } from '@crawler/fetchers';
import { deleteRedisPrefix } from '@crawler/queue';
import { startSimWeb, type SimWeb } from '@crawler/sim-web';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const prefix = `{crawler_test_single_flight_${process.pid}}`;
const registries: FetcherRegistry[] = [];
let web: SimWeb | undefined;

afterAll(async () => {
  for (const r of registries) await r.closeAll();
  await web?.close();
  await deleteRedisPrefix(redis, prefix);
  redis.disconnect();
});

async function simWeb(): Promise<SimWeb> {
  web ??= await startSimWeb({
    sites: [
      { kind: 'interstitial', challengeDelayMs: 3_000, name: 'walled-one-pool' },
      { kind: 'interstitial', challengeDelayMs: 3_000, name: 'walled-fleet' },
      { kind: 'static', name: 'plain' },
    ],
    firstHost: '127.0.6.80',
  });
  return web;
}

function registry(allowHosts: string[], maxPages: number): FetcherRegistry {
  const r = createDefaultRegistry(
    // Pages that wait for another's solve give up after challengeWaitMs and solve the wall themselves: the product's
    // way out of a solver that hangs. On a loaded 2-core machine a 3 s challenge has taken past 15 s to clear (7 solves
    // instead of 1), so the waits here have room for that; the one-solve claim is what is tested, not its speed.
    { allowHosts, browser: { maxPages, challengeWaitMs: 40_000 }, timeoutMs: 60_000 },
    { clearance: new RedisClearanceStore({ redis, prefix }) },
  );
  registries.push(r);
  return r;
}

describe('concurrent first pages of a walled site', () => {
  it('in one browser pool: 8 pages at once, one solve, every page gets the content', async () => {
    const w = await simWeb();
    const site = w.sites[0]!;
    const r = registry(w.sites.map((s) => s.domain), 8);
    const results = await Promise.all(site.urls(8).map((url) => r.get('playwright').fetch({ url })));
    expect(results.map((x) => x.status)).toEqual(results.map(() => 200));
    for (const x of results) expect(x.text).toContain('walled-one-pool page');
    expect(site.stats().solves).toBe(1);
  }, 150_000);

  it('across two browser pools sharing Redis: 4 + 4 pages at once, one solve', async () => {
    const w = await simWeb();
    const [, site, plain] = w.sites;
    const hosts = w.sites.map((s) => s.domain);
    const a = registry(hosts, 4);
    const b = registry(hosts, 4);
    // Both Chromiums running before the walled pages start, so the pages meet the wall together.
    await Promise.all([a, b].map((r) => r.get('playwright').fetch({ url: plain!.urls(1)[0]! })));
    const urls = site!.urls(8);
    const results = await Promise.all(urls.map((url, i) => (i % 2 === 0 ? a : b).get('playwright').fetch({ url })));
    expect(results.map((x) => x.status)).toEqual(results.map(() => 200));
    for (const x of results) expect(x.text).toContain('walled-fleet page');
    expect(site!.stats().solves).toBe(1);
  }, 150_000);
});
