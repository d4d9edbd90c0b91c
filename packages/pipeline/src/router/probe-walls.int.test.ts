import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock, DAY_MS } from '@crawler/core';
import { createRedisConnection, closeRedisConnection, deleteRedisPrefix } from '@crawler/queue';
import { ProbeWalls } from './probe-walls.js';

const redis = createRedisConnection(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'producer');
const prefix = `{crawler_test_pipeline_walls_${process.pid}}`;

afterAll(async () => {
  await deleteRedisPrefix(redis, prefix);
  await closeRedisConnection(redis);
});

describe('ProbeWalls shared through Redis', () => {
  it('lets every router of the fleet see a wall one router\'s probe met, for the memory\'s time only', async () => {
    const clock = new ManualClock(Date.parse('2026-11-24T00:00:00Z'));
    const a = new ProbeWalls(600_000, clock, { redis, prefix });
    const b = new ProbeWalls(600_000, clock, { redis, prefix });
    expect(await b.recent('walled.test')).toBeNull();
    await a.record('walled.test', 'playwright_stealth', 'blocked_captcha');
    expect(await b.recent('walled.test')).toMatchObject({ fetcher: 'playwright_stealth', reason: 'blocked_captcha', atMs: expect.any(Number) });
    // The key expires with the memory in real time...
    const ttl = await redis.pttl(`${prefix}:probe-wall:walled.test`);
    expect(ttl).toBeGreaterThan(590_000);
    expect(ttl).toBeLessThanOrEqual(600_000);
    // ...and a jump of the injected clock (a simulation) expires it for every router, shared or cached.
    clock.advance(DAY_MS);
    expect(await b.recent('walled.test')).toBeNull();
    expect(await new ProbeWalls(600_000, clock, { redis, prefix }).recent('walled.test')).toBeNull();
  });

  it('ignores a value it did not write, and writes nothing when off', async () => {
    const clock = new ManualClock(Date.parse('2026-11-24T00:00:00Z'));
    await redis.set(`${prefix}:probe-wall:junk.test`, 'not json', 'PX', 60_000);
    await redis.set(`${prefix}:probe-wall:odd.test`, JSON.stringify({ fetcher: 42, reason: 'x', clockAt: 0 }), 'PX', 60_000);
    const walls = new ProbeWalls(600_000, clock, { redis, prefix });
    expect(await walls.recent('junk.test')).toBeNull();
    expect(await walls.recent('odd.test')).toBeNull();
    const off = new ProbeWalls(0, clock, { redis, prefix });
    await off.record('off.test', 'playwright_stealth', 'blocked_403');
    expect(await redis.exists(`${prefix}:probe-wall:off.test`)).toBe(0);
    expect(await off.recent('off.test')).toBeNull();
  });

  it('still answers from its own memory when Redis fails, and does not throw', async () => {
    const clock = new ManualClock(Date.parse('2026-11-24T00:00:00Z'));
    const broken = { get: async () => { throw new Error('down'); }, set: async () => { throw new Error('down'); } } as never;
    const walls = new ProbeWalls(600_000, clock, { redis: broken, prefix });
    await walls.record('walled.test', 'playwright_stealth', 'blocked_403');
    expect(await walls.recent('walled.test')).toMatchObject({ fetcher: 'playwright_stealth', reason: 'blocked_403' });
    expect(await walls.recent('other.test')).toBeNull();
  });
});
