import { describe, expect, it } from 'vitest';
import { ERROR_CODES, ERROR_POLICY, ERROR_TYPES, errorPolicyOf, isErrorCode } from './error-codes.js';
import { CrawlerError, isUrlPolicyError } from './errors.js';
import { failureActionFor } from '../policy/retry-policy.js';
import { BAN_RISK_ERROR_TYPES, pauseDurationMs } from '../backoff/pause-duration.js';
import { NOT_TOOL_EVIDENCE_ERROR_TYPES, isToolEvidence } from '../policy/rate-limit.js';

describe('ERROR_POLICY', () => {
  it('has exactly one row per code', () => {
    expect(Object.keys(ERROR_POLICY).sort()).toEqual([...ERROR_CODES].sort());
    expect(new Set(ERROR_CODES).size).toBe(Object.keys(ERROR_TYPES).length);
  });

  it('is what both an error and the pipeline read: retryable ⇔ the pipeline does not fail the link at once', () => {
    for (const code of ERROR_CODES) {
      const err = new CrawlerError(code, 'x');
      expect({ code, retryable: err.retryable }).toEqual({ code, retryable: failureActionFor(code) !== 'fail' });
      expect({ code, refuses: isUrlPolicyError(err) }).toEqual({ code, refuses: ERROR_POLICY[code].refusesUrl });
    }
  });

  it('keeps the decisions the pipeline made before the table was one', () => {
    const by = (action: string) => ERROR_CODES.filter((c) => ERROR_POLICY[c].action === action).sort();
    expect(by('pause')).toEqual(['blocked_403', 'blocked_captcha', 'rate_limited', 'site_unreachable']);
    expect(by('switch_fetcher')).toEqual(['wrong_tool']);
    expect(by('retry_now')).toEqual(['aborted', 'browser_error', 'db_conflict', 'db_unavailable', 'dns_error', 'http_error', 'internal_error', 'network_error', 'protocol_error', 'proxy_unavailable', 'timeout']);
    expect([...BAN_RISK_ERROR_TYPES].sort()).toEqual(['blocked_403', 'blocked_captcha', 'rate_limited']);
    // site_unreachable and proxy_unavailable are never written as attempts, so the SQL singles out rate_limited and tls_error.
    expect([...NOT_TOOL_EVIDENCE_ERROR_TYPES]).toEqual(['tls_error', 'proxy_unavailable', 'rate_limited', 'site_unreachable']);
    expect(ERROR_CODES.filter((c) => ERROR_POLICY[c].refusesUrl).sort()).toEqual(['blocked_address', 'blocked_scheme', 'invalid_url']);
  });

  it('gives a stored code this build does not know the transient policy of internal_error', () => {
    expect(isErrorCode('from_a_newer_build')).toBe(false);
    expect(errorPolicyOf('from_a_newer_build')).toBe(ERROR_POLICY.internal_error);
    expect(failureActionFor('from_a_newer_build')).toBe('retry_now');
    expect(isToolEvidence('from_a_newer_build')).toBe(true);
    expect(pauseDurationMs(0, 'from_a_newer_build')).toBe(pauseDurationMs(0, 'timeout'));
    expect(isErrorCode('toString')).toBe(false);
  });
});
