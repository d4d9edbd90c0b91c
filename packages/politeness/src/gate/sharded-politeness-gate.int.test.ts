import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '@crawler/core';
import type { Redis } from 'ioredis';
import { deleteRedisPrefix, shardOfDomain } from '@crawler/queue';
import { RedisPolitenessGate } from './redis-politeness-gate.js';
import { ShardedPolitenessGate } from './sharded-politeness-gate.js';
import { createRedis, uniquePrefix } from '../__fixtures__/redis-test-utils.js';

const SHARDS = 3;
const base = uniquePrefix('sharded').replace(/\}:$/, '');
const prefixes = Array.from({ length: SHARDS }, (_, i) => `${base}_s${i}}:polite:`);
const clock = new ManualClock(Date.UTC(2026, 0, 1));
let redis: Redis;

/** One process's view: a gate per shard over the same keys every other process uses. */
function fleetMember(): ShardedPolitenessGate {
  const gates = prefixes.map((prefix) => new RedisPolitenessGate({ redis, prefix, clock, defaults: { maxConcurrency: 1, minDelayMs: 0 } }));
  return new ShardedPolitenessGate({ gates, shardOf: (d) => shardOfDomain(d, SHARDS) });
}

beforeAll(() => {
  redis = createRedis();
});
afterAll(async () => {
  for (const p of prefixes) await deleteRedisPrefix(redis, p.replace(/polite:$/, ''));
  await redis.quit();
});

describe('ShardedPolitenessGate', () => {
  it("keeps a domain's limit exact across processes: its state lives in one shard, the one of its jobs", async () => {
    const [a, b] = [fleetMember(), fleetMember()];
    const domains = Array.from({ length: 12 }, (_, i) => `shop${i}.com`);
    const held = [];
    for (const d of domains) {
      const first = await a.acquire(d);
      expect(first.granted).toBe(true);
      if (first.granted) held.push(first.permit);
      // Another process asking for the same domain is refused while the slot is held.
      expect((await b.acquire(d)).granted).toBe(false);
      const shard = shardOfDomain(d, SHARDS);
      // Other hosts of the same site keep their own limits, in the same shard (and slot).
      expect(shardOfDomain(`cdn.${d}`, SHARDS)).toBe(shard);
      expect(await redis.exists(`${prefixes[shard]}slots:${d}`)).toBe(1);
      for (const other of [0, 1, 2].filter((s) => s !== shard)) expect(await redis.exists(`${prefixes[other]}slots:${d}`)).toBe(0);
    }
    expect(new Set(domains.map((d) => shardOfDomain(d, SHARDS))).size).toBe(SHARDS);
    for (const p of held) await p.release();
    expect((await b.acquire(domains[0]!)).granted).toBe(true);
  });

  it('pauses a domain fleet-wide through its shard', async () => {
    const [a, b] = [fleetMember(), fleetMember()];
    const until = clock.now().getTime() + 60_000;
    await a.pauseDomain('blocked.example.org', until, 'rate_limited');
    expect(await b.domainPausedUntil('blocked.example.org')).toBe(until);
    const d = await b.acquire('blocked.example.org');
    expect(d.granted ? 'granted' : d.reason).toBe('paused');
  });
});
