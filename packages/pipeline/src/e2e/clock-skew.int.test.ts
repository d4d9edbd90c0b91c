/**
 * Workers whose clocks disagree with Redis (NTP off, a VM resumed from suspend) and with each other. Clocks are
 * injected: a ManualClock set some minutes off Redis TIME stands for a worker's skewed clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { ManualClock } from '@crawler/core';
import { RedisPolitenessGate } from '@crawler/politeness';
import { closeRedisConnection, createRedisConnection, deleteRedisPrefix } from '@crawler/queue';
import { REDIS_URL } from '@crawler/testkit';
import { createFetchProcessor, type FetchSettings } from '../fetch/fetch-processor.js';
import { createRouteProcessor } from '../router/route-processor.js';
import { FleetClock } from '../runtime/fleet-clock.js';
import { decideRoute, type RouteFacts } from '../router/route-decision.js';
import { fakeJob, makeHarness, response } from '../__fixtures__/fakes.js';

const PREFIX = `{crawler_test_clock_skew_${process.pid}}`;
const MIN = 60_000;
const settings: FetchSettings = { fetcherNames: ['simple_http', 'playwright', 'playwright_stealth'], maxAttempts: 4, pauseMaxMs: 24 * 3600_000, fetchTimeoutMs: 1000, fetchMaxBytes: 1 << 20 };

let redis: Redis;

async function redisNowMs(): Promise<number> {
  const [s, us] = await redis.time();
  return Number(s) * 1000 + Number(us) / 1000;
}

/** The fleet's gate as create-runtime builds it: no clock of its own, so it keeps time by Redis TIME. */
function fleetGate(name: string): RedisPolitenessGate {
  return new RedisPolitenessGate({ redis, prefix: `${PREFIX}:${name}:polite:` });
}

beforeAll(() => {
  redis = createRedisConnection(REDIS_URL, 'producer');
});

afterAll(async () => {
  await deleteRedisPrefix(redis, `${PREFIX}:`);
  await closeRedisConnection(redis);
});

describe('domain pauses with a skewed worker clock', () => {
  it.each([
    ['5 min fast', 5 * MIN],
    ['5 min slow', -5 * MIN],
    ['1 h fast', 60 * MIN],
  ])('a 429 with Retry-After: 60 from a worker %s pauses the site for 60 s of Redis time', async (_name, skewMs) => {
    const h = makeHarness();
    h.clock.set((await redisNowMs()) + skewMs);
    const gate = fleetGate(`fetch${skewMs}`);
    const link = h.links.add('https://ratelimit.example/a', { status: 'fetching' });
    h.script(response(link.url, { status: 429, headers: { 'retry-after': '60', 'content-type': 'text/plain' }, contentType: 'text/plain', text: 'slow down' }));
    const proc = createFetchProcessor({ ...h.common, gate, settings, enqueueRoute: h.enqueueRoute, fetchers: h.fetchers, probeStore: h.probeStore, outcomes: h.outcomes });
    await proc(fakeJob({ linkId: link.id, url: link.url, fetcher: 'simple_http', selectionSource: 'probe' }, 'fetch-simple_http'));
    const pause = await gate.domainPause('ratelimit.example');
    // Before: the worker's instant was stored, so the fleet's pause was 6 min (5 min fast), none (slow) or 61 min.
    expect(pause).not.toBeNull();
    const leftMs = pause!.untilMs - (await redisNowMs());
    expect(leftMs).toBeGreaterThan(50_000);
    expect(leftMs).toBeLessThanOrEqual(60_000);
    // The link's own wait is a duration too: the re-route job is delayed by the Retry-After, whatever the clock says.
    expect(h.routeJobs[0]!.delayMs).toBe(60_000);
  });

  it("a probe's 429 on a router 5 min fast pauses the site for its Retry-After of Redis time", async () => {
    const h = makeHarness();
    h.clock.set((await redisNowMs()) + 5 * MIN);
    const gate = fleetGate('route');
    const link = h.links.add('https://ratelimit-probe.example/a', { status: 'queued' });
    const probe = async () => response(link.url, { status: 429, headers: { 'retry-after': '30', 'content-type': 'text/plain' }, contentType: 'text/plain', text: 'slow down' });
    const proc = createRouteProcessor({
      ...h.common,
      gate,
      probe,
      probeStore: h.probeStore,
      learning: h.learning,
      routes: h.routes,
      settings: { learningModeEnabled: true, fetcherNames: ['simple_http', 'playwright', 'playwright_stealth'] },
    });
    await proc(fakeJob({ linkId: link.id, url: link.url }, 'route')).catch(() => undefined);
    const pause = await gate.domainPause('ratelimit-probe.example');
    expect(pause).not.toBeNull();
    const leftMs = pause!.untilMs - (await redisNowMs());
    expect(leftMs).toBeGreaterThan(20_000);
    expect(leftMs).toBeLessThanOrEqual(30_000);
  });
});

describe('the fleet clock', () => {
  it('keeps Redis TIME on a machine whose clock is off, so a pause one worker writes is the pause another reads', async () => {
    const redisNow = await redisNowMs();
    // Two machines: one 5 min fast, one 5 min slow (their clocks run, but from different starts).
    const fast = new ManualClock(redisNow + 5 * MIN);
    const slow = new ManualClock(redisNow - 5 * MIN);
    const a = new FleetClock({ redis, local: () => fast.now().getTime() });
    const b = new FleetClock({ redis, local: () => slow.now().getTime() });
    await Promise.all([a.sync(), b.sync()]);
    expect(Math.abs(a.offsetMs + 5 * MIN)).toBeLessThan(MIN);
    expect(Math.abs(b.offsetMs - 5 * MIN)).toBeLessThan(MIN);
    // Worker A pauses a link for 20 s; worker B's router reads it (route-decision's first check).
    const pausedUntil = new Date(a.now().getTime() + 20_000);
    const facts = { link: { id: 'l', url: 'https://x.example/', status: 'paused', generation: 0, pausedUntil, riskLevel: 1, attemptCount: 1 }, generation: 0, now: b.now(), domain: 'x.example', settings: { known: new Set(['simple_http']) } } as unknown as RouteFacts;
    const step = decideRoute(facts);
    expect(step.kind).toBe('delay');
    // With each machine's own clock this was 10 min 20 s.
    expect((step as { delayMs: number }).delayMs).toBeLessThanOrEqual(20_000 + 1_000);
    expect((step as { delayMs: number }).delayMs).toBeGreaterThan(15_000);
  });
});
