import { canonicalFetcherName } from '../contracts/names.js';
import { ERROR_TYPES, errorPolicyOf, type ErrorCode } from '../contracts/error-codes.js';
import type { PauseOptions } from '../backoff/pause-duration.js';
import type { ValidationResult } from '../validation/types.js';
import { DEFAULT_MAX_ATTEMPTS, ESCALATION, failureActionFor, resumeFetcherAfterPause } from './retry-policy.js';
import { isRateLimitResponse, pushbackPause } from './rate-limit.js';

/** Everything the fetch worker knows after one attempt. */
export interface OutcomeInput {
  /** The fetch error's type, or null when a response came back (then `validation` says what it was). */
  errorType: ErrorCode | null;
  /** validateResponse of the response; null when there was none. */
  validation: ValidationResult | null;
  /**
   * The HTTP status, when a response came back: 429 (and 503 with Retry-After) is a rate limit, other 5xx transient,
   * 4xx other than 403/406/429 the page's answer.
   */
  status?: number;
  /** The fetcher that made this attempt. */
  fetcher: string;
  /** Attempts on this link so far INCLUDING this one. */
  attemptCount: number;
  /** Consecutive failures before this attempt (the link's risk_level). */
  riskLevel: number;
  /** Second chances already spent in this job, so each is used at most once per job. */
  retriedThisJob?: { retryNow?: boolean; switchFetcher?: boolean };
  /** What the site asked for in Retry-After, in ms (parseRetryAfterMs). A pause never ends before it. */
  retryAfterMs?: number | null;
  /** When the attempt finished (from the injected clock). */
  now: Date;
  /** @defaultValue DEFAULT_MAX_ATTEMPTS (6) */
  maxAttempts?: number;
  /** Cap for pauses. @defaultValue DEFAULT_MAX_PAUSE_MS (24 h) */
  maxPauseMs?: number;
  /** The pause table's bases and the Retry-After floor (core PauseOptions); defaults as documented there. */
  pause?: Omit<PauseOptions, 'maxPauseMs'>;
}

export type OutcomeKind = 'success' | 'retry_now' | 'switch_fetcher' | 'pause' | 'fail';

/** What to record and do next. */
export interface OutcomeDecision {
  kind: OutcomeKind;
  /** The attempt's `success` column. */
  success: boolean;
  /** The attempt's `is_banned` column: the site blocked us. */
  isBanned: boolean;
  /** The attempt's `error_type` (null on success). */
  errorType: ErrorCode | null;
  /**
   * Fetcher for the next try: the switch's target, stealth after a pause when a block calls for it, or the same
   * fetcher after a rate limit (pace, not the tool).
   */
  nextFetcher?: string;
  /** How long to pause the link (kind pause). */
  pauseMs?: number;
  /** When the pause ends (now + pauseMs). */
  pausedUntil?: Date;
  /** The link's new risk_level. */
  riskLevel: number;
  /** A short machine-friendly explanation, e.g. "blocked_captcha:cloudflare" or "max_attempts:timeout". */
  reason: string;
}

/**
 * The retry policy applied to one attempt. Pure: the fetch worker records `success`/`isBanned`/`errorType` on the
 * attempt, stores `riskLevel`, and then retries, switches, pauses (a delayed job) or fails the link.
 * Rules, in order: a blocked response (challenge, 403) is a ban that escalates to stealth after the pause; a rate limit
 * (429, or 503 with Retry-After) is a ban that keeps the fetcher; other 5xx is transient; any other status is the
 * page's answer (404/410, a 3xx left without a Location, are successes of the fetcher); an HTML shell or empty page is the wrong tool from plain
 * HTTP and `empty_content` from a browser; a browser handed a file (a download) switches to plain HTTP; non-HTML
 * content is never empty. Success resets the risk level.
 */
export function decideOutcome(input: OutcomeInput): OutcomeDecision {
  const fetcher = canonicalFetcherName(input.fetcher);
  const riskLevel = Math.max(0, Math.floor(input.riskLevel || 0));
  const errorType = input.errorType ?? errorTypeOfResponse(input.validation, input.status, input.retryAfterMs);
  if (errorType === null) {
    return { kind: 'success', success: true, isBanned: false, errorType: null, riskLevel: 0, reason: successReason(input.status) };
  }
  const action = failureActionFor(errorType);
  const isBanned = action === 'pause' && errorPolicyOf(errorType).banRisk;
  const maxAttempts = input.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const detail = input.validation?.blockVendor ?? input.validation?.framework ?? null;
  const why = detail ? `${errorType}:${detail}` : errorType;
  const base = { success: false, isBanned, errorType } as const;

  if (action === 'fail') return { ...base, kind: 'fail', riskLevel, reason: why };
  if (input.attemptCount >= maxAttempts) {
    return { ...base, kind: 'fail', riskLevel: isBanned ? riskLevel + 1 : riskLevel, reason: `max_attempts:${why}` };
  }
  if (action === 'switch_fetcher') {
    // wrong_tool as the fetch's own error (no response) is a browser handed a file; from validation, a shell page.
    const next = input.errorType === ERROR_TYPES.wrongTool && !input.validation ? (ESCALATION.download[fetcher] ?? ESCALATION.wrongTool[fetcher]) : ESCALATION.wrongTool[fetcher];
    if (next && !input.retriedThisJob?.switchFetcher) return { ...base, kind: 'switch_fetcher', nextFetcher: next, riskLevel, reason: why };
    // Already in a browser (or already switched) and still nothing to read: the page is empty for good.
    return { ...base, errorType: ERROR_TYPES.emptyContent, kind: 'fail', riskLevel, reason: `${ERROR_TYPES.emptyContent}:${fetcher}` };
  }
  if (action === 'retry_now' && !input.retriedThisJob?.retryNow) {
    return { ...base, kind: 'retry_now', nextFetcher: fetcher, riskLevel, reason: why };
  }
  // pause: a block, or transient trouble that survived its immediate retry.
  const pause = pushbackPause({ riskLevel, errorType, retryAfterMs: input.retryAfterMs, now: input.now, maxPauseMs: input.maxPauseMs, pause: input.pause });
  // A rate limit is about pace, not the tool: stealth would not help, so only challenges and 403s escalate, and a rate
  // limit comes back to the fetcher it interrupted.
  const nextFetcher = resumeFetcherAfterPause(errorType, fetcher);
  return {
    ...base,
    kind: 'pause',
    ...pause,
    ...(nextFetcher ? { nextFetcher } : {}),
    reason: why,
  };
}

/** The error type a response implies, or null when it is a success of the fetcher. */
function errorTypeOfResponse(v: ValidationResult | null, status: number | undefined, retryAfterMs: number | null | undefined): ErrorCode | null {
  if (v?.isBlocked && v.blockType) return v.blockType;
  // A readable Retry-After on a 503 names the time to come back: that is a rate limit, not an error to retry at once.
  if (isRateLimitResponse(status, retryAfterMs != null)) return ERROR_TYPES.rateLimited;
  // 999 is LinkedIn's (and a few others') refusal of a client it takes for a bot: a block like a 403, which a stronger
  // tool may pass, not a server error retried at once on the same one.
  if (status === 403 || status === 999) return ERROR_TYPES.blocked403;
  if (status !== undefined && status >= 500) return ERROR_TYPES.httpError;
  // A 304 answers a conditional request, and the one answering ours is taken before this (the stored page stands). One
  // that reaches here answered a request that sent no validators: it carries no page and confirms none, so it is the
  // server's error, not the page's answer (stored, it would be an empty version).
  if (status === 304) return ERROR_TYPES.httpError;
  // 4xx other than 403/406/429 is the page's own answer; re-fetching with a browser would not change it. So is a 3xx that
  // reached us (plain HTTP follows every redirect with a Location): a 302 without one, a 300, a 305 are what a browser
  // gets and shows too.
  if (status !== undefined && status >= 300) return null;
  if (v && v.isHtml && (v.hasSpa || v.isEmpty)) return ERROR_TYPES.wrongTool;
  return null;
}

function successReason(status: number | undefined): string {
  return status === undefined || (status >= 200 && status < 300) ? 'fetched' : `fetched_status_${status}`;
}
