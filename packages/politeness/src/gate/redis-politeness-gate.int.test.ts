import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '@crawler/core';
import type { Redis } from 'ioredis';
import { RedisPolitenessGate, type RedisPolitenessGateOptions } from './redis-politeness-gate.js';
import { createRedis, uniquePrefix } from '../__fixtures__/redis-test-utils.js';
import { deleteRedisPrefix } from '@crawler/queue';

let redis: Redis;
const prefix = uniquePrefix('gate');
const clock = new ManualClock(Date.UTC(2026, 0, 1));
let n = 0;
/** A fresh domain per test, so tests in this file never share state. */
const domain = () => `site${++n}.test`;

function gate(options: Partial<RedisPolitenessGateOptions> = {}): RedisPolitenessGate {
  return new RedisPolitenessGate({ redis, prefix, clock, defaults: { maxConcurrency: 2, minDelayMs: 1000 }, ...options });
}

async function grant(g: RedisPolitenessGate, d: string) {
  const decision = await g.acquire(d);
  if (!decision.granted) throw new Error(`expected a grant for ${d}, got ${decision.reason} ${decision.retryInMs}`);
  return decision.permit;
}

beforeAll(() => {
  redis = createRedis();
});
afterAll(async () => {
  await deleteRedisPrefix(redis, prefix);
  await redis.quit();
});

describe('RedisPolitenessGate with an injected clock', () => {
  it('spaces request starts by the minimum delay and says exactly how long to wait', async () => {
    const g = gate();
    const d = domain();
    const first = await grant(g, d);
    await first.release();
    expect(await g.acquire(d)).toEqual({ granted: false, reason: 'delay', retryInMs: 1000 });
    clock.advance(999);
    expect(await g.acquire(d)).toEqual({ granted: false, reason: 'delay', retryInMs: 1 });
    clock.advance(1);
    expect((await g.acquire(d)).granted).toBe(true);
  });

  it('holds concurrency to the limit until a slot is released', async () => {
    const g = gate({ defaults: { maxConcurrency: 2, minDelayMs: 0 }, concurrencyRetryMs: 300 });
    const d = domain();
    const a = await grant(g, d);
    await grant(g, d);
    expect(await g.acquire(d)).toEqual({ granted: false, reason: 'concurrency', retryInMs: 300 });
    expect(await g.heldSlots(d)).toBe(2);
    await a.release();
    await a.release(); // idempotent: must not free someone else's slot
    expect(await g.heldSlots(d)).toBe(1);
    expect((await g.acquire(d)).granted).toBe(true);
  });

  it('expects a busy slot back after the domain\'s average hold time, and polls once the holder is overdue', async () => {
    const g = gate({ defaults: { maxConcurrency: 1, minDelayMs: 0 }, concurrencyRetryMs: 50 });
    const d = domain();
    const first = await grant(g, d);
    clock.advance(400);
    await first.release(); // this domain's requests take ~400 ms
    const second = await grant(g, d);
    clock.advance(100);
    expect(await g.acquire(d)).toEqual({ granted: false, reason: 'concurrency', retryInMs: 300 });
    clock.advance(350); // slower than usual: no estimate left, poll
    expect(await g.acquire(d)).toEqual({ granted: false, reason: 'concurrency', retryInMs: 50 });
    await second.release(); // held 450: the average moves to 0.8 * 400 + 0.2 * 450 = 410
    await grant(g, d);
    expect(await g.acquire(d)).toEqual({ granted: false, reason: 'concurrency', retryInMs: 410 });
  });

  it('gives queued waiters of a busy domain one turn each, a minimum delay apart, instead of one free start for all', async () => {
    const g = gate({ defaults: { maxConcurrency: 2, minDelayMs: 1000 } });
    const d = domain();
    await (await grant(g, d)).release();
    const hints = [];
    for (let i = 0; i < 5; i++) hints.push(await g.acquire(d, { queued: true }));
    expect(hints).toEqual([1000, 2000, 3000, 4000, 5000].map((retryInMs) => ({ granted: false, reason: 'delay', retryInMs })));
    // A caller that decides again on its own (the router's probe) is told the next free start, and takes no turn.
    expect(await g.acquire(d)).toEqual({ granted: false, reason: 'delay', retryInMs: 1000 });
    clock.advance(1000);
    await (await grant(g, d)).release(); // the first waiter's turn
    expect(await g.acquire(d, { queued: true })).toEqual({ granted: false, reason: 'delay', retryInMs: 5000 });
  });

  it('spaces the turns of a slow domain by its hold time over its concurrency, and starts them afresh once its waiters are gone', async () => {
    const g = gate({ defaults: { maxConcurrency: 2, minDelayMs: 0 }, concurrencyRetryMs: 50 });
    const d = domain();
    const first = await grant(g, d);
    clock.advance(4000);
    await first.release(); // this domain's responses take 4 s
    await grant(g, d);
    await grant(g, d);
    const hints = [];
    for (let i = 0; i < 3; i++) hints.push(((await g.acquire(d, { queued: true })) as { retryInMs: number }).retryInMs);
    expect(hints).toEqual([4000, 6000, 8000]);
    // Nobody came for their turn and no request started for ten spacings: a new waiter is not put behind them.
    clock.advance(30_000);
    expect(await g.acquire(d, { queued: true })).toEqual({ granted: false, reason: 'concurrency', retryInMs: 50 });
  });

  it('gives queued waiters of a paused domain turns from the pause\'s end', async () => {
    const g = gate({ defaults: { maxConcurrency: 2, minDelayMs: 1000 } });
    const d = domain();
    await g.pauseDomainFor(d, 5000, 'rate_limited');
    const hints = [];
    for (let i = 0; i < 3; i++) hints.push(await g.acquire(d, { queued: true }));
    expect(hints).toEqual([5000, 6000, 7000].map((retryInMs) => ({ granted: false, reason: 'paused', retryInMs })));
  });

  it('frees a slot whose holder stopped heartbeating once its ttl passes, and says so in the retry hint', async () => {
    const g = gate({ defaults: { maxConcurrency: 1, minDelayMs: 0 }, slotTtlMs: 5000, concurrencyRetryMs: 60_000 });
    const d = domain();
    await grant(g, d); // never released: a crashed worker
    expect(await g.acquire(d)).toEqual({ granted: false, reason: 'concurrency', retryInMs: 5000 });
    clock.advance(5000);
    expect((await g.acquire(d)).granted).toBe(true);
  });

  it('grants nothing on a paused domain until the pause ends, and leaves other domains alone', async () => {
    const g = gate({ defaults: { maxConcurrency: 5, minDelayMs: 0 } });
    const blocked = domain();
    const other = domain();
    const until = clock.now().getTime() + 30_000;
    await g.pauseDomain(blocked, until, 'blocked_403');
    expect(await g.acquire(blocked)).toEqual({ granted: false, reason: 'paused', retryInMs: 30_000 });
    expect(await g.domainPausedUntil(blocked)).toBe(until);
    expect(await g.domainPause(blocked)).toEqual({ untilMs: until, reason: 'blocked_403' });
    expect((await g.acquire(other)).granted).toBe(true);
    expect(await g.domainPausedUntil(other)).toBeNull();
    clock.advance(29_999);
    expect((await g.acquire(blocked)).granted).toBe(false);
    clock.advance(1);
    expect((await g.acquire(blocked)).granted).toBe(true);
    expect(await g.domainPausedUntil(blocked)).toBeNull();
  });

  it('only ever extends a pause', async () => {
    const g = gate();
    const d = domain();
    const now = clock.now().getTime();
    await g.pauseDomain(d, now + 60_000, 'blocked_captcha');
    await g.pauseDomain(d, now + 10_000, 'blocked_403');
    expect(await g.domainPause(d)).toEqual({ untilMs: now + 60_000, reason: 'blocked_captcha' });
    await g.pauseDomain(d, now + 90_000, 'rate_limited');
    expect(await g.domainPause(d)).toEqual({ untilMs: now + 90_000, reason: 'rate_limited' });
  });

  it('pauses for a duration in the gate\'s own time base, never shortening a longer pause', async () => {
    const g = gate();
    const d = domain();
    const now = clock.now().getTime();
    expect(await g.pauseDomainFor(d, 20_000, 'blocked_403')).toBe(now + 20_000);
    expect(await g.pauseDomainFor(d, 5_000, 'blocked_403')).toBe(now + 20_000);
    expect(await g.acquire(d)).toEqual({ granted: false, reason: 'paused', retryInMs: 20_000 });
    await expect(g.pauseDomainFor(d, 0, 'x')).rejects.toThrow(TypeError);
  });

  it('raises the minimum delay for a while (robots.txt Crawl-delay) without ever lowering the configured one', async () => {
    const g = gate({ defaults: { maxConcurrency: 5, minDelayMs: 1000 } });
    const d = domain();
    await g.raiseMinDelay(d, 4000, 60_000);
    await grant(g, d);
    expect(await g.acquire(d)).toEqual({ granted: false, reason: 'delay', retryInMs: 4000 });
    clock.advance(4000);
    await grant(g, d);
    await g.raiseMinDelay(d, 10, 60_000); // lower than configured: the configured 1000 still applies
    expect(await g.acquire(d)).toEqual({ granted: false, reason: 'delay', retryInMs: 1000 });
    await g.raiseMinDelay(d, 4000, 5000);
    clock.advance(5000); // the raise expired: back to 1000, which has passed
    expect((await g.acquire(d)).granted).toBe(true);
  });

  it('applies per-domain overrides over the defaults, case-insensitively', async () => {
    const d = domain();
    const g = gate({ overrides: { [d.toUpperCase()]: { maxConcurrency: 1, minDelayMs: 0 } } });
    expect(g.limitsFor(d)).toEqual({ maxConcurrency: 1, minDelayMs: 0 });
    await grant(g, d);
    expect(await g.acquire(d)).toMatchObject({ granted: false, reason: 'concurrency' });
    expect(g.limitsFor(domain())).toEqual({ maxConcurrency: 2, minDelayMs: 1000 });
  });

  it('rejects nonsensical limits at construction', () => {
    expect(() => gate({ defaults: { maxConcurrency: 0 } })).toThrow(/defaults.maxConcurrency/);
    expect(() => gate({ overrides: { 'a.test': { minDelayMs: -1 } } })).toThrow(/overrides\[a.test\].minDelayMs/);
    expect(() => gate({ slotTtlMs: 5 })).toThrow(/slotTtlMs/);
  });
});

describe('RedisPolitenessGate on Redis server time', () => {
  it('uses one clock for every instance: a second gate sees the first one\'s start', async () => {
    const a = new RedisPolitenessGate({ redis, prefix, defaults: { maxConcurrency: 5, minDelayMs: 60_000 } });
    const b = new RedisPolitenessGate({ redis, prefix, defaults: { maxConcurrency: 5, minDelayMs: 60_000 } });
    const d = domain();
    const permit = await grant(a, d);
    const denied = await b.acquire(d);
    expect(denied).toMatchObject({ granted: false, reason: 'delay' });
    expect(!denied.granted && denied.retryInMs).toBeGreaterThan(59_000);
    expect(!denied.granted && denied.retryInMs).toBeLessThanOrEqual(60_000);
    const [s] = await redis.time();
    expect(Math.abs(permit.grantedAtMs - Number(s) * 1000)).toBeLessThan(5_000);
    await permit.release();
  });

  it('keeps nothing of a domain more than an hour after its last request', async () => {
    // A fleet crawls millions of domains: what the gate knows of one it no longer fetches must not stay for a day.
    const g = new RedisPolitenessGate({ redis, prefix, defaults: { maxConcurrency: 2, minDelayMs: 1000 } });
    const d = domain();
    await (await grant(g, d)).release();
    const keys = (await redis.keys(`${prefix}*`)).filter((k) => k.endsWith(`:${d}`));
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      const ttl = await redis.pttl(key);
      expect(ttl, key).toBeGreaterThan(0);
      expect(ttl, key).toBeLessThanOrEqual(3_600_000 + 60_000);
    }
  });

  it('keeps a live holder\'s slot past its ttl by heartbeat', async () => {
    const g = new RedisPolitenessGate({ redis, prefix, defaults: { maxConcurrency: 1, minDelayMs: 0 }, slotTtlMs: 300, heartbeatMs: 50 });
    const d = domain();
    const permit = await grant(g, d);
    await new Promise((r) => setTimeout(r, 900));
    expect(await g.heldSlots(d)).toBe(1);
    expect(await g.acquire(d)).toMatchObject({ granted: false, reason: 'concurrency' });
    await permit.release();
    expect(await g.heldSlots(d)).toBe(0);
  });
});
