import { MAX_URL_LENGTH, normalizeUrl } from '../url/normalize-url.js';

/**
 * Query parameters that identify a click, a campaign or a session, never the page: a discovered link loses them
 * before dedup, so `/a?utm_source=x` and `/a` are one page. A trailing `*` matches any suffix; names compare
 * case-insensitively. Functional parameters (`ref`, `source`, `lang`) are deliberately absent: servers use them.
 */
export const DEFAULT_TRACKING_PARAMS: readonly string[] = [
  'utm_*', 'fbclid', 'gclid', 'gclsrc', 'dclid', 'gbraid', 'wbraid', 'msclkid', 'yclid', 'twclid', 'ttclid', 'igshid',
  'li_fat_id', 'mc_cid', 'mc_eid', '_ga', '_gl', '_hsenc', '_hsmi', 'hsctatracking', 'mkt_tok', 'oly_anon_id', 'oly_enc_id',
  'vero_id', 'wickedid', 'rb_clickid', 's_cid', 'ncid', 'spm', 'scm', 'jsessionid', 'phpsessid',
  // Names that are a session id only when the value is a token: `sid=5` is Slashdot's story, `sid=9f3a…` a session.
  'sid=<token>', 'sessionid=<token>', 'session_id=<token>', 'sessid=<token>', 's=<token>', 'oscsid=<token>', 'zenid=<token>',
  'cfid', 'cftoken', 'aspsessionid*',
];

/**
 * A session token as servers write one into links for cookieless clients: 16 or more letters and digits with at least
 * one of each (PHP's 26–32, a servlet's 32 hex digits, osCommerce's), optionally with `-`. A word, a number or
 * a date is none.
 */
const SESSION_TOKEN = /^(?=[-\w]*\d)(?=[-\w]*[a-z])[a-z0-9][-a-z0-9]{15,}$/i;

/** A compiled tracking-parameter list: `matches(name, value)` for one decoded parameter name and its raw value. */
export interface TrackingParamFilter {
  matches(name: string, value?: string): boolean;
}

/**
 * Compile a list such as {@link DEFAULT_TRACKING_PARAMS}: exact names, or prefixes ending in `*`; either followed by
 * `=<token>` matches only when the value is a session token (16+ letters and digits, both present), so `sid=<token>`
 * strips `sid=9f3a…` but keeps `sid=5`.
 */
export function compileTrackingParams(patterns: readonly string[]): TrackingParamFilter {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  const tokenExact = new Set<string>();
  const tokenPrefixes: string[] = [];
  for (const p of patterns) {
    let lower = p.trim().toLowerCase();
    const token = lower.endsWith('=<token>');
    if (token) lower = lower.slice(0, -'=<token>'.length);
    if (lower === '' || lower === '*') continue;
    if (lower.endsWith('*')) (token ? tokenPrefixes : prefixes).push(lower.slice(0, -1));
    else (token ? tokenExact : exact).add(lower);
  }
  return {
    matches(name, value) {
      const lower = name.toLowerCase();
      if (exact.has(lower) || prefixes.some((p) => lower.startsWith(p))) return true;
      return value !== undefined && (tokenExact.has(lower) || tokenPrefixes.some((p) => lower.startsWith(p))) && SESSION_TOKEN.test(value);
    },
  };
}

const DEFAULT_FILTER = compileTrackingParams(DEFAULT_TRACKING_PARAMS);

function decodedName(rawName: string): string {
  try {
    return decodeURIComponent(rawName.replace(/\+/g, ' '));
  } catch {
    // A malformed escape is a name nobody's list contains: keep it as written.
    return rawName;
  }
}

/**
 * `url` (normalized, absolute) without the query parameters the filter matches, nor the `;name=value` path
 * parameters it matches (a servlet container writes its session id so, `/a;jsessionid=8F3A`, for a client without
 * cookies: every visit would be new URLs); order and encoding of the rest kept.
 */
export function stripTrackingParams(url: string, filter: TrackingParamFilter = DEFAULT_FILTER): string {
  const q = url.indexOf('?');
  let path = q === -1 ? url : url.slice(0, q);
  if (path.includes(';')) path = path.replace(/;([^/;=]+)=([^/;]*)/g, (param, name: string, value: string) => (filter.matches(decodedName(name), value) ? '' : param));
  if (q === -1) return path;
  const kept = url
    .slice(q + 1)
    .split('&')
    .filter((pair) => {
      if (pair === '') return false;
      const eq = pair.indexOf('=');
      return eq === -1 ? !filter.matches(decodedName(pair)) : !filter.matches(decodedName(pair.slice(0, eq)), pair.slice(eq + 1));
    });
  return kept.length > 0 ? `${path}?${kept.join('&')}` : path;
}

/**
 * A link as the crawl frontier stores it: resolved against `base` when relative, normalized (fragment dropped,
 * escapes and host canonical) and without tracking parameters. Null for anything the crawler cannot fetch
 * (other schemes, unparsable, empty, longer than MAX_URL_LENGTH).
 */
export function canonicalCrawlUrl(raw: string, base?: string, filter: TrackingParamFilter = DEFAULT_FILTER): string | null {
  const trimmed = raw.trim();
  if (trimmed === '' || trimmed.startsWith('#')) return null;
  let absolute: string;
  try {
    absolute = base === undefined ? trimmed : new URL(trimmed, base).href;
    const url = stripTrackingParams(normalizeUrl(absolute), filter);
    // The enqueue path refuses such a URL; a discovered one is as unfetchable, and its key would not fit the
    // frontier's index (Postgres refuses a btree entry past ~2.7 KB): one such link failed the admission of them all.
    return url.length > MAX_URL_LENGTH ? null : url;
  } catch {
    return null;
  }
}

/**
 * The key a crawl deduplicates on: the canonical URL with a trailing slash dropped from a non-root path, so `/docs`
 * and `/docs/` are one page to the frontier (the first one discovered is the one fetched), and its query parameters
 * sorted by name (`?b=2&a=1` = `?a=1&b=2`, as Scrapy's and Crawlee's dedup read them; the values of one name keep
 * their order). Servers that tell such spellings apart exist, but a crawl that fetches both nearly always fetches
 * one page twice.
 */
export function frontierKey(canonicalUrl: string): string {
  const q = canonicalUrl.search(/[?#]/);
  let path = q === -1 ? canonicalUrl : canonicalUrl.slice(0, q);
  let rest = q === -1 ? '' : canonicalUrl.slice(q);
  // "scheme://host/" keeps its slash: the root path is never empty.
  if (path.endsWith('/') && path.indexOf('/', path.indexOf('//') + 2) < path.length - 1) path = path.slice(0, -1);
  if (rest.startsWith('?') && rest.includes('&')) {
    const hash = rest.indexOf('#');
    const query = hash === -1 ? rest.slice(1) : rest.slice(1, hash);
    const nameOf = (pair: string) => {
      const eq = pair.indexOf('=');
      return eq === -1 ? pair : pair.slice(0, eq);
    };
    // Array.prototype.sort is stable: `a=2&a=1` stays as written.
    const sorted = query.split('&').sort((x, y) => {
      const a = nameOf(x);
      const b = nameOf(y);
      return a < b ? -1 : a > b ? 1 : 0;
    });
    rest = `?${sorted.join('&')}${hash === -1 ? '' : rest.slice(hash)}`;
  }
  return path + rest;
}
