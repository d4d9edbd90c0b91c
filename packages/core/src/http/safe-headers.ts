/**
 * Response headers worth keeping with an attempt (fetcher_attempts.response_headers): the ones that explain who
 * answered and why (server, CDN, WAF and cache markers, rate-limit hints). An allow-list, so cookies,
 * authorization and anything personal never reach the database.
 */
export const SAFE_RESPONSE_HEADERS: ReadonlySet<string> = new Set([
  'server', 'content-type', 'content-length', 'content-encoding', 'content-language', 'cache-control', 'age',
  'last-modified', 'location', 'retry-after', 'via', 'x-powered-by', 'x-generator', 'x-cache', 'x-cache-status',
  'x-served-by', 'x-cdn', 'cf-ray', 'cf-mitigated', 'cf-cache-status', 'x-datadome', 'x-dd-b', 'x-amzn-waf-action',
  'x-amz-cf-pop', 'x-amz-cf-id', 'x-sucuri-id', 'x-sucuri-cache', 'x-sucuri-block', 'x-iinfo', 'x-cdn-forward',
  'akamai-grn', 'x-akamai-transformed', 'x-px-block', 'x-ratelimit-limit', 'x-ratelimit-remaining',
  'x-ratelimit-reset', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'x-robots-tag', 'vary',
]);

/** Longest header value kept; WAF headers are short, anything longer is noise. */
export const MAX_SAFE_HEADER_VALUE_LENGTH = 512;

/** The allow-listed subset of `headers`, names lower-cased and values trimmed to MAX_SAFE_HEADER_VALUE_LENGTH. */
export function safeResponseHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const key = name.toLowerCase().trim();
    if (!SAFE_RESPONSE_HEADERS.has(key) || typeof value !== 'string') continue;
    out[key] = value.length > MAX_SAFE_HEADER_VALUE_LENGTH ? value.slice(0, MAX_SAFE_HEADER_VALUE_LENGTH) : value;
  }
  return out;
}

/** Headers never archived with a page: they carry the crawler's session with the site, not the page. */
const UNARCHIVED_HEADERS: ReadonlySet<string> = new Set(['set-cookie', 'set-cookie2']);

/** Longest header value archived with a page; longer ones are cut (a header block is not where pages keep data). */
export const MAX_ARCHIVED_HEADER_VALUE_LENGTH = 8_192;

/** Most headers archived with a page. */
export const MAX_ARCHIVED_HEADERS = 100;

/**
 * The response headers stored with a page (fetched_content.response_headers), so an export can replay the response
 * as fetched: every header but cookies, names lower-cased, values cut to MAX_ARCHIVED_HEADER_VALUE_LENGTH, at most
 * MAX_ARCHIVED_HEADERS of them. CR and LF are removed: a value must not be able to forge a header line on replay.
 */
export function archivedResponseHeaders(headers: Record<string, string> | null | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  let n = 0;
  for (const [name, value] of Object.entries(headers ?? {})) {
    const key = name.toLowerCase().trim();
    if (UNARCHIVED_HEADERS.has(key) || typeof value !== 'string' || !/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(key)) continue;
    if (++n > MAX_ARCHIVED_HEADERS) break;
    const clean = value.replace(/[\r\n]+/g, ' ');
    out[key] = clean.length > MAX_ARCHIVED_HEADER_VALUE_LENGTH ? clean.slice(0, MAX_ARCHIVED_HEADER_VALUE_LENGTH) : clean;
  }
  return out;
}
