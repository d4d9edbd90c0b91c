import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_PAUSE_MS, parseRetryAfterMs, pauseDurationMs } from './pause-duration.js';

const MIN = 60_000;

describe('pauseDurationMs', () => {
  it('follows the captcha/403 table: 10, 20, 40, 80, 160 min', () => {
    expect([0, 1, 2, 3, 4].map((l) => pauseDurationMs(l, 'blocked_captcha') / MIN)).toEqual([10, 20, 40, 80, 160]);
    expect([0, 1, 2, 3, 4].map((l) => pauseDurationMs(l, 'blocked_403') / MIN)).toEqual([10, 20, 40, 80, 160]);
    expect(pauseDurationMs(0, 'rate_limited') / MIN).toBe(10);
  });
  it('follows the other table: 5, 10, 20, 40, 80 min', () => {
    expect([0, 1, 2, 3, 4].map((l) => pauseDurationMs(l, 'timeout') / MIN)).toEqual([5, 10, 20, 40, 80]);
    expect(pauseDurationMs(0, 'some_new_error') / MIN).toBe(5);
  });
  it('caps at 24 h by default and at a configured maximum', () => {
    expect(pauseDurationMs(20, 'blocked_captcha')).toBe(DEFAULT_MAX_PAUSE_MS);
    expect(pauseDurationMs(1e9, 'timeout')).toBe(DEFAULT_MAX_PAUSE_MS);
    expect(pauseDurationMs(Number.POSITIVE_INFINITY, 'timeout')).toBe(DEFAULT_MAX_PAUSE_MS);
    expect(pauseDurationMs(3, 'blocked_403', { maxPauseMs: 30 * MIN })).toBe(30 * MIN);
  });
  it('treats negative or NaN levels as 0', () => {
    expect(pauseDurationMs(-3, 'timeout')).toBe(5 * MIN);
    expect(pauseDurationMs(Number.NaN, 'blocked_403')).toBe(10 * MIN);
  });
});

describe('parseRetryAfterMs', () => {
  const now = new Date('2026-03-01T12:00:00Z');
  it('reads delay-seconds', () => {
    expect(parseRetryAfterMs('120', now)).toBe(120_000);
    expect(parseRetryAfterMs(' 0 ', now)).toBe(0);
  });
  it('reads HTTP-dates in all three formats', () => {
    expect(parseRetryAfterMs('Sun, 01 Mar 2026 12:05:00 GMT', now)).toBe(5 * MIN);
    expect(parseRetryAfterMs('Sunday, 01-Mar-26 12:01:00 GMT', now)).toBe(MIN);
    expect(parseRetryAfterMs('Sun Mar  1 12:02:00 2026', now)).toBeGreaterThan(0);
  });
  it('gives 0 for a date in the past', () => {
    expect(parseRetryAfterMs('Sun, 01 Mar 2026 11:00:00 GMT', now)).toBe(0);
  });
  it.each([undefined, '', '-5', '1.5', 'soon', '2026-03-02', 'Sun, 99 Foo 2026 12:00:00 GMT'])('gives null for %j', (v) => {
    expect(parseRetryAfterMs(v, now)).toBeNull();
  });
});
