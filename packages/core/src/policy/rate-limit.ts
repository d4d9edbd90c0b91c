import { ERROR_TYPES, errorCodesWhere, errorPolicyOf } from '../contracts/error-codes.js';
import { DEFAULT_RATE_LIMIT_MIN_PAUSE_MS, parseRetryAfterMs, pauseDurationMs, type PauseOptions } from '../backoff/pause-duration.js';

/**
 * Error types that say nothing about the tool: the site asked for less traffic, and any fetcher would have been
 * told the same. Their attempts are logged (they count for `is_banned`, the ban rate and the risk level) but are not
 * evidence for or against the fetcher in the learned selection or the domain's memory (ERROR_POLICY's `toolEvidence`).
 */
export const NOT_TOOL_EVIDENCE_ERROR_TYPES: ReadonlySet<string> = errorCodesWhere('toolEvidence', false);

/** Whether an attempt with this error type counts as evidence about its fetcher (see NOT_TOOL_EVIDENCE_ERROR_TYPES). */
export function isToolEvidence(errorType: string | null | undefined): boolean {
  return errorType == null || errorPolicyOf(errorType).toolEvidence;
}

/**
 * A response that asks for pace, not another tool: a 429, or a 503 that says when to come back (a readable
 * Retry-After). A challenge page served with either status is a challenge first; callers check for one before this.
 */
export function isRateLimitResponse(status: number | undefined, hasRetryAfter: boolean): boolean {
  return status === 429 || (status === 503 && hasRetryAfter);
}

/** Whether a Retry-After header value is readable (delay-seconds or an HTTP-date, past or future). */
export function hasReadableRetryAfter(value: string | undefined): boolean {
  // Validity does not depend on the clock: a date in the past still parses (to 0).
  return parseRetryAfterMs(value, new Date(0)) !== null;
}

export interface RateLimitPauseInput {
  /** Consecutive failures before this one (the link's risk_level). */
  riskLevel: number;
  /** What the site asked for (parseRetryAfterMs), null when it did not say or said something unreadable. */
  retryAfterMs: number | null | undefined;
  now: Date;
  /** Cap for the table's part of the pause; Retry-After is honoured even beyond it. @defaultValue DEFAULT_MAX_PAUSE_MS */
  maxPauseMs?: number;
  /** The table's bases and the Retry-After floor (PauseOptions). */
  pause?: Omit<PauseOptions, 'maxPauseMs'>;
}

/** A pause: how long, until when, and the link's risk level after it. */
export interface PushbackPause {
  pauseMs: number;
  pausedUntil: Date;
  riskLevel: number;
}

/**
/**
 * How long a rate limit pauses: what the site named in Retry-After (never less than `rateLimitMinPauseMs`), so a
 * 429 with `Retry-After: 20` costs 20 s, not the block table's 10 minutes; without a readable Retry-After, the block
 * table (10 min × 2^riskLevel) is the backoff. No request reaches the site before the time it named either way.
 */
export function rateLimitPauseMs(riskLevel: number, retryAfterMs: number | null | undefined, opts: PauseOptions = {}): number {
  if (retryAfterMs != null && retryAfterMs >= 0) return Math.max(retryAfterMs, opts.rateLimitMinPauseMs ?? DEFAULT_RATE_LIMIT_MIN_PAUSE_MS);
  return pauseDurationMs(riskLevel, ERROR_TYPES.rateLimited, opts);
}

/**
 * The one pause rule, for the fetch path (decideOutcome) and the router's probe alike. A rate limit waits what the
 * site asked ({@link rateLimitPauseMs}); anything else waits the backoff table for its error type (10 min ×
 * 2^riskLevel for ban-risk codes such as 403s, 5 min otherwise, capped by maxPauseMs) and never less than
 * Retry-After, so no request reaches the site before the time it named. The risk level goes up by one.
 */
export function pushbackPause(input: RateLimitPauseInput & { errorType: string }): PushbackPause {
  const riskLevel = Math.max(0, Math.floor(input.riskLevel || 0));
  const opts: PauseOptions = { ...input.pause, maxPauseMs: input.maxPauseMs };
  const pauseMs =
    input.errorType === ERROR_TYPES.rateLimited
      ? rateLimitPauseMs(riskLevel, input.retryAfterMs, opts)
      : Math.max(pauseDurationMs(riskLevel, input.errorType, opts), input.retryAfterMs != null && input.retryAfterMs > 0 ? input.retryAfterMs : 0);
  return { pauseMs, pausedUntil: new Date(input.now.getTime() + pauseMs), riskLevel: riskLevel + 1 };
}

/** How long a link and its domain wait after a rate limit: {@link pushbackPause} for `rate_limited`. */
export function rateLimitPause(input: RateLimitPauseInput): PushbackPause {
  return pushbackPause({ ...input, errorType: ERROR_TYPES.rateLimited });
}

/**
 * What a response's Retry-After asks for, in ms from `answeredAt` (when the answer came, not when the job began: a
 * slow request must not shorten the site's wait); null when absent or unreadable.
 */
export function retryAfterMsOf(headers: Readonly<Record<string, string | undefined>> | undefined, answeredAt: Date): number | null {
  return parseRetryAfterMs(headers?.['retry-after'], answeredAt);
}
