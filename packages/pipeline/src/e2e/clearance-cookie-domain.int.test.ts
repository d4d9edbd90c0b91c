/**
 * A wall's clearance set with `Domain=.example.com` on www.example.com is the domain's: the fleet's store hands it to
 * a context for shop.example.com too (no second solve there). A host-only clearance stays its host's, and a cookie
 * set on a public suffix is nobody's.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { Cookie } from 'playwright-core';
import { RedisClearanceStore } from '@crawler/fetchers';
import { deleteRedisPrefix } from '@crawler/queue';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const prefix = `{crawler_test_clearance_domain_${process.pid}}`;

afterAll(async () => {
  await deleteRedisPrefix(redis, prefix);
  redis.disconnect();
});

const HOUR_S = 3_600;
const cookie = (name: string, domain: string, expiresInS = HOUR_S): Cookie => ({
  name,
  value: `v-${name}`,
  domain,
  path: '/',
  expires: Math.floor(Date.now() / 1000) + expiresInS,
  httpOnly: true,
  secure: false,
  sameSite: 'Lax',
});
const names = (cookies: Cookie[]): string[] => cookies.map((c) => c.name).sort();

describe('RedisClearanceStore: clearance scoped by cookie domain', () => {
  it('a Domain cookie earned on www.example.com serves shop.example.com; host-only cookies stay on their host', async () => {
    const store = new RedisClearanceStore({ redis, prefix: `${prefix}:a` });
    // What Playwright reports for a context on www.example.com that passed a wall (site "example.com").
    await store.save('example.com', 'playwright', [
      cookie('cf_clearance', '.example.com'),
      cookie('apex_only', 'example.com'),
      cookie('www_only', 'www.example.com'),
      cookie('tracker', '.other.net'),
    ]);

    expect(names(await store.load('shop.example.com', 'playwright'))).toEqual(['cf_clearance']);
    expect(names(await store.load('a.b.example.com', 'playwright'))).toEqual(['cf_clearance']);
    expect(names(await store.load('example.com', 'playwright'))).toEqual(['apex_only', 'cf_clearance', 'www_only']);
    // Another flavour (another fetcher, another exit) has its own clearance.
    expect(await store.load('shop.example.com', 'playwright@exit-1')).toEqual([]);
    // Nor does a lookalike domain get it.
    expect(await store.load('notexample.com', 'playwright')).toEqual([]);
  });

  it('a save on one host keeps what another host of the domain saved under a shared scope', async () => {
    const store = new RedisClearanceStore({ redis, prefix: `${prefix}:b` });
    await store.save('example.com', 'playwright', [cookie('apex_only', 'example.com')]);
    await store.save('shop.example.com', 'playwright', [cookie('cf_clearance', '.example.com'), cookie('shop_only', 'shop.example.com')]);
    expect(names(await store.load('example.com', 'playwright'))).toEqual(['apex_only', 'cf_clearance']);
    expect(names(await store.load('shop.example.com', 'playwright'))).toEqual(['cf_clearance', 'shop_only']);
    expect(names(await store.load('blog.example.com', 'playwright'))).toEqual(['cf_clearance']);
    // A later solve's cookie replaces the earlier one of the same name, domain and path.
    const newer = { ...cookie('cf_clearance', '.example.com'), value: 'newer' };
    await store.save('blog.example.com', 'playwright', [newer]);
    const loaded = await store.load('shop.example.com', 'playwright');
    expect(loaded.filter((c) => c.name === 'cf_clearance').map((c) => c.value)).toEqual(['newer']);
  });

  it('refuses a Domain cookie set on a public suffix (private suffixes included)', async () => {
    const store = new RedisClearanceStore({ redis, prefix: `${prefix}:c` });
    await store.save('a.co.uk', 'playwright', [cookie('evil', '.co.uk'), cookie('ok', '.a.co.uk')]);
    await store.save('me.github.io', 'playwright', [cookie('evil', '.github.io'), cookie('mine', 'me.github.io')]);
    expect(names(await store.load('a.co.uk', 'playwright'))).toEqual(['ok']);
    expect(await store.load('b.co.uk', 'playwright')).toEqual([]);
    expect(names(await store.load('me.github.io', 'playwright'))).toEqual(['mine']);
    expect(await store.load('you.github.io', 'playwright')).toEqual([]);
    expect(await redis.exists(store.keyOf('co.uk', 'playwright'), store.keyOf('github.io', 'playwright'))).toBe(0);
  });

  it('still reads a clearance kept by the earlier per-site code, without handing out what the site is not sent', async () => {
    const store = new RedisClearanceStore({ redis, prefix: `${prefix}:d` });
    const old = [cookie('cf_clearance', 'example.com'), cookie('www_only', 'www.example.com'), cookie('sub', 'sub.example.com'), cookie('gone', '.example.com', -10)];
    await redis.set(store.keyOf('example.com', 'playwright'), JSON.stringify(old), 'PX', 60_000);
    expect(names(await store.load('example.com', 'playwright'))).toEqual(['cf_clearance', 'www_only']);
  });

  it('concurrent saves of different cookies under one scope all survive (the merge is atomic)', async () => {
    const store = new RedisClearanceStore({ redis, prefix: `${prefix}:e` });
    // As many workers saving at once as a fleet's browsers that passed the domain's wall together.
    const count = 40;
    await Promise.all(Array.from({ length: count }, (_, i) => store.save(`h${i}.example.com`, 'playwright', [cookie(`c${i}`, '.example.com')])));
    expect(names(await store.load('example.com', 'playwright'))).toEqual(Array.from({ length: count }, (_, i) => `c${i}`).sort());
    // The key lives as long as its last cookie (1 h), and no longer than the 24 h cap.
    const ttl = await redis.pttl(store.keyOf('example.com', 'playwright'));
    expect(ttl).toBeGreaterThan(3_500_000);
    expect(ttl).toBeLessThanOrEqual(3_600_000);
  });

  it('the merge keeps what the earlier code stored, drops what expired or belongs to another scope, and replaces a cookie saved again', async () => {
    const store = new RedisClearanceStore({ redis, prefix: `${prefix}:f` });
    const key = store.keyOf('example.com', 'playwright');
    const stored = [cookie('kept', '.example.com'), cookie('gone', '.example.com', -10), cookie('stray', '.other.net'), { ...cookie('cf', '.example.com'), value: 'old' }];
    await redis.set(key, JSON.stringify(stored), 'PX', 60_000);
    await store.save('www.example.com', 'playwright', [{ ...cookie('cf', '.example.com'), value: 'new' }, cookie('expires_now', '.example.com', 0)]);
    const jar = JSON.parse((await redis.get(key))!) as Cookie[];
    expect(names(jar)).toEqual(['cf', 'kept']);
    expect(jar.find((c) => c.name === 'cf')!.value).toBe('new');
    expect(jar.find((c) => c.name === 'kept')).toEqual(stored[0]);
    // A value this code did not write is replaced, not merged.
    await redis.set(key, 'not json', 'PX', 60_000);
    await store.save('www.example.com', 'playwright', [cookie('cf', '.example.com')]);
    expect(names(await store.load('example.com', 'playwright'))).toEqual(['cf']);
  });
});

describe('RedisClearanceStore: one claim on solving a wall per registrable domain', () => {
  const ttlMs = 60_000;

  it('sibling hosts share the claim; only its holder releases it', async () => {
    const store = new RedisClearanceStore({ redis, prefix: `${prefix}:g` });
    const release = await store.claimSolve('shop.example.com', 'playwright', ttlMs);
    expect(release).not.toBeNull();
    expect(await store.claimSolve('img.example.com', 'playwright', ttlMs)).toBeNull();
    expect(await store.claimSolve('example.com', 'playwright', ttlMs)).toBeNull();
    expect(await store.solving('img.example.com', 'playwright')).toBe(true);
    // Another flavour, and another registrable domain (a private suffix's sites are each their own), are not held.
    const other = await store.claimSolve('img.example.com', 'playwright@exit-1', ttlMs);
    expect(other).not.toBeNull();
    await other!();
    expect(await store.claimSolve('a.github.io', 'playwright', ttlMs)).not.toBeNull();
    expect(await store.claimSolve('b.github.io', 'playwright', ttlMs)).not.toBeNull();
    await release!();
    expect(await store.solving('img.example.com', 'playwright')).toBe(false);

    // A claim that outlived its TTL and was taken over is not its old holder's to release.
    const stale = (await store.claimSolve('shop.example.com', 'playwright', 50))!;
    await new Promise((r) => setTimeout(r, 120));
    const current = await store.claimSolve('img.example.com', 'playwright', ttlMs);
    expect(current).not.toBeNull();
    await stale();
    expect(await store.solving('shop.example.com', 'playwright')).toBe(true);
    await current!();
    expect(await store.solving('shop.example.com', 'playwright')).toBe(false);
  });

  it('excludes a worker of the earlier code, which claims per site, both ways', async () => {
    const store = new RedisClearanceStore({ redis, prefix: `${prefix}:h` });
    const legacyKey = (site: string) => `${prefix}:h:clearance-solving:{${site}}:playwright`;
    // An earlier worker solving shop.example.com: a new worker on that site waits for it, and holds nothing.
    await redis.set(legacyKey('shop.example.com'), 'old-worker', 'PX', ttlMs, 'NX');
    expect(await store.solving('shop.example.com', 'playwright')).toBe(true);
    expect(await store.claimSolve('shop.example.com', 'playwright', ttlMs)).toBeNull();
    expect(await store.solving('img.example.com', 'playwright')).toBe(false);
    await redis.del(legacyKey('shop.example.com'));
    // A new worker's claim holds the site's key of the earlier code too, so an earlier worker waits for it.
    const release = (await store.claimSolve('shop.example.com', 'playwright', ttlMs))!;
    expect(release).not.toBeNull();
    expect(await redis.set(legacyKey('shop.example.com'), 'old-worker', 'PX', ttlMs, 'NX')).toBeNull();
    expect(await redis.exists(legacyKey('example.com'))).toBe(1);
    await release();
    expect(await redis.exists(legacyKey('shop.example.com'), legacyKey('example.com'))).toBe(0);
  });
});
