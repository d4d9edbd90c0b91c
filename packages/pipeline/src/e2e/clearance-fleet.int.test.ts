/**
 * Earned clearance is the fleet's, not one Chromium's: a browser that passed a site's interstitial shares the wall's
 * cookies through Redis, and a second browser pool (its own Chromium, its own memory: what a second worker process
 * has) starts its context for the site with them and passes the wall without a new challenge.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { Logger } from '@crawler/core';
import { createDefaultRegistry, RedisClearanceStore, type FetcherRegistry } from '@crawler/fetchers';
import { deleteRedisPrefix } from '@crawler/queue';
import { CLEARANCE_COOKIE, startSimWeb, type SimWeb } from '@crawler/sim-web';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const prefix = `{crawler_test_clearance_${process.pid}}`;
const registries: FetcherRegistry[] = [];
let web: SimWeb | undefined;

afterAll(async () => {
  for (const r of registries) await r.closeAll();
  await web?.close();
  await deleteRedisPrefix(redis, prefix);
  redis.disconnect();
});

/** Every line logged, serialised: cookie values must appear in none. */
const logged: string[] = [];
const logger: Logger = {
  debug: (o: object | string, m?: string) => void logged.push(JSON.stringify([o, m])),
  info: (o: object | string, m?: string) => void logged.push(JSON.stringify([o, m])),
  warn: (o: object | string, m?: string) => void logged.push(JSON.stringify([o, m])),
  error: (o: object | string, m?: string) => void logged.push(JSON.stringify([o, m])),
  child: () => logger,
};

describe('clearance shared by the fleet through Redis', () => {
  it.each(['playwright', 'playwright_stealth'])('%s: a second Chromium passes the wall without a new challenge; one without the store meets it again', async (name) => {
    web ??= await startSimWeb({ sites: [{ kind: 'interstitial', challengeDelayMs: 200, name: 'walled' }], firstHost: '127.0.6.60' });
    const site = web.sites[0]!;
    const opts = { allowHosts: [site.domain], logger, browser: { challengeWaitMs: 10_000 } };
    const store = new RedisClearanceStore({ redis, prefix, logger });
    const first = createDefaultRegistry(opts, { clearance: store });
    const second = createDefaultRegistry(opts, { clearance: store });
    const alone = createDefaultRegistry(opts);
    registries.push(first, second, alone);
    const challenges = () => site.requestLog().filter((r) => r.outcome === 'challenge' && r.client === 'browser').length;
    const [a, b, c] = site.urls(3, name === 'playwright' ? 0 : 10);

    const before = challenges();
    const r1 = await first.get(name).fetch({ url: a! });
    expect(r1.status).toBe(200);
    expect(challenges()).toBe(before + 1);

    // The shared clearance: the site's hash-tagged key under the crawler's prefix, expiring with the cookie (1 h).
    const key = store.keyOf(site.domain, name);
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(3_600_000);
    const token = (JSON.parse((await redis.get(key))!) as { name: string; value: string }[]).find((x) => x.name === CLEARANCE_COOKIE)!.value;
    expect(token).toMatch(/^[0-9a-f]{24}$/);

    // A second browser pool: its own Chromium, nothing in memory, the same Redis.
    const r2 = await second.get(name).fetch({ url: b! });
    expect(r2.status).toBe(200);
    expect(r2.challenge).toBeUndefined();
    expect(r2.text).toContain('walled page');
    expect(challenges()).toBe(before + 1);

    // Control: a browser without the shared store is challenged again, so the pass above was the shared clearance.
    const r3 = await alone.get(name).fetch({ url: c! });
    expect(r3.status).toBe(200);
    expect(challenges()).toBe(before + 2);

    // Cookies are secrets: the token is in no log line.
    expect(logged.filter((l) => l.includes(token))).toEqual([]);
    expect(logged.some((l) => l.includes('clearance shared with the fleet'))).toBe(true);
  }, 120_000);
});
