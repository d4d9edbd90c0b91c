import { describe, expect, it } from 'vitest';
import { parseWorkerEnv } from './env.js';

const BASE = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/x' };

describe('parseWorkerEnv', () => {
  it('fills defaults and parses FETCHERS with per-fetcher concurrency', () => {
    const env = parseWorkerEnv({ ...BASE, FETCHERS: 'direct_access:3,playwright' });
    expect(env.crawler.fetchers).toEqual([
      { name: 'simple_http', concurrency: 3 },
      { name: 'playwright', concurrency: 2 },
    ]);
    expect(env.metricsPort).toEqual({ port: 9464, fallback: true });
    expect(env.metricsHost).toBe('127.0.0.1');
    expect(env.healthLogIntervalMs).toBe(30_000);
    expect(env.shutdownDrainTimeoutMs).toBe(30_000);
    // The crawler's computed defaults hold in a composed configuration too: the fetchers' slots, and half of plain
    // HTTP's again for inline fetches.
    expect(env.crawler.routerConcurrency).toBe(3 + 2 + 2);
  });

  it('takes a METRICS_TOKEN of at least 24 characters, and none by default', () => {
    expect(parseWorkerEnv(BASE).metricsToken).toBeUndefined();
    expect(parseWorkerEnv({ ...BASE, METRICS_TOKEN: '  ' }).metricsToken).toBeUndefined();
    expect(parseWorkerEnv({ ...BASE, METRICS_TOKEN: 'f'.repeat(48) }).metricsToken).toBe('f'.repeat(48));
    expect(() => parseWorkerEnv({ ...BASE, METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN.*at least 24 characters/);
  });

  it('turns /metrics off with METRICS_PORT=off and accepts 0 for a free port', () => {
    expect(parseWorkerEnv({ ...BASE, METRICS_PORT: 'off' }).metricsPort).toBeNull();
    expect(parseWorkerEnv({ ...BASE, METRICS_PORT: '0' }).metricsPort).toEqual({ port: 0, fallback: false });
    expect(parseWorkerEnv({ ...BASE, METRICS_PORT: '9464' }).metricsPort).toEqual({ port: 9464, fallback: false });
  });

  it('names every bad variable with the value it got, crawler and process variables alike', () => {
    const bad = () => parseWorkerEnv({ DATABASE_URL: 'mysql://x', METRICS_PORT: '70000', FETCHERS: 'simple_http:0', HEALTH_LOG_INTERVAL_MS: 'soon' });
    expect(bad).toThrow(/DATABASE_URL="mysql:\/\/x"/);
    expect(bad).toThrow(/METRICS_PORT="70000": expected a port/);
    expect(bad).toThrow(/FETCHERS="simple_http:0"/);
    expect(() => parseWorkerEnv({ DATABASE_URL: 'postgresql://x@h/db', HEALTH_LOG_INTERVAL_MS: '3000000000' })).toThrow(/HEALTH_LOG_INTERVAL_MS="3000000000": expected an integer from 100 to 2147483647/);
    expect(bad).toThrow(/HEALTH_LOG_INTERVAL_MS="soon"/);
    expect(() => parseWorkerEnv({})).toThrow(/DATABASE_URL=\(unset\)/);
  });

  it('fails with a typed error code', () => {
    try {
      parseWorkerEnv({ ...BASE, SHUTDOWN_DRAIN_TIMEOUT_MS: '-1' });
      expect.unreachable();
    } catch (err) {
      expect((err as { code?: string }).code).toBe('invalid_config');
      expect(String(err)).toMatch(/SHUTDOWN_DRAIN_TIMEOUT_MS="-1"/);
    }
  });
});

describe('DOMAIN_LIMITS', () => {
  it('parses per-domain concurrency and optional minimum delay, leading www. dropped', () => {
    expect(parseWorkerEnv({ ...BASE, DOMAIN_LIMITS: 'Shop.example=1:2000, www.news.example=4' }).crawler.domainLimits).toEqual({
      'shop.example': { maxConcurrency: 1, minDelayMs: 2000 },
      'news.example': { maxConcurrency: 4 },
    });
    expect(parseWorkerEnv(BASE).crawler.domainLimits).toEqual({});
  });

  it('names the variable and the bad entry', () => {
    expect(() => parseWorkerEnv({ ...BASE, DOMAIN_LIMITS: 'a.example=0' })).toThrow(/DOMAIN_LIMITS="a\.example=0": bad entry 'a\.example=0'/);
    expect(() => parseWorkerEnv({ ...BASE, DOMAIN_LIMITS: 'https://a.example=2' })).toThrow(/DOMAIN_LIMITS=.*bad entry/);
  });
});
