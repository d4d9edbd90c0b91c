import { CrawlerError, type CrawlerErrorContext } from '@crawler/core';

/** Error types the fetchers raise, beyond core's shared ones. */
export const FETCH_ERROR_CODES = {
  timeout: 'timeout',
  networkError: 'network_error',
  dnsError: 'dns_error',
  tlsError: 'tls_error',
  tooLarge: 'too_large',
  redirectLoop: 'redirect_loop',
  tooManyRedirects: 'too_many_redirects',
  blockedScheme: 'blocked_scheme',
  blockedAddress: 'blocked_address',
  invalidUrl: 'invalid_url',
  browserError: 'browser_error',
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
