import { CrawlerError, ERROR_TYPES, type CrawlerErrorContext } from '@crawler/core';

/** Error types the fetchers raise: core's shared ones (the same strings, from one place) plus the fetchers' own. */
export const FETCH_ERROR_CODES = {
  timeout: ERROR_TYPES.timeout,
  networkError: ERROR_TYPES.networkError,
  dnsError: ERROR_TYPES.dnsError,
  tlsError: ERROR_TYPES.tlsError,
  tooLarge: ERROR_TYPES.tooLarge,
  redirectLoop: ERROR_TYPES.redirectLoop,
  tooManyRedirects: ERROR_TYPES.tooManyRedirects,
  blockedScheme: ERROR_TYPES.blockedScheme,
  blockedAddress: ERROR_TYPES.blockedAddress,
  invalidUrl: ERROR_TYPES.invalidUrl,
  browserError: ERROR_TYPES.browserError,
  aborted: 'aborted',
  httpProtocolError: 'protocol_error',
} as const;

export type FetchErrorCode = (typeof FETCH_ERROR_CODES)[keyof typeof FETCH_ERROR_CODES];

// Whether trying the same URL again later can help. Timeouts and resets are transient; a refused scheme,
// a private address, a redirect loop or an oversized body will be the same next time.
const RETRYABLE: Record<string, boolean> = {
  timeout: true,
  network_error: true,
  dns_error: true,
  tls_error: false,
  too_large: false,
  redirect_loop: false,
  too_many_redirects: false,
  blocked_scheme: false,
  blocked_address: false,
  invalid_url: false,
  browser_error: true,
  aborted: true,
  protocol_error: true,
};

/**
 * A fetch that produced no response. `code` is the stable error type recorded on the attempt; the third-party
 * error (undici, Playwright, zlib) is kept as `cause`.
 */
export class FetchError extends CrawlerError {
  override name = 'FetchError';

  constructor(code: FetchErrorCode | string, message: string, context: CrawlerErrorContext = {}, retryable?: boolean) {
    super(code, message, context, retryable ?? RETRYABLE[code] ?? true);
  }
}

/** True when `err` is a FetchError with one of the given codes (any code when none given). */
export function isFetchError(err: unknown, ...codes: string[]): err is FetchError {
  return err instanceof FetchError && (codes.length === 0 || codes.includes(err.code));
}
