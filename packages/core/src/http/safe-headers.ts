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
