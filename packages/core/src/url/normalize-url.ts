import { parseHttpUrl } from './parse-http-url.js';

/**
 * Longest URL the crawler accepts, in characters of its normalized (ASCII) form. Browsers and CDNs stop around 2 KB
 * to 8 KB, sitemaps at 2,048; and a longer key would not fit Postgres's btree row limit for the unique index.
 */
export const MAX_URL_LENGTH = 2_048;

/**
 * The canonical form of a crawlable URL, so that the same page always yields the same string (dedup keys, link
 * rows). Throws InvalidUrlError for unparsable or non-http(s) input.
 *
 * What the WHATWG parser already does: lower-case scheme and host, punycode IDNs, drop the default port, resolve
 * dot segments (including `%2e`), give an empty path "/". What we add: trim whitespace, drop the fragment (never
 * sent to the server), drop a trailing dot on the host and a bare "?" with no query, and normalise percent-escapes
 * (upper-case hex, decode unreserved characters: RFC 3986 §6.2.2), and drop `user:password@`. The query keeps its parameter order because
 * servers may depend on it.
 */
export function normalizeUrl(raw: string): string {
  const url = parseHttpUrl(raw);
  url.hash = '';
  // Credentials are never part of a page's identity, and a stored URL must not carry them.
  url.username = '';
  url.password = '';
  if (url.hostname.endsWith('.') && url.hostname.length > 1) url.hostname = url.hostname.slice(0, -1);
  url.pathname = normalizePercentEncoding(url.pathname);
  if (url.search === '?' || url.search === '') url.search = '';
  else url.search = normalizePercentEncoding(url.search);
  // Setting search to '' leaves no '?', but WHATWG keeps a lone '?' when the input had one: strip it.
  const href = url.href;
  return href.endsWith('?') ? href.slice(0, -1) : href;
}

/**
 * The site a URL belongs to for learning and politeness: the lower-case host without one leading "www." (unless
 * that would leave a bare TLD, as in "www.com"). IPv4 and bracketed IPv6 hosts come back as the parser prints them.
 * A bare host ("Example.com") is accepted too. Throws InvalidUrlError when there is no usable host.
 */
export function domainOf(url: string): string {
  const candidate = typeof url === 'string' && !url.includes('://') ? `http://${url.trim()}` : url;
  let host = parseHttpUrl(candidate).hostname;
  if (host.endsWith('.') && host.length > 1) host = host.slice(0, -1);
  if (host.startsWith('www.') && host.indexOf('.', 4) !== -1) host = host.slice(4);
  return host;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** Upper-case the hex of every %XX escape and decode the ones that stand for unreserved characters. */
export function normalizePercentEncoding(s: string): string {
  return s.replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => {
    const ch = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(ch) ? ch : `%${hex.toUpperCase()}`;
  });
}
