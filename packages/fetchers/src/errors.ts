import { CrawlerError, type CrawlerErrorContext, type ErrorCode } from '@crawler/core';

/**
 * The codes a fetch can fail with (core's ERROR_POLICY says what each means: the error's `retryable` and the
 * pipeline's next step both read it). `satisfies` keeps the list inside core's closed union.
 */
export const FETCH_ERROR_CODES = [
  'timeout',
  'network_error',
  'dns_error',
  'tls_error',
  'too_large',
  'redirect_loop',
  'too_many_redirects',
  'blocked_scheme',
  'blocked_address',
  'invalid_url',
  'aborted',
  'protocol_error',
  'decode_error',
  'browser_error',
  /** A browser handed a file (Chromium's "Download is starting"): plain HTTP is the tool for it. */
  'wrong_tool',
  /** The exit (a proxy) failed: refused, 407 or timed out. Another URL of the tier is tried; no attempt is logged. */
  'proxy_unavailable',
] as const satisfies readonly ErrorCode[];

export type FetchErrorCode = (typeof FETCH_ERROR_CODES)[number];

/** True when `value` is a code a fetch can fail with. */
export function isFetchErrorCode(value: unknown): value is FetchErrorCode {
  return (FETCH_ERROR_CODES as readonly unknown[]).includes(value);
}

/**
 * A fetch that produced no response. `code` is the stable error type recorded on the attempt; the third-party
 * error (undici, Playwright, zlib) is kept as `cause`.
 */
export class FetchError extends CrawlerError {
  override name = 'FetchError';
  declare readonly code: FetchErrorCode;

  constructor(code: FetchErrorCode, message: string, context: CrawlerErrorContext = {}) {
    super(code, message, context);
  }
}

/** True when `err` is a FetchError with one of the given codes (any code when none given). */
export function isFetchError(err: unknown, ...codes: FetchErrorCode[]): err is FetchError {
  return err instanceof FetchError && (codes.length === 0 || codes.includes(err.code));
}
