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
];

/** A compiled tracking-parameter list: `matches(name)` for one decoded parameter name. */
export interface TrackingParamFilter {
  matches(name: string): boolean;
}

/** Compile a list such as {@link DEFAULT_TRACKING_PARAMS} (exact names, or prefixes ending in `*`). */
export function compileTrackingParams(patterns: readonly string[]): TrackingParamFilter {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const p of patterns) {
    const lower = p.trim().toLowerCase();
    if (lower === '' || lower === '*') continue;
    if (lower.endsWith('*')) prefixes.push(lower.slice(0, -1));
    else exact.add(lower);
  }
  return {
    matches(name) {
      const lower = name.toLowerCase();
      return exact.has(lower) || prefixes.some((p) => lower.startsWith(p));
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
  if (path.includes(';')) path = path.replace(/;([^/;=]+)=[^/;]*/g, (param, name: string) => (filter.matches(decodedName(name)) ? '' : param));
  if (q === -1) return path;
  const kept = url
    .slice(q + 1)
    .split('&')
    .filter((pair) => {
      if (pair === '') return false;
      const eq = pair.indexOf('=');
      return !filter.matches(decodedName(eq === -1 ? pair : pair.slice(0, eq)));
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
 * and `/docs/` are one page to the frontier (the first one discovered is the one fetched). Servers that tell the two
 * apart exist, but a crawl that fetches both nearly always fetches one page twice.
 */
export function frontierKey(canonicalUrl: string): string {
  const q = canonicalUrl.search(/[?#]/);
  const path = q === -1 ? canonicalUrl : canonicalUrl.slice(0, q);
  const rest = q === -1 ? '' : canonicalUrl.slice(q);
  // "scheme://host/" keeps its slash: the root path is never empty.
  if (path.endsWith('/') && path.indexOf('/', path.indexOf('//') + 2) < path.length - 1) return path.slice(0, -1) + rest;
  return canonicalUrl;
}
