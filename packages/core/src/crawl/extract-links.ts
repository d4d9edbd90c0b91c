import { canonicalCrawlUrl, type TrackingParamFilter } from './crawl-url.js';
import { createHtmlParser, decodeAttribute } from './html-events.js';

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

/**
 * Where a `<base>` open tag may be (htmlparser2 ends a tag name at whitespace, `/` or `>`): a page without one has
 * its links resolved as the parse goes. Text that only looks like one (in a script) costs the slower way, no more.
 */
const BASE_TAG = /<base[\s/>]/i;

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
  const byUrl = new Map<string, ExtractedLink>();
  // Each spelling is resolved once (a navigation repeats its hrefs), and none past the cap: a hostile page's millionth
  // anchor costs a map lookup, not a URL parse and normalization on the worker's event loop.
  const bySpelling = new Map<string, ExtractedLink | null>();
  let refresh: string | null = null;
  /** One occurrence, in document order, resolved against `base`. `nofollowAll` is applied once the parse is over. */
  const take = (value: string, nofollow: boolean, isRefresh: boolean): void => {
    // A refresh's URL was decoded with its content attribute (or came from a header): it is not an attribute value.
    const spelling = isRefresh ? value : decodeAttribute(value);
    let link = bySpelling.get(spelling);
    if (link === undefined) {
      if (byUrl.size >= maxLinks) {
        truncated += 1;
        return;
      }
      const url = canonicalCrawlUrl(spelling, base, opts.trackingParams);
      link = url === null ? null : (byUrl.get(url) ?? null);
      if (url !== null && link === null) {
        link = { url, nofollow: true };
        byUrl.set(url, link);
      }
      bySpelling.set(spelling, link);
    }
    // A followed occurrence of a link beats a nofollow one.
    if (link !== null && !nofollow) link.nofollow = false;
    if (isRefresh && refresh === null && link !== null) refresh = link.url;
  };
  // Links are resolved as they come, unless the page may have a `<base>`: only the first one counts, and it applies
  // to the links before it too (broken markup puts it after some), so then the raw values wait for the parse's end.
  // Otherwise a page of 500,000 anchors would hold 500,000 raw values at once.
  const deferred: Array<{ value: string; nofollow: boolean; refresh: boolean }> | null = BASE_TAG.test(html) ? [] : null;
  const found = (value: string, nofollow: boolean, isRefresh = false): void => {
    if (deferred === null) take(value, nofollow, isRefresh);
    else deferred.push({ value, nofollow, refresh: isRefresh });
  };
  const fromHeader = opts.refreshHeader === undefined ? null : refreshTarget(opts.refreshHeader);
  if (fromHeader !== null) found(fromHeader, false, true);
  const parser = createHtmlParser({
    onopentag(name, attribs) {
      const attr = LINK_ATTRIBUTE[name];
      if (attr !== undefined) {
        const value = attribs[attr];
        if (value !== undefined) found(value, name !== 'iframe' && name !== 'frame' && relTokens(attribs.rel).includes('nofollow'));
        return;
      }
      if (name === 'link') {
        const rel = relTokens(attribs.rel);
        const href = attribs.href;
        if (href === undefined) return;
        if (rel.includes('canonical') && canonical === null) canonical = href;
        else if (rel.includes('next')) found(href, rel.includes('nofollow'));
        // The page's feed lists the site's newest pages: a crawl reads it as it reads a sitemap.
        else if (followFeeds && rel.includes('alternate') && FEED_TYPES.has(decodeAttribute(attribs.type ?? '').trim().toLowerCase())) found(href, rel.includes('nofollow'));
      } else if (name === 'base' && !baseSeen && attribs.href !== undefined) {
        baseSeen = true;
        try {
          base = new URL(decodeAttribute(attribs.href).trim(), pageUrl).href;
        } catch {
          // An unusable <base> is ignored, as browsers do.
        }
      } else if (name === 'meta' && decodeAttribute(attribs['http-equiv'] ?? '').trim().toLowerCase() === 'refresh') {
        const target = refreshTarget(decodeAttribute(attribs.content ?? ''));
        if (target !== null) found(target, false, true);
      } else if (name === 'meta' && (attribs.name ?? '').toLowerCase() === 'robots') {
        const content = decodeAttribute(attribs.content ?? '').toLowerCase();
        if (/\b(nofollow|none)\b/.test(content)) nofollowAll = true;
      }
    },
  });
  parser.end(html);
  if (deferred !== null) for (const r of deferred) take(r.value, r.nofollow, r.refresh);
  // `<meta name=robots content=nofollow>` anywhere in the page makes every link nofollow.
  if (nofollowAll) for (const link of byUrl.values()) link.nofollow = true;
  const canonicalUrl = canonical === null ? null : canonicalCrawlUrl(decodeAttribute(canonical), base, opts.trackingParams);
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
