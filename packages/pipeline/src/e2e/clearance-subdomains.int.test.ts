/**
 * A wall that clears a whole domain (its cookie set with `Domain=example.com`) is solved once for the domain: after a
 * browser passed it on www.example.com, a context for shop.example.com starts with the clearance from the fleet's
 * store and meets no challenge. A wall whose cookie is host-only is met again on the other host.
 *
 * The names reach the sim sites through a test exit proxy that resolves them itself (no DNS).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createPlaywrightFetcher, RedisClearanceStore, type PlaywrightFetcher } from '@crawler/fetchers';
import { deleteRedisPrefix } from '@crawler/queue';
import { startForwardProxy, type ForwardProxy } from '@crawler/testkit';
import { startSimWeb, type SimWeb } from '@crawler/sim-web';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const prefix = `{crawler_test_clearance_subdomains_${process.pid}}`;
let web: SimWeb | undefined;
let proxy: ForwardProxy | undefined;
let fetcher: PlaywrightFetcher | undefined;

afterAll(async () => {
  await fetcher?.close();
  await proxy?.close();
  await web?.close();
  await deleteRedisPrefix(redis, prefix);
  redis.disconnect();
});

describe('clearance shared across the hosts of a domain', () => {
  it('a Domain clearance earned on www serves another subdomain with no new solve; a host-only one does not', async () => {
    web = await startSimWeb({
      sites: [
        { kind: 'interstitial', challengeDelayMs: 100, name: 'domain-wide', clearanceCookieDomain: 'example.com' },
        { kind: 'interstitial', challengeDelayMs: 100, name: 'host-only' },
      ],
      firstHost: '127.0.6.90',
    });
    const [wide, hostOnly] = web.sites as [SimWeb['sites'][number], SimWeb['sites'][number]];
    proxy = await startForwardProxy({
      hosts: { 'www.example.com': wide.domain, 'shop.example.com': wide.domain, 'www.example.org': hostOnly.domain, 'shop.example.org': hostOnly.domain },
    });
    fetcher = createPlaywrightFetcher({ allowPrivateNetworks: true, browser: { challengeWaitMs: 10_000 } }, { clearance: new RedisClearanceStore({ redis, prefix }) });
    const exit = { tier: 'datacenter' as const, proxyUrl: proxy.url };
    const on = (url: string, host: string) => {
      const u = new URL(url);
      u.hostname = host;
      return u.href;
    };
    const solves = (site: typeof wide) => site.requestLog().filter((r) => r.outcome === 'challenge' && r.client === 'browser').length;

    const [w1, w2] = wide.urls(2);
    const first = await fetcher.fetch({ url: on(w1!, 'www.example.com'), exit });
    expect(first.status).toBe(200);
    expect(solves(wide)).toBe(1);
    const other = await fetcher.fetch({ url: on(w2!, 'shop.example.com'), exit });
    expect(other.status).toBe(200);
    expect(other.challenge).toBeUndefined();
    expect(solves(wide)).toBe(1);

    const [h1, h2] = hostOnly.urls(2);
    expect((await fetcher.fetch({ url: on(h1!, 'www.example.org'), exit })).status).toBe(200);
    expect(solves(hostOnly)).toBe(1);
    expect((await fetcher.fetch({ url: on(h2!, 'shop.example.org'), exit })).status).toBe(200);
    expect(solves(hostOnly)).toBe(2);
  }, 120_000);
});
