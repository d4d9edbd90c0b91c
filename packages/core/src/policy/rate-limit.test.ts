import { describe, expect, it } from 'vitest';
import { hasReadableRetryAfter, isRateLimitResponse, isToolEvidence, rateLimitPause, retryAfterMsOf } from './rate-limit.js';
import { decideOutcome } from './decide-outcome.js';

const MIN = 60_000;
const now = new Date('2026-05-01T00:00:00Z');

describe('rate limits', () => {
  it('a 429 always, a 503 only with a readable Retry-After', () => {
    expect(isRateLimitResponse(429, false)).toBe(true);
    expect(isRateLimitResponse(503, true)).toBe(true);
    expect(isRateLimitResponse(503, false)).toBe(false);
    expect(isRateLimitResponse(403, true)).toBe(false);
    expect(isRateLimitResponse(undefined, true)).toBe(false);
    expect(hasReadableRetryAfter('120')).toBe(true);
    expect(hasReadableRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT')).toBe(true);
    expect(hasReadableRetryAfter('later')).toBe(false);
    expect(hasReadableRetryAfter(undefined)).toBe(false);
  });

  it('pauses for Retry-After (with a floor) when the site names it, else by the block table, and raises the risk level', () => {
    expect(rateLimitPause({ riskLevel: 0, retryAfterMs: null, now })).toEqual({ pauseMs: 10 * MIN, pausedUntil: new Date(now.getTime() + 10 * MIN), riskLevel: 1 });
    expect(rateLimitPause({ riskLevel: 1, retryAfterMs: null, now }).pauseMs).toBe(20 * MIN);
    expect(rateLimitPause({ riskLevel: 1, retryAfterMs: 20_000, now }).pauseMs).toBe(20_000);
    expect(rateLimitPause({ riskLevel: 1, retryAfterMs: 20_000, now, pause: { rateLimitMinPauseMs: 60_000 } }).pauseMs).toBe(60_000);
    expect(rateLimitPause({ riskLevel: 0, retryAfterMs: null, now, pause: { blockBasePauseMs: 30_000 } }).pauseMs).toBe(30_000);
    expect(rateLimitPause({ riskLevel: 0, retryAfterMs: 3 * 60 * MIN, now }).pauseMs).toBe(3 * 60 * MIN);
    // The cap applies to the table, not to what the site asked for.
    expect(rateLimitPause({ riskLevel: 0, retryAfterMs: 5_000, now, maxPauseMs: 1_000 }).pauseMs).toBe(5_000);
    expect(rateLimitPause({ riskLevel: 0, retryAfterMs: null, now, maxPauseMs: 1_000 }).pauseMs).toBe(1_000);
  });

  it('a rate limit is no evidence about the tool; every other outcome is', () => {
    expect(isToolEvidence('rate_limited')).toBe(false);
    for (const t of [null, undefined, 'blocked_403', 'blocked_captcha', 'timeout', 'wrong_tool']) expect(isToolEvidence(t)).toBe(true);
  });

  it("the fetch path's 429 pause is the router probe's pause: one rule", () => {
    for (const [riskLevel, retryAfter] of [[0, undefined], [2, '30'], [0, '7200'], [3, 'Wed, 01 May 2026 05:00:00 GMT']] as const) {
      const retryAfterMs = retryAfterMsOf({ 'retry-after': retryAfter }, now);
      const fetchPath = decideOutcome({ fetcher: 'simple_http', status: 429, validation: null, attemptCount: 1, riskLevel, retryAfterMs, now, maxPauseMs: 90 * MIN });
      const probePath = rateLimitPause({ riskLevel, retryAfterMs, now, maxPauseMs: 90 * MIN });
      expect(fetchPath).toMatchObject({ kind: 'pause', errorType: 'rate_limited', pauseMs: probePath.pauseMs, pausedUntil: probePath.pausedUntil, riskLevel: probePath.riskLevel });
    }
    expect(retryAfterMsOf({ 'retry-after': '30' }, now)).toBe(30_000);
    expect(retryAfterMsOf({}, now)).toBeNull();
  });
});
