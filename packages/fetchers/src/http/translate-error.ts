import { FetchError } from '../errors.js';

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
const NETWORK_CODES = new Set([
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
]);
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|SELF_SIGNED_|DEPTH_ZERO_|ERR_OSSL_)/;

/** Walk `cause` links: undici and Node wrap the error that matters. */
function causes(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e: unknown = err; e !== undefined && e !== null && out.length < 8; e = (e as { cause?: unknown }).cause) out.push(e);
  return out;
}

/**
 * True when the TLS handshake failed because the server offered only protocols we did not (an HTTP/2-only listener
 * answers an ALPN of `http/1.1` alone with the no_application_protocol alert): nothing was asked of it yet.
 */
export function refusedHttp1(err: unknown): boolean {
  return causes(err).some((e) => (e as { code?: unknown }).code === 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL');
}

/** llhttp's words for an answer whose first bytes are not `HTTP/`. */
const NOT_HTTP = /Expected HTTP\//;

/**
 * Why undici refused a response's head that browsers read, or null: llhttp rejects a bare LF where CRLF belongs
 * (`HTTPParserError`; undici 7.30 leaves its `code` undefined) and a Content-Length sent twice with the same value
 * (reported as `UND_ERR_RES_CONTENT_LENGTH_MISMATCH`, as undici reports any parse error once a Content-Length was read,
 * after joining the two values: "5" + "5" is 55), and undici drops a `100 Continue` it did not ask for
 * (`UND_ERR_SOCKET` "bad response"). Only meaningful for an error before the head was delivered: after it, the same
 * errors are a body cut short or malformed. Chromium loads all three (measured); it refuses two different lengths,
 * which undici reports the same way, so those go to the browser for it to refuse too.
 */
export function refusedHead(err: unknown): string | null {
  for (const e of causes(err)) {
    const { code, name, message } = e as { code?: unknown; name?: unknown; message?: unknown };
    // No status line at all (a service on the wrong port, a tarpit): not a head a browser reads as a page (Chromium
    // shows such bytes only as HTTP/0.9 text, and only on ports 80 and 443), so no reason to send the site to one.
    if (name === 'HTTPParserError' && typeof message === 'string' && NOT_HTTP.test(message)) return null;
    if (name === 'HTTPParserError') return typeof message === 'string' && message ? message : 'malformed response head';
    if (code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') return 'malformed response head after its Content-Length (one sent twice?)';
    if (code === 'UND_ERR_SOCKET' && message === 'bad response') return 'an informational 1xx response it did not ask for (100 Continue)';
  }
  return null;
}

/**
 * Translate an undici / Node socket error into a FetchError, or return null when it is not one of theirs
 * (the base then decides between deadline, abort and network_error). Runs once, at the edge.
 */
export function translateUndiciError(
  err: unknown,
  ctx: { url: string; fetcher: string; signal: AbortSignal },
): FetchError | null {
  for (const e of causes(err)) if (e instanceof FetchError) return e;
  // A deadline or caller abort makes undici throw its own abort error; the base knows which it was.
  if (ctx.signal.aborted) return null;
  for (const e of causes(err)) {
    const code = (e as { code?: unknown }).code;
    if (typeof code !== 'string') continue;
    const base = { url: ctx.url, fetcher: ctx.fetcher, cause: err };
    const message = (e as Error).message ?? code;
    if (TIMEOUT_CODES.has(code)) return new FetchError('timeout', `${code}: ${message}`, base);
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ESERVFAIL') return new FetchError('dns_error', message, base);
    if (NETWORK_CODES.has(code)) return new FetchError('network_error', `${code}: ${message}`, base);
    // Still refused with h2 offered too (HttpFetcher retries over HTTP/2): it speaks neither, a browser will not do better.
    if (code === 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL') {
      return new FetchError('tls_error', `the server accepts neither HTTP/1.1 nor HTTP/2 in ALPN: ${code}`, base);
    }
    if (TLS_CODE.test(code)) return new FetchError('tls_error', `${code}: ${message}`, base);
    if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return new FetchError('too_large', message, base);
    if (code === 'UND_ERR_HEADERS_OVERFLOW') return new FetchError('too_large', `response headers too large: ${message}`, base);
    if (code.startsWith('HPE_')) return new FetchError('protocol_error', `${code}: ${message}`, base);
  }
  // A body llhttp refused (a bad chunk size): undici 7.30's HTTPParserError carries no code, only its name.
  const parseError = causes(err).find((e) => (e as { name?: unknown }).name === 'HTTPParserError') as Error | undefined;
  if (parseError) return new FetchError('protocol_error', parseError.message, { url: ctx.url, fetcher: ctx.fetcher, cause: err });
  return null;
}
