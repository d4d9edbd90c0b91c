import { afterAll, describe, expect, it } from 'vitest';
import { createRedisConnection, closeRedisConnection, deleteRedisPrefix } from '@crawler/queue';
import { redisInlineClaims } from './inline-fetch.js';

const redis = createRedisConnection(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'producer');
const prefix = `{crawler_test_pipeline_inline_${process.pid}}`;

afterAll(async () => {
  await deleteRedisPrefix(redis, prefix);
  await closeRedisConnection(redis);
});

describe('inline fetch claims in Redis', () => {
  it('gives a fetch job id to one route job of the fleet, again to that same job, and again once its owner gave it back', async () => {
    const a = redisInlineClaims(redis, () => prefix, 60_000);
    const b = redisInlineClaims(redis, () => prefix, 60_000);
    expect(await a.claim('link-1.a0.simple_http', 'route-1', 'https://a.example/1')).toBe(true);
    expect(await b.claim('link-1.a0.simple_http', 'route-2', 'https://a.example/1')).toBe(false);
    // The owner's own retry (its route job run again after a crash) takes it back.
    expect(await b.claim('link-1.a0.simple_http', 'route-1', 'https://a.example/1')).toBe(true);
    const ttl = await redis.pttl(`${prefix}:inline:link-1.a0.simple_http`);
    expect(ttl).toBeGreaterThan(50_000);
    await a.release('link-1.a0.simple_http', 'route-1', 'https://a.example/1');
    expect(await b.claim('link-1.a0.simple_http', 'route-2', 'https://a.example/1')).toBe(true);
  });
});
