import { describe, expect, it } from 'vitest';
import type { ValidationResult } from '../validation/types.js';
import { decideOutcome, type OutcomeInput } from './decide-outcome.js';
import { isErrorCode, type ErrorCode } from '../contracts/error-codes.js';

const MIN = 60_000;
const now = new Date('2026-05-01T00:00:00Z');
const ok: ValidationResult = { isBlocked: false, blockType: null, blockVendor: null, hasSpa: false, framework: null, isEmpty: false, isHtml: true, visibleTextLength: 900, contentFamily: 'html', scriptRatio: 0.1, hasPaywall: false };
const base: OutcomeInput = { errorType: null, validation: ok, status: 200, fetcher: 'simple_http', attemptCount: 1, riskLevel: 0, now };
const decide = (o: Partial<OutcomeInput>) => decideOutcome({ ...base, ...o });

describe('decideOutcome', () => {
  it('a fetched page is a success and resets the risk level', () => {
    expect(decide({ riskLevel: 3 })).toMatchObject({ kind: 'success', success: true, isBanned: false, errorType: null, riskLevel: 0 });
  });

  it('404/410 are successes of the fetcher, with the status in the reason', () => {
    expect(decide({ status: 404, validation: { ...ok, isEmpty: true, visibleTextLength: 3 } })).toMatchObject({ kind: 'success', success: true, reason: 'fetched_status_404' });
    expect(decide({ status: 410 })).toMatchObject({ kind: 'success' });
  });

  it('a 3xx that was not followed (no Location, 300, 305) is the page\'s answer too, not an empty page for a browser', () => {
    const emptyHtml = { ...ok, isEmpty: true, visibleTextLength: 5 };
    for (const status of [300, 302, 305]) {
      expect(decide({ status, validation: emptyHtml })).toMatchObject({ kind: 'success', success: true, reason: `fetched_status_${status}` });
    }
  });

  it('a 304 that answered no conditional request of ours is a server error, not an empty page to store', () => {
    expect(decide({ status: 304, validation: { ...ok, isEmpty: true, visibleTextLength: 0 } })).toMatchObject({ kind: 'retry_now', success: false, errorType: 'http_error' });
    expect(decide({ status: 304, validation: null, maxAttempts: 1 })).toMatchObject({ kind: 'fail', errorType: 'http_error', reason: 'max_attempts:http_error' });
  });

  it('transient errors retry once at once with the same fetcher, then pause on the short table', () => {
    for (const errorType of ['timeout', 'network_error', 'dns_error']) {
      expect(decide({ errorType, validation: null })).toMatchObject({ kind: 'retry_now', nextFetcher: 'simple_http', success: false, isBanned: false, riskLevel: 0 });
    }
    const after = decide({ errorType: 'timeout', validation: null, riskLevel: 1, retriedThisJob: { retryNow: true } });
    expect(after).toMatchObject({ kind: 'pause', pauseMs: 10 * MIN, riskLevel: 2, isBanned: false });
    expect(after.pausedUntil?.getTime()).toBe(now.getTime() + 10 * MIN);
  });

  it('5xx is transient', () => {
    expect(decide({ status: 503 })).toMatchObject({ kind: 'retry_now', errorType: 'http_error' });
    expect(decide({ errorType: 'http_error', status: 500, validation: null, retriedThisJob: { retryNow: true } })).toMatchObject({ kind: 'pause', pauseMs: 5 * MIN });
  });

  it('a challenge pauses, bans, raises the risk level and escalates to stealth after the pause', () => {
    const v = { ...ok, isBlocked: true, blockType: 'blocked_captcha' as const, blockVendor: 'cloudflare' };
    const d = decide({ validation: v, status: 403, riskLevel: 2 });
    expect(d).toMatchObject({ kind: 'pause', success: false, isBanned: true, errorType: 'blocked_captcha', pauseMs: 40 * MIN, riskLevel: 3, nextFetcher: 'playwright_stealth', reason: 'blocked_captcha:cloudflare' });
    expect(decide({ validation: v, fetcher: 'playwright' }).nextFetcher).toBe('playwright_stealth');
    expect(decide({ validation: v, fetcher: 'playwright_stealth' }).nextFetcher).toBeUndefined();
  });

  it('a 429 is rate_limited: it pauses, bans, keeps the fetcher and waits what Retry-After names (with a floor)', () => {
    const v = { ...ok, isBlocked: true, blockType: 'rate_limited' as const };
    const d = decide({ validation: v, status: 429, retryAfterMs: 3 * 60 * MIN, fetcher: 'playwright' });
    expect(d).toMatchObject({ kind: 'pause', isBanned: true, errorType: 'rate_limited', pauseMs: 3 * 60 * MIN, riskLevel: 1, nextFetcher: 'playwright' });
    // A 429 with Retry-After: 20 costs 20 s, not the block table's 10 minutes.
    expect(decide({ validation: v, status: 429, retryAfterMs: 20_000 })).toMatchObject({ pauseMs: 20_000, nextFetcher: 'simple_http' });
    expect(decide({ validation: v, status: 429, retryAfterMs: 0 }).pauseMs).toBe(1000);
    expect(decide({ validation: v, status: 429, retryAfterMs: 2000, pause: { rateLimitMinPauseMs: 30_000 } }).pauseMs).toBe(30_000);
    expect(decide({ errorType: 'rate_limited', validation: null, retryAfterMs: null }).pauseMs).toBe(10 * MIN);
    // Without a validation (a body nobody read), the status alone says it.
    expect(decide({ validation: null, status: 429 })).toMatchObject({ kind: 'pause', errorType: 'rate_limited', nextFetcher: 'simple_http' });
  });

  it('a 503 with Retry-After is a rate limit; without one it is transient', () => {
    expect(decide({ status: 503, retryAfterMs: 120_000 })).toMatchObject({ kind: 'pause', errorType: 'rate_limited', isBanned: true, nextFetcher: 'simple_http', pauseMs: 120_000 });
    expect(decide({ status: 503, retryAfterMs: 2 * 60 * MIN }).pauseMs).toBe(2 * 60 * MIN);
    expect(decide({ status: 503, retryAfterMs: null })).toMatchObject({ kind: 'retry_now', errorType: 'http_error' });
  });

  it('a challenge served with 503 and Retry-After is still a challenge that escalates', () => {
    const v = { ...ok, isBlocked: true, blockType: 'blocked_captcha' as const, blockVendor: 'cloudflare' };
    expect(decide({ validation: v, status: 503, retryAfterMs: 5000 })).toMatchObject({ errorType: 'blocked_captcha', nextFetcher: 'playwright_stealth' });
  });

  it('a bare 403 with no validation is still a block', () => {
    expect(decide({ validation: null, status: 403 })).toMatchObject({ kind: 'pause', errorType: 'blocked_403', isBanned: true, pauseMs: 10 * MIN });
    // The block pause base is configuration.
    expect(decide({ validation: null, status: 403, pause: { blockBasePauseMs: MIN } }).pauseMs).toBe(MIN);
  });

  it("LinkedIn's 999 (its answer to a client it takes for a bot) is a block like a 403, not a server error to retry", () => {
    expect(decide({ validation: null, status: 999 })).toMatchObject({ kind: 'pause', errorType: 'blocked_403', isBanned: true, pauseMs: 10 * MIN });
  });

  it('caps the pause', () => {
    const v = { ...ok, isBlocked: true, blockType: 'blocked_403' as const };
    expect(decide({ validation: v, riskLevel: 30 }).pauseMs).toBe(24 * 60 * MIN);
    expect(decide({ validation: v, riskLevel: 30, maxPauseMs: 60 * MIN }).pauseMs).toBe(60 * MIN);
  });

  it('an empty or shell page from plain HTTP switches once to playwright; from a browser it is empty_content', () => {
    const empty = { ...ok, isEmpty: true, visibleTextLength: 10 };
    expect(decide({ validation: empty })).toMatchObject({ kind: 'switch_fetcher', nextFetcher: 'playwright', errorType: 'wrong_tool', success: false, isBanned: false });
    expect(decide({ validation: { ...empty, hasSpa: true, framework: 'react' } })).toMatchObject({ kind: 'switch_fetcher', reason: 'wrong_tool:react' });
    expect(decide({ validation: empty, fetcher: 'direct_access' })).toMatchObject({ kind: 'switch_fetcher', nextFetcher: 'playwright' });
    expect(decide({ validation: empty, fetcher: 'playwright' })).toMatchObject({ kind: 'fail', errorType: 'empty_content' });
    expect(decide({ validation: empty, retriedThisJob: { switchFetcher: true } })).toMatchObject({ kind: 'fail', errorType: 'empty_content' });
    expect(decide({ errorType: 'wrong_tool', validation: null })).toMatchObject({ kind: 'switch_fetcher' });
  });

  it('a browser that got a download (a file, not a page) switches once to plain HTTP', () => {
    // Chromium hands a PDF or zip to its download manager; the fetcher reports wrong_tool with no response.
    for (const fetcher of ['playwright', 'playwright_stealth']) {
      expect(decide({ errorType: 'wrong_tool', validation: null, fetcher })).toMatchObject({ kind: 'switch_fetcher', nextFetcher: 'simple_http', errorType: 'wrong_tool', isBanned: false });
      expect(decide({ errorType: 'wrong_tool', validation: null, fetcher, retriedThisJob: { switchFetcher: true } })).toMatchObject({ kind: 'fail' });
    }
    // A page a browser rendered empty is still empty for good: only the fetch error means "a file".
    expect(decide({ validation: { ...ok, isEmpty: true, visibleTextLength: 10 }, fetcher: 'playwright_stealth' })).toMatchObject({ kind: 'fail', errorType: 'empty_content' });
  });

  it('non-HTML content is never empty', () => {
    const pdf = { ...ok, isHtml: false, isEmpty: false, visibleTextLength: 0, contentFamily: 'pdf' };
    expect(decide({ validation: pdf })).toMatchObject({ kind: 'success' });
  });

  it('permanent errors fail at once', () => {
    for (const errorType of ['invalid_url', 'blocked_scheme', 'blocked_address', 'too_large', 'robots_disallowed', 'empty_content']) {
      expect(decide({ errorType, validation: null, riskLevel: 2 })).toMatchObject({ kind: 'fail', errorType, success: false, riskLevel: 2 });
    }
  });

  it('fails the link for good after maxAttempts, keeping the reason', () => {
    expect(decide({ errorType: 'timeout', validation: null, attemptCount: 6 })).toMatchObject({ kind: 'fail', errorType: 'timeout', reason: 'max_attempts:timeout' });
    expect(decide({ errorType: 'timeout', validation: null, attemptCount: 5 }).kind).toBe('retry_now');
    const v = { ...ok, isBlocked: true, blockType: 'blocked_captcha' as const, blockVendor: 'datadome' };
    expect(decide({ validation: v, attemptCount: 3, maxAttempts: 3 })).toMatchObject({ kind: 'fail', isBanned: true, reason: 'max_attempts:blocked_captcha:datadome', riskLevel: 1 });
    expect(decide({ attemptCount: 99 }).kind).toBe('success');
  });

  it('fails a body that cannot be decompressed at once, as its error says (not retried six times)', () => {
    expect(decide({ errorType: 'decode_error', validation: null })).toMatchObject({ kind: 'fail', errorType: 'decode_error', isBanned: false });
  });

  it('treats an unknown error type as transient rather than losing the link', () => {
    // Only a caller outside the compiler (or a newer build's stored code) can pass one.
    expect(isErrorCode('brand_new_error')).toBe(false);
    expect(decide({ errorType: 'brand_new_error' as ErrorCode, validation: null })).toMatchObject({ kind: 'retry_now' });
  });
});
