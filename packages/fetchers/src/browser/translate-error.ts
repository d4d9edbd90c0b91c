import { FetchError, type FetchErrorCode } from '../errors.js';
import { loadedPlaywright } from './playwright-module.js';

// Chromium's net:: error names, grouped by what the crawler does next.
const NET_ERRORS: [RegExp, FetchErrorCode][] = [
  [/net::ERR_NAME_NOT_RESOLVED|net::ERR_NAME_RESOLUTION_FAILED/, 'dns_error'],
  [/net::ERR_(CONNECTION_)?TIMED_OUT/, 'timeout'],
  [/net::ERR_(CERT_|SSL_|BAD_SSL_)/, 'tls_error'],
  [/net::ERR_TOO_MANY_REDIRECTS/, 'too_many_redirects'],
  [/net::ERR_(CONNECTION_RESET|CONNECTION_CLOSED|CONNECTION_REFUSED|CONNECTION_ABORTED|CONNECTION_FAILED|EMPTY_RESPONSE|ADDRESS_UNREACHABLE|INTERNET_DISCONNECTED|NETWORK_CHANGED|SOCKET_NOT_CONNECTED|INCOMPLETE_CHUNKED_ENCODING|CONTENT_LENGTH_MISMATCH)/, 'network_error'],
  [/net::ERR_(INVALID_RESPONSE|INVALID_HTTP_RESPONSE|RESPONSE_HEADERS_)/, 'protocol_error'],
  [/net::ERR_CONTENT_DECODING_(FAILED|INIT_FAILED)/, 'decode_error'],
  // The egress proxy could not connect (the fetcher asks it why first; this is the fallback).
  [/net::ERR_(TUNNEL_CONNECTION_FAILED|PROXY_CONNECTION_FAILED)/, 'network_error'],
  // A redirect to file:, data: or javascript: (Chromium refuses it as plain HTTP's redirect check does).
  [/net::ERR_UNSAFE_PORT|net::ERR_UNKNOWN_URL_SCHEME|net::ERR_UNSAFE_REDIRECT/, 'blocked_scheme'],
  // Chromium hands non-HTML (a PDF, a zip) to its download manager: plain HTTP is the right tool.
  [/Download is starting/, 'wrong_tool'],
  [/Target page, context or browser has been closed|Browser has been closed|browser has disconnected|Target closed/i, 'browser_error'],
];

/** Translate a Playwright error into a FetchError, or null to let the base decide (deadline, abort). */
export function translatePlaywrightError(err: unknown, ctx: { url: string; fetcher: string; signal: AbortSignal }): FetchError | null {
  if (err instanceof FetchError) return err;
  if (ctx.signal.aborted) return null;
  const base = { url: ctx.url, fetcher: ctx.fetcher, cause: err };
  const message = err instanceof Error ? err.message : String(err);
  const playwright = loadedPlaywright();
  if (playwright && err instanceof playwright.errors.TimeoutError) return new FetchError('timeout', firstLine(message), base);
  for (const [pattern, code] of NET_ERRORS) {
    if (pattern.test(message)) return new FetchError(code, firstLine(message), base);
  }
  return new FetchError('browser_error', firstLine(message), base);
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
}
