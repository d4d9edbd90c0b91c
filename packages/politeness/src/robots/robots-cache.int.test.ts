import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { CrawlerError, ManualClock } from '@crawler/core';
import { robotsTxt, startTestServer, status, type TestServer } from '@crawler/testkit';
import { RedisPolitenessGate } from '../gate/redis-politeness-gate.js';
import { RobotsCache, type RobotsCacheOptions } from './robots-cache.js';
import type { RobotsFetchResult } from './robots-rules.js';
import { createRedis, uniquePrefix } from '../__fixtures__/redis-test-utils.js';
import { deleteRedisPrefix } from '@crawler/queue';

const prefix = uniquePrefix('robots');
const clock = new ManualClock(Date.UTC(2026, 0, 1));
let redis: Redis;
let site: TestServer;
let noRobots: TestServer;
let broken: TestServer;

/** What the pipeline injects: a plain HTTP fetch of /robots.txt. */
async function httpFetchRobots(origin: string): Promise<RobotsFetchResult | null> {
  try {
    const res = await fetch(`${origin}/robots.txt`);
    return { status: res.status, body: await res.text() };
  } catch {
    return null;
  }
}

function cache(options: Partial<RobotsCacheOptions> = {}): RobotsCache {
  return new RobotsCache({ redis, prefix, clock, userAgent: 'CrawlerBot', fetchRobots: httpFetchRobots, ...options });
}

beforeAll(async () => {
  redis = createRedis();
  site = await startTestServer({ '/robots.txt': robotsTxt('User-agent: *\nDisallow: /admin\nCrawl-delay: 3\n'), '/*': status(200) });
  noRobots = await startTestServer({ '/*': status(200) }, { host: '127.0.0.2' });
  broken = await startTestServer({ '/robots.txt': status(503) }, { host: '127.0.0.3' });
});

afterAll(async () => {
  await Promise.all([site?.close(), noRobots?.close(), broken?.close()]);
  await deleteRedisPrefix(redis, prefix);
  await redis.quit();
});

describe('RobotsCache against real Redis and a local site', () => {
  it('disallows with a reason, allows the rest, and reports Crawl-delay', async () => {
    const robots = cache();
    const denied = await robots.check(site.url('/admin/users'));
    expect(denied.allowed).toBe(false);
    expect(denied.reason).toMatch(/disallows \/admin\/users for user-agent "CrawlerBot" \(line 2\)/);
    expect(await robots.check(site.url('/blog/post'))).toEqual({ allowed: true, crawlDelayMs: 3000 });
  });

  it('fetches robots.txt once for many checks, across workers sharing Redis', async () => {
    site.resetHits();
    const p = uniquePrefix('robots_once');
    const a = cache({ prefix: p });
    const b = cache({ prefix: p });
    // Both "workers" ask at the same moment: the lock makes one fetch and the other wait for it.
    await Promise.all([...Array.from({ length: 20 }, (_, i) => a.check(site.url(`/a/${i}`))), ...Array.from({ length: 20 }, (_, i) => b.check(site.url(`/b/${i}`)))]);
    for (let i = 0; i < 30; i++) await b.check(site.url(`/c/${i}`));
    const third = cache({ prefix: p });
    expect((await third.check(site.url('/admin'))).allowed).toBe(false);
    expect(site.hits('/robots.txt')).toBe(1);
    await deleteRedisPrefix(redis, p);
  });

  it('fetches again once the cached copy expires', async () => {
    const p = uniquePrefix('robots_ttl');
    let fetches = 0;
    const robots = cache({ prefix: p, ttlMs: 60_000, fetchRobots: async () => (fetches++, { status: 200, body: 'User-agent: *\nDisallow: /x' }) });
    await robots.check('http://ttl.test/a');
    clock.advance(59_999);
    await robots.check('http://ttl.test/b');
    expect(fetches).toBe(1);
    clock.advance(1);
    await robots.check('http://ttl.test/c');
    expect(fetches).toBe(2);
    await deleteRedisPrefix(redis, p);
  });

  it('lets a refused origin (SSRF guard) through instead of caching it as unreachable', async () => {
    let calls = 0;
    const refused = cache({
      prefix: uniquePrefix('robots_refused'),
      fetchRobots: async () => {
        calls += 1;
        throw new CrawlerError('blocked_address', '10.0.0.5 is a private address');
      },
    });
    await expect(refused.check('http://10.0.0.5/page')).rejects.toMatchObject({ code: 'blocked_address' });
    await expect(refused.check('http://10.0.0.5/other')).rejects.toMatchObject({ code: 'blocked_address' });
    expect(calls).toBe(2);
  });

  it('allows everything when robots.txt is missing (404)', async () => {
    expect(await cache().check(noRobots.url('/admin'))).toEqual({ allowed: true, crawlDelayMs: null });
  });

  it('disallows everything while robots.txt answers 5xx, and asks again sooner', async () => {
    broken.resetHits();
    const robots = cache({ unreachableTtlMs: 10_000 });
    const verdict = await robots.check(broken.url('/page'));
    expect(verdict.allowed).toBe(false);
    expect(verdict.reason).toContain('answered 503');
    clock.advance(10_000);
    await robots.check(broken.url('/page'));
    expect(broken.hits('/robots.txt')).toBe(2);
  });

  it('treats an unreachable site (fetch rejects) as disallow-all instead of crashing', async () => {
    const robots = cache({ fetchRobots: async () => Promise.reject(new Error('ECONNREFUSED')) });
    const verdict = await robots.check('http://down.test/x');
    expect(verdict.allowed).toBe(false);
    expect(verdict.reason).toContain('unreachable');
  });

  it('reads an origin only a browser can read with the browser once, and serves that read to the fleet like a plain one', async () => {
    const p = uniquePrefix('robots_browser');
    let plain = 0;
    let browser = 0;
    const options = { prefix: p, fetchRobots: async () => (plain++, { browser: { fetcher: 'playwright', reason: 'wrong_tool: bare LF' } }) };
    const router = cache(options);
    const worker = cache(options);
    expect(await router.check('http://walled.test/a')).toMatchObject({ allowed: false, browser: { fetcher: 'playwright' } });
    const read = async () => (browser++, { status: 200, body: 'User-agent: *\nDisallow: /private\n' });
    const [a, b] = await Promise.all([worker.checkInBrowser('http://walled.test/a', read), worker.checkInBrowser('http://walled.test/private/x', read)]);
    expect(a).toEqual({ allowed: true, crawlDelayMs: null });
    expect(b.allowed).toBe(false);
    // Cached as a plain read is: another process reads the rules without fetching, for the full ttl.
    expect((await cache(options).check('http://walled.test/private/y')).reason).toMatch(/disallows \/private\/y/);
    clock.advance(3_600_000);
    expect((await cache(options).check('http://walled.test/b')).allowed).toBe(true);
    expect([plain, browser]).toEqual([1, 1]);
    // An origin plain HTTP reads is never read by the browser.
    expect(await cache({ prefix: p }).checkInBrowser(site.url('/blog'), async () => (browser++, null))).toEqual({ allowed: true, crawlDelayMs: 3000 });
    expect(browser).toBe(1);
    await deleteRedisPrefix(redis, p);
  });

  it('applies Crawl-delay to the gate, once per fetch', async () => {
    const p = uniquePrefix('robots_delay');
    const gate = new RedisPolitenessGate({ redis, prefix: p, clock, defaults: { maxConcurrency: 5, minDelayMs: 500 } });
    const calls: Array<[string, number, number]> = [];
    const robots = cache({
      prefix: p,
      ttlMs: 3_600_000,
      onCrawlDelay: async (domain, delayMs, ttlMs) => {
        calls.push([domain, delayMs, ttlMs]);
        await gate.raiseMinDelay(domain, delayMs, ttlMs);
      },
    });
    await robots.check(site.url('/one'));
    await robots.check(site.url('/two'));
    expect(calls).toEqual([[site.host, 3000, 3_600_000]]);
    const first = await gate.acquire(site.host);
    expect(first.granted).toBe(true);
    expect(await gate.acquire(site.host)).toEqual({ granted: false, reason: 'delay', retryInMs: 3000 });
    await deleteRedisPrefix(redis, p);
  });

  it('reads options passed as undefined as their defaults', async () => {
    const robots = cache({ ttlMs: undefined, prefix: undefined, maxCrawlDelayMs: undefined });
    expect(await robots.check(site.url('/blog'))).toEqual({ allowed: true, crawlDelayMs: 3000 });
    await deleteRedisPrefix(redis, '{crawler:robots}:rules:' + site.origin);
  });

  it('fetches nothing and allows everything when switched off', async () => {
    let fetches = 0;
    const robots = cache({ enabled: false, fetchRobots: async () => (fetches++, null) });
    expect(await robots.check('http://off.test/admin')).toEqual({ allowed: true, crawlDelayMs: null });
    expect(fetches).toBe(0);
  });

  it('rejects URLs it cannot apply robots.txt to with a typed error', async () => {
    await expect(cache().check('not a url')).rejects.toMatchObject({ code: 'invalid_url' });
    await expect(cache().check('ftp://files.test/a')).rejects.toBeInstanceOf(CrawlerError);
  });

  it('keeps a long robots.txt compressed in Redis, and still reads a cache entry written as plain JSON', async () => {
    // A fleet over millions of origins keeps each one's robots.txt for a day: the file's bytes were most of it.
    const lines = Array.from({ length: 600 }, (_, i) => `Disallow: /archive/${2000 + (i % 26)}/section-${i}/*.php?print=1`);
    const body = `User-agent: *\n${lines.join('\n')}\nAllow: /\n`;
    const p = uniquePrefix('robots_size');
    const fetchRobots = async () => ({ status: 200, body });
    const origin = 'http://big-robots.test';
    expect((await cache({ prefix: p, fetchRobots }).check(`${origin}/archive/2001/section-1/a.php?print=1`)).allowed).toBe(false);
    const [key] = await redis.keys(`${p}rules:*`);
    const bytes = Number(await redis.memory('USAGE', key!));
    expect(bytes).toBeLessThan(body.length / 4);
    // Another worker (a fresh cache: nothing in memory) reads it back from Redis, fetching nothing.
    const again = cache({ prefix: p, fetchRobots: async () => { throw new Error('fetched again'); } });
    expect((await again.check(`${origin}/archive/2001/section-1/a.php?print=1`)).allowed).toBe(false);
    expect((await again.check(`${origin}/news`)).allowed).toBe(true);
    // An entry an older worker wrote (plain JSON) is read as it is.
    const plain = { kind: 'parsed', status: 200, body: 'User-agent: *\nDisallow: /old\n', expiresAtMs: clock.now().getTime() + 3600_000 };
    await redis.set(`${p}rules:http://old-entry.test`, JSON.stringify(plain), 'PX', 3600_000);
    const reader = cache({ prefix: p, fetchRobots: async () => { throw new Error('fetched again'); } });
    expect((await reader.check('http://old-entry.test/old/page')).allowed).toBe(false);
  });
});
