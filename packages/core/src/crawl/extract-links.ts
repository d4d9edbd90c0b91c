import { canonicalCrawlUrl, type TrackingParamFilter } from './crawl-url.js';
import { createHtmlParser, decodeAttribute } from './html-events.js';
import { encodeQueryIn } from './query-encoding.js';

/** A link found on a page. */
export interface ExtractedLink {
  /** Canonical absolute URL (resolved, normalized, tracking parameters removed). */
  url: string;
  /** The element said rel="nofollow" (or the page's robots meta did). */
  nofollow: boolean;
}

/** What a page says about where to go next. */
export interface PageLinks {
  /** Distinct links in document order (first occurrence wins, a followed occurrence beats a nofollow one). */
  links: ExtractedLink[];
  /** The page's `<link rel=canonical>`, canonical form, when it names an http(s) URL. */
  canonical: string | null;
  /** `<meta name=robots content=nofollow|none>`: the page asks that none of its links be followed. */
  nofollowAll: boolean;
  /** Occurrences of links not seen before `maxLinks` was reached, dropped unresolved (a repeat counts again). */
  truncated: number;
  /**
   * Where a refresh sends the reader (the `Refresh` header's URL, else the first `<meta http-equiv=refresh>`'s), also
   * in `links`: the page a browser lands on, as a redirect's target is. Absent for feeds.
   */
  refresh?: string | null;
}

/** Options of {@link extractLinks}. */
export interface ExtractLinksOptions {
  /** Tracking parameters to remove. @defaultValue DEFAULT_TRACKING_PARAMS */
  trackingParams?: TrackingParamFilter;
  /** At most this many distinct links per page: a hostile page with a million anchors costs no more. @defaultValue 5000 */
  maxLinks?: number;
  /** The response's `Refresh` header, whose URL is a link as a `<meta http-equiv=refresh>` one is. */
  refreshHeader?: string;
  /**
   * Whether `<link rel=alternate>` RSS/Atom feeds are links. A crawl takes them from its seeds only: a site's front
   * page names the feed of its newest pages, while blog engines give every post its own comments feed. @defaultValue true
   */
  feeds?: boolean;
  /**
   * The document's encoding (the charset its text was decoded with): non-ASCII characters in a link's query are
   * percent-encoded in it, as browsers do. @defaultValue UTF-8
   */
  charset?: string;
}

/**
 * The URL of a `Refresh` header or `<meta http-equiv=refresh>` content (`5; url=/next`, `0;URL='/next'`, `0, /next`), as
 * the HTML standard parses it; null when it only reloads the page.
 */
export function refreshTarget(content: string): string | null {
  const m = /^\s*[\d.]*\s*[;,]?\s*(?:url\s*=\s*)?(.*)$/is.exec(content);
  let url = m?.[1]?.trim() ?? '';
  const quote = url[0];
  if (quote === '"' || quote === "'") {
    const end = url.indexOf(quote, 1);
    url = url.slice(1, end === -1 ? undefined : end);
  }
  return url === '' ? null : url;
}

/** Elements and the attribute that names a page to crawl. Scripts, styles and images are resources, not pages. */
const LINK_ATTRIBUTE: Record<string, string> = { a: 'href', area: 'href', iframe: 'src', frame: 'src' };

/** Where a `<base>` open tag may be (htmlparser2 ends a tag name at whitespace, `/` or `>`); text that only looks like one costs no more than the end-of-parse resolution. */
const BASE_TAG = /<base[\s/>]/i;

/** Raw link values resolved at once during the parse of a page without a `<base>`. */
const RESOLVE_BATCH = 1024;

interface RawLink {
  value: string;
  nofollow: boolean;
  refresh?: boolean;
}

/** What the batches resolved during the parse hold: extractLinks carries on from it. */
interface EarlyLinks {
  byUrl: Map<string, ExtractedLink>;
  bySpelling: Map<string, ExtractedLink | null>;
  truncated: number;
  refresh: string | null;
}

/**
 * Resolve `raw` against `base` into `into` and empty it, as extractLinks' own loop does (which this leaves out of the
 * common path: it ran ~10% slower on ordinary pages once moved out). The robots meta may come later: extractLinks
 * applies it at the end.
 */
function resolveEarly(raw: RawLink[], base: string, into: EarlyLinks, maxLinks: number, trackingParams: TrackingParamFilter | undefined, charset: string | undefined): void {
  for (const r of raw) {
    const spelling = r.refresh ? r.value : decodeAttribute(r.value);
    let link = into.bySpelling.get(spelling);
    if (link === undefined) {
      if (into.byUrl.size >= maxLinks) {
        into.truncated += 1;
        continue;
      }
      const url = canonicalCrawlUrl(encodeQueryIn(spelling, charset), base, trackingParams);
      link = url === null ? null : (into.byUrl.get(url) ?? null);
      if (url !== null && link === null) {
        link = { url, nofollow: true };
        into.byUrl.set(url, link);
      }
      into.bySpelling.set(spelling, link);
    }
    if (link !== null && !r.nofollow) link.nofollow = false;
    if (r.refresh && into.refresh === null && link !== null) into.refresh = link.url;
  }
  raw.length = 0;
}

/** `<link rel=alternate>` types that name the page's RSS or Atom feed. */
const FEED_TYPES = new Set(['application/rss+xml', 'application/atom+xml', 'application/feed+json']);

function relTokens(rel: string | undefined): string[] {
  return rel ? decodeAttribute(rel).toLowerCase().split(/\s+/).filter(Boolean) : [];
}

/**
 * The links of an HTML page, from one streaming parse (no DOM): `<a href>`, `<area href>`, `<iframe src>`,
 * `<frame src>`, `<link rel=next>`, `<link rel=alternate>` naming an RSS or Atom feed, and a refresh's URL (`<meta http-equiv=refresh>`, the `Refresh` header: an old site's
 * way to redirect, whose target is otherwise found nowhere), resolved against the first `<base href>` (itself resolved against the page's
 * final URL) or the final URL. Pure: no I/O, no clock.
 */
export function extractLinks(html: string, pageUrl: string, opts: ExtractLinksOptions = {}): PageLinks {
  const maxLinks = opts.maxLinks ?? 5000;
  const followFeeds = opts.feeds ?? true;
  let base = pageUrl;
  let baseSeen = false;
  let canonical: string | null = null;
  let nofollowAll = false;
  let truncated = 0;
  // Raw values, resolved once the parse is over: a <base> may come after links in broken markup, and only the first
  // one counts, as in browsers (which also apply it to links before it).
  const raw: RawLink[] = [];
  // On a page with no `<base>` in its text the base is the page's URL from the start, so raw values are resolved a
  // batch at a time as the parse goes: a page of 500,000 anchors then does not hold 500,000 of them at once.
  const early: EarlyLinks | null = BASE_TAG.test(html) ? null : { byUrl: new Map(), bySpelling: new Map(), truncated: 0, refresh: null };
  const fromHeader = opts.refreshHeader === undefined ? null : refreshTarget(opts.refreshHeader);
  if (fromHeader !== null) raw.push({ value: fromHeader, nofollow: false, refresh: true });
  const parser = createHtmlParser({
    onopentag(name, attribs) {
      if (early !== null && raw.length >= RESOLVE_BATCH) resolveEarly(raw, pageUrl, early, maxLinks, opts.trackingParams, opts.charset);
      const attr = LINK_ATTRIBUTE[name];
      if (attr !== undefined) {
        const value = attribs[attr];
        if (value !== undefined) raw.push({ value, nofollow: name !== 'iframe' && name !== 'frame' && relTokens(attribs.rel).includes('nofollow') });
        return;
      }
      if (name === 'link') {
        const rel = relTokens(attribs.rel);
        const href = attribs.href;
        if (href === undefined) return;
        if (rel.includes('canonical') && canonical === null) canonical = href;
        else if (rel.includes('next')) raw.push({ value: href, nofollow: rel.includes('nofollow') });
        // The page's feed lists the site's newest pages: a crawl reads it as it reads a sitemap.
        else if (followFeeds && rel.includes('alternate') && FEED_TYPES.has(decodeAttribute(attribs.type ?? '').trim().toLowerCase())) raw.push({ value: href, nofollow: rel.includes('nofollow') });
      } else if (name === 'base' && !baseSeen && attribs.href !== undefined) {
        baseSeen = true;
        try {
          base = new URL(decodeAttribute(attribs.href).trim(), pageUrl).href;
        } catch {
          // An unusable <base> is ignored, as browsers do.
        }
      } else if (name === 'meta' && decodeAttribute(attribs['http-equiv'] ?? '').trim().toLowerCase() === 'refresh') {
        const target = refreshTarget(decodeAttribute(attribs.content ?? ''));
        if (target !== null) raw.push({ value: target, nofollow: false, refresh: true });
      } else if (name === 'meta' && (attribs.name ?? '').toLowerCase() === 'robots') {
        const content = decodeAttribute(attribs.content ?? '').toLowerCase();
        if (/\b(nofollow|none)\b/.test(content)) nofollowAll = true;
      }
    },
  });
  parser.end(html);

  // Each spelling is resolved once (a navigation repeats its hrefs), and none past the cap: a hostile page's millionth
  // anchor costs a map lookup, not a URL parse and normalization on the worker's event loop.
  const byUrl = early?.byUrl ?? new Map<string, ExtractedLink>();
  const bySpelling = early?.bySpelling ?? new Map<string, ExtractedLink | null>();
  let refresh: string | null = early?.refresh ?? null;
  if (early !== null) {
    truncated = early.truncated;
    // The robots meta came after the links resolved early: it applies to them too.
    if (nofollowAll) for (const link of byUrl.values()) link.nofollow = true;
  }
  for (const r of raw) {
    // A refresh's URL was decoded with its content attribute (or came from a header): it is not an attribute value.
    const spelling = r.refresh ? r.value : decodeAttribute(r.value);
    let link = bySpelling.get(spelling);
    if (link === undefined) {
      if (byUrl.size >= maxLinks) {
        truncated += 1;
        continue;
      }
      const url = canonicalCrawlUrl(encodeQueryIn(spelling, opts.charset), base, opts.trackingParams);
      link = url === null ? null : (byUrl.get(url) ?? null);
      if (url !== null && link === null) {
        link = { url, nofollow: true };
        byUrl.set(url, link);
      }
      bySpelling.set(spelling, link);
    }
    // A followed occurrence of a link beats a nofollow one.
    if (link !== null && !(r.nofollow || nofollowAll)) link.nofollow = false;
    if (r.refresh && refresh === null && link !== null) refresh = link.url;
  }
  const canonicalUrl = canonical === null ? null : canonicalCrawlUrl(encodeQueryIn(decodeAttribute(canonical), opts.charset), base, opts.trackingParams);
  return { links: [...byUrl.values()], canonical: canonicalUrl, nofollowAll, truncated, refresh };
}

/** X-Robots-Tag directives that take a value after a colon: `max-snippet: 20` is not a crawler named max-snippet. */
const VALUED_ROBOTS_DIRECTIVES = new Set(['unavailable_after', 'max-snippet', 'max-image-preview', 'max-video-preview']);

/**
 * Whether an `X-Robots-Tag` response header (repeats joined with ", ") says `nofollow` or `none` to every crawler, as
 * `<meta name=robots>` does in the page: `noindex, nofollow` does; `otherbot: nofollow` names one crawler, and the
 * directives after it are that crawler's, as Google reads them.
 */
export function robotsHeaderNofollow(value: string | undefined): boolean {
  if (!value) return false;
  let named = false;
  for (const token of value.toLowerCase().split(',')) {
    let directive = token.trim();
    const m = /^([\w.-]+)\s*:\s*(.*)$/.exec(directive);
    if (m && !VALUED_ROBOTS_DIRECTIVES.has(m[1]!)) {
      named = true;
      directive = m[2]!;
    }
    if (!named && (directive === 'nofollow' || directive === 'none')) return true;
  }
  return false;
}
