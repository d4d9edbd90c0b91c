import { errorCodesWhere, errorPolicyOf } from '../contracts/error-codes.js';

const MINUTE_MS = 60_000;

/** Longest pause the table may produce unless configured otherwise: a long streak must not park a link for weeks. */
export const DEFAULT_MAX_PAUSE_MS = 24 * 60 * MINUTE_MS;

/** Base pause for errors that signal the site is blocking us (IP ban risk): 10 minutes. */
export const BLOCK_BASE_PAUSE_MS = 10 * MINUTE_MS;
/** Base pause for everything else (transient trouble): 5 minutes. */
export const TRANSIENT_BASE_PAUSE_MS = 5 * MINUTE_MS;

/** Error types that get the longer, ban-risk base (ERROR_POLICY's `banRisk`). */
export const BAN_RISK_ERROR_TYPES: ReadonlySet<string> = errorCodesWhere('banRisk');

/** Shortest pause after a rate limit that named its Retry-After: a `Retry-After: 0` must not mean "at once". */
export const DEFAULT_RATE_LIMIT_MIN_PAUSE_MS = 1_000;

export interface PauseOptions {
  /** Upper bound on the pause. @defaultValue DEFAULT_MAX_PAUSE_MS (24 h) */
  maxPauseMs?: number;
  /** Base pause of ban-risk errors (challenge, 403, a 429 without Retry-After). @defaultValue BLOCK_BASE_PAUSE_MS (10 min) */
  blockBasePauseMs?: number;
  /** Base pause of transient trouble that survived its immediate retry. @defaultValue TRANSIENT_BASE_PAUSE_MS (5 min) */
  transientBasePauseMs?: number;
  /** Floor under a Retry-After the site named. @defaultValue DEFAULT_RATE_LIMIT_MIN_PAUSE_MS (1 s) */
  rateLimitMinPauseMs?: number;
}

/**
 * How long to pause a link after a failure: base × 2^riskLevel, where
 * `riskLevel` is the number of consecutive blocks BEFORE this one (0 for the first). Captcha/403/429:
 * 10, 20, 40, 80, 160 min…; others 5, 10, 20, 40, 80 min…; never more than `maxPauseMs`. Both bases are options.
 */
export function pauseDurationMs(riskLevel: number, errorType: string, opts: PauseOptions = {}): number {
  const maxPauseMs = opts.maxPauseMs ?? DEFAULT_MAX_PAUSE_MS;
  const level = Number.isFinite(riskLevel) ? Math.max(0, Math.floor(riskLevel)) : riskLevel > 0 ? 64 : 0;
  const base = errorPolicyOf(errorType).banRisk ? (opts.blockBasePauseMs ?? BLOCK_BASE_PAUSE_MS) : (opts.transientBasePauseMs ?? TRANSIENT_BASE_PAUSE_MS);
  // 2^64 minutes is already absurd; stop doubling there so the arithmetic stays finite.
  const ms = base * Math.pow(2, Math.min(level, 64));
  return Math.max(0, Math.min(ms, maxPauseMs));
}

/** HTTP-date shapes of RFC 9110 §5.6.7 (IMF-fixdate, obsolete RFC 850, asctime): a weekday/month name and a time. */
const HTTP_DATE = /^[A-Za-z]{3,9},? [0-9A-Za-z -]+ \d{1,2}:\d{2}:\d{2}( GMT| \d{4})$/;

/**
 * A Retry-After header in milliseconds from `now`: either delay-seconds ("120") or an HTTP-date. A date in the
 * past gives 0. Anything else (negative, fractional, garbage) gives null, so a bad header never shortens a pause.
 */
export function parseRetryAfterMs(value: string | undefined, now: Date): number | null {
  if (value === undefined) return null;
  const v = value.trim();
  if (v === '') return null;
  if (/^\d+$/.test(v)) {
    const seconds = Number(v);
    return Number.isSafeInteger(seconds * 1000) ? seconds * 1000 : null;
  }
  if (!HTTP_DATE.test(v)) return null;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now.getTime());
}
