import { describe, expect, it } from 'vitest';
import { CAPABLE_FETCHERS, IDEAL_FETCHER, RateLimiter, SITE_KINDS, classifyClient, kindAt } from './site-kinds.js';

describe('kindAt', () => {
  const changes = [
    { kind: 'botwall' as const, atMs: 1_000 },
    { kind: 'static' as const, afterRequests: 5 },
  ];
  it('keeps the initial kind until a change holds', () => {
    expect(kindAt('static', changes, 999, 0)).toBe('static');
  });
  it('switches at the simulated time', () => {
    expect(kindAt('static', changes, 1_000, 0)).toBe('botwall');
  });
  it('switches after N requests, and the later change wins when both hold', () => {
    expect(kindAt('spa', changes, 0, 5)).toBe('static');
    expect(kindAt('spa', changes, 5_000, 7)).toBe('static');
  });
});

describe('RateLimiter', () => {
  it('allows maxRequests per window, then pauses until the window ends', () => {
    const rl = new RateLimiter({ maxRequests: 2, windowMs: 1_000 });
    expect(rl.take(10_100)).toEqual({ allowed: true });
    expect(rl.isPausing(10_100)).toBe(false);
    expect(rl.take(10_200)).toEqual({ allowed: true });
    expect(rl.isPausing(10_300)).toBe(true);
    expect(rl.take(10_300)).toEqual({ allowed: false, pausedUntilMs: 11_000 });
    expect(rl.take(11_000)).toEqual({ allowed: true });
  });
  it('rejects a nonsensical limit', () => {
    expect(() => new RateLimiter({ maxRequests: 0 })).toThrow(/maxRequests/);
    expect(() => new RateLimiter({ windowMs: -1 })).toThrow(/windowMs/);
  });
});

describe('classifyClient', () => {
  it('lower-case header names are plain HTTP, canonical case a browser', () => {
    expect(classifyClient(['host', 'x', 'user-agent', 'Mozilla/5.0 Chrome/138'])).toBe('plain');
    expect(classifyClient(['Host', 'x', 'User-Agent', 'Mozilla/5.0 Chrome/138'])).toBe('browser');
    expect(classifyClient(['Host', 'x'])).toBe('plain');
  });
});

describe('fetcher tables', () => {
  it('every kind has an ideal fetcher that is also capable', () => {
    for (const k of SITE_KINDS) expect(CAPABLE_FETCHERS[k]).toContain(IDEAL_FETCHER[k]);
  });
});
