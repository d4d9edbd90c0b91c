import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { ManualClock, parseProxyTiers } from '@crawler/core';
import { deleteRedisPrefix } from '@crawler/queue';
import { REDIS_URL } from '@crawler/testkit';
import { ExitPool, SITES_REMEMBERED } from './exit-pool.js';
import { SessionJars, LOCAL_JARS_KEPT } from './session-jars.js';

const A = 'http://ua:pa@a.example:8000';
const B = 'http://ub:pb@b.example:8000';
const STICKY = 'http://customer-acme-session-{session}:s3cret@gw.example:7000';
const TIERS = parseProxyTiers(JSON.stringify([{ name: 'residential', cost: 10, urls: [A, B] }, { name: 'mobile', cost: 30, urls: [STICKY] }]), { direct: true });
const prefix = `{crawler_test_exitpool_${process.pid}}`;
const redis = new Redis(REDIS_URL);

afterAll(async () => {
  await deleteRedisPrefix(redis, prefix);
  redis.disconnect();
});

function pool(clock = new ManualClock(Date.now()), shared = true, ids: string[] = []) {
  return new ExitPool(TIERS, { unhealthyMs: 60_000, sessionRetireMs: 600_000, clock, ...(shared ? { shared: { redis, prefix } } : {}), newSessionId: () => ids.shift() ?? 'x' });
}

async function picks(p: ExitPool, tier: string, site: string, n: number): Promise<Set<string>> {
  const out = new Set<string>();
  for (let i = 0; i < n; i++) out.add((await p.pick(tier, new Set(), site))?.proxyUrl ?? 'none');
  return out;
}

describe('exit sessions', () => {
  it('retires a session a site blocked for that site only, fleet-wide, until it has served its time', async () => {
    const clock = new ManualClock(Date.now());
    const one = pool(clock);
    const two = pool(clock);
    await one.retireSession('shop.example', A);
    // Another worker of the fleet does not burn the same identity on that site, and other sites keep it.
    expect(await picks(two, 'residential', 'shop.example', 4)).toEqual(new Set([B]));
    expect(await picks(two, 'residential', 'news.example', 4)).toEqual(new Set([A, B]));
    clock.advance(600_001);
    expect(await picks(two, 'residential', 'shop.example', 4)).toEqual(new Set([A, B]));
  });

  it('gives each site its own sticky session, shared by the fleet, and a new one after a block', async () => {
    const one = pool(undefined, true, ['s1', 's2', 's3']);
    const two = pool(undefined, true, ['t1', 't2']);
    const first = (await one.pick('mobile', new Set(), 'shop.example'))!.proxyUrl!;
    expect(first).toBe('http://customer-acme-session-s1:s3cret@gw.example:7000');
    // The other worker takes the same session for the site (it keeps the site's clearance), another for another site.
    expect((await two.pick('mobile', new Set(), 'shop.example'))!.proxyUrl).toBe(first);
    expect((await two.pick('mobile', new Set(), 'news.example'))!.proxyUrl).toBe('http://customer-acme-session-t2:s3cret@gw.example:7000');
    await one.retireSession('shop.example', first);
    const next = (await two.pick('mobile', new Set(), 'shop.example'))!.proxyUrl!;
    expect(next).not.toBe(first);
    expect(next).toMatch(/^http:\/\/customer-acme-session-[a-z0-9]+:s3cret@gw\.example:7000$/);
  });

  it("counts a site's refusals of a tier's exits fleet-wide, and knows when the tier has no other exit for it", async () => {
    const clock = new ManualClock(Date.now());
    const one = pool(clock);
    const two = pool(clock);
    expect(await one.noteBlock('bank.example', 'residential')).toBe(1);
    expect(await two.noteBlock('bank.example', 'residential')).toBe(2);
    expect(await two.noteBlock('other.example', 'residential')).toBe(1);
    await one.retireSession('bank.example', A);
    expect(await two.hasOtherExit('residential', 'bank.example', A)).toBe(true);
    await two.retireSession('bank.example', B);
    expect(await one.hasOtherExit('residential', 'bank.example', B)).toBe(false);
    // A sticky gateway's next session is another identity.
    expect(await one.hasOtherExit('mobile', 'bank.example', 'http://customer-acme-session-z9:s3cret@gw.example:7000')).toBe(true);
    clock.advance(600_001);
    expect(await one.noteBlock('bank.example', 'residential')).toBe(1);
  });

  it("loses no worker's refusal when many record one at the same moment: each is told its own count", async () => {
    // Before, each worker read the fleet's count and wrote it back plus one: workers recording together all read the
    // same count, all were told 1, and the site's second refused exit did not climb the tier.
    const clock = new ManualClock(Date.now());
    const clients = Array.from({ length: 4 }, () => new Redis(REDIS_URL));
    try {
      const workers = Array.from({ length: 24 }, (_, i) => new ExitPool(TIERS, { unhealthyMs: 60_000, sessionRetireMs: 600_000, clock, shared: { redis: clients[i % clients.length]!, prefix } }));
      const counts = await Promise.all(workers.map((w) => w.noteBlock('crowd.example', 'residential')));
      expect([...counts].sort((a, b) => a - b)).toEqual(Array.from({ length: 24 }, (_, i) => i + 1));
      expect(await workers[0]!.noteBlock('crowd.example', 'residential')).toBe(25);
    } finally {
      for (const c of clients) c.disconnect();
    }
  });

  it('keeps credentials out of Redis keys and values', async () => {
    const keys = await redis.keys(`${prefix}:*`);
    expect(keys.length).toBeGreaterThan(0);
    const values = await Promise.all(keys.map((k) => redis.get(k)));
    for (const secret of ['ua', 'pa', 's3cret', 'acme', 'a.example', 'gw.example']) {
      expect(keys.join(' ').replace(prefix, '')).not.toContain(secret);
      expect(values.join(' ')).not.toContain(secret);
    }
  });

  it('remembers a bounded number of sites, the most recently used: a worker meeting sites without end does not grow without end', async () => {
    // Before, a sticky session and a cookie jar per site stayed in memory for the life of the worker.
    const ids = Array.from({ length: SITES_REMEMBERED + 3 }, (_, i) => `id${i}`);
    const alone = pool(new ManualClock(Date.now()), false, ids);
    const first = (await alone.pick('mobile', new Set(), 'site-0.example'))!.proxyUrl!;
    expect(first).toContain('session-id0:');
    // Still in use: picking it again keeps it the most recent.
    for (let i = 1; i <= SITES_REMEMBERED; i++) {
      await alone.pick('mobile', new Set(), `site-${i}.example`);
      if (i === SITES_REMEMBERED / 2) expect((await alone.pick('mobile', new Set(), 'site-0.example'))!.proxyUrl).toBe(first);
    }
    expect((await alone.pick('mobile', new Set(), 'site-0.example'))!.proxyUrl).toBe(first);
    // site-1 was the least recently used: forgotten, it gets a new session.
    expect((await alone.pick('mobile', new Set(), 'site-1.example'))!.proxyUrl).not.toContain('session-id1:');

    const clock = new ManualClock(Date.now());
    const jars = new SessionJars({ clock });
    await jars.remember('site-0.example', A, 'clearance=ok; Path=/', 'https://site-0.example/');
    for (let i = 1; i <= LOCAL_JARS_KEPT; i++) await jars.remember(`site-${i}.example`, A, 'c=1; Path=/', `https://site-${i}.example/`);
    expect(await jars.cookieHeader(`site-${LOCAL_JARS_KEPT}.example`, A, `https://site-${LOCAL_JARS_KEPT}.example/`)).toBe('c=1');
    expect(await jars.cookieHeader('site-0.example', A, 'https://site-0.example/')).toBeUndefined();
  });

  it('works on its own without Redis: retirement and health are this worker\'s', async () => {
    const clock = new ManualClock(Date.now());
    const alone = pool(clock, false);
    await alone.markUnhealthy(B, 'proxy_unavailable');
    expect(await picks(alone, 'residential', 'news.example', 3)).toEqual(new Set([A]));
    await alone.markUnhealthy(A, 'proxy_unavailable');
    expect(await alone.pick('residential', new Set(), 'news.example')).toBeNull();
  });

  it('uses a retired identity again rather than none when the site refused every one of the tier', async () => {
    const p = pool(new ManualClock(Date.now()), false);
    await p.retireSession('shop.example', A);
    await p.retireSession('shop.example', B);
    expect(await picks(p, 'residential', 'shop.example', 4)).toEqual(new Set([A, B]));
  });
});
