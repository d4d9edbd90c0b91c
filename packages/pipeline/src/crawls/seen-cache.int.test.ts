import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { RedisSeenCache } from './seen-cache.js';
import { deleteRedisPrefix } from '@crawler/queue';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const prefix = `{crawler_test_seen_${process.pid}}`;

afterAll(async () => {
  await deleteRedisPrefix(redis, prefix);
  redis.disconnect();
});

describe('RedisSeenCache', () => {
  it('knows only what it was told, per crawl, and stops growing at its cap', async () => {
    const cache = new RedisSeenCache({ redis, prefix, maxPerCrawl: 3 });
    expect(await cache.known('c1', ['https://a.test/x', 'https://a.test/y'])).toEqual([false, false]);
    await cache.remember('c1', ['https://a.test/x']);
    expect(await cache.known('c1', ['https://a.test/x', 'https://a.test/y'])).toEqual([true, false]);
    expect(await cache.known('c2', ['https://a.test/x'])).toEqual([false]);
    await cache.remember('c1', ['https://a.test/1', 'https://a.test/2', 'https://a.test/3']);
    await cache.remember('c1', ['https://a.test/4']);
    expect(await redis.scard(`${prefix}:crawl-seen:c1`)).toBe(4);
    expect(await cache.known('c1', ['https://a.test/4'])).toEqual([false]);
    expect(await redis.pttl(`${prefix}:crawl-seen:c1`)).toBeGreaterThan(0);
  });

  it('costs the same per URL whatever the URL length', async () => {
    const cache = new RedisSeenCache({ redis, prefix });
    const short = Array.from({ length: 2000 }, (_, i) => `https://a.test/${i}`);
    const long = Array.from({ length: 2000 }, (_, i) => `https://a.test/${'x'.repeat(500)}/${i}`);
    await cache.remember('short', short);
    await cache.remember('long', long);
    const a = Number(await redis.memory('USAGE', `${prefix}:crawl-seen:short`));
    const b = Number(await redis.memory('USAGE', `${prefix}:crawl-seen:long`));
    expect(a).toBe(b);
    expect(a / 2000).toBeLessThan(100);
  });

  it('is gone an hour after the crawl last admitted a page, not kept for days after the crawl ended', async () => {
    // A crawl that is done or cancelled admits nothing more: its set would otherwise hold ~55 bytes per page it saw.
    const cache = new RedisSeenCache({ redis, prefix });
    await cache.remember('ended', ['https://a.test/1', 'https://a.test/2']);
    const ttl = await redis.pttl(`${prefix}:crawl-seen:ended`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(3_600_000);
  });
});
