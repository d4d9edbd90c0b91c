import { canonicalCrawlUrl } from './crawl-url.js';
import { createHtmlParser, decodeXmlText } from './html-events.js';

/** What one sitemap file lists. */
export interface SitemapEntries {
  /** Page URLs (`<urlset><url><loc>`), canonical form, in document order. */
  urls: string[];
  /** Child sitemaps (`<sitemapindex><sitemap><loc>`). */
  sitemaps: string[];
  /** Entries beyond `maxEntries` that were dropped. */
  truncated: number;
  /**
   * `<lastmod>` of the page URLs that carry a readable one (W3C datetime: a date, or a date and time with a zone), as
   * epoch milliseconds; a later duplicate of a URL keeps the latest date.
   */
  lastModified: Map<string, number>;
}

/** A sitemap `<lastmod>` (W3C datetime: `2026-11-28`, `2026-11-28T10:00:00+01:00`) as epoch ms; null when unreadable. */
export function parseLastmod(text: string): number | null {
  const t = text.trim();
  // Only the W3C profile the protocol names: Date.parse alone would also read "Nov 28" or "1" as some date.
  if (!/^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2}))?$/.test(t)) return null;
  const ms = Date.parse(t.length === 10 ? `${t}T00:00:00Z` : t);
  return Number.isNaN(ms) ? null : ms;
}

/**
 * The entries of a sitemap or sitemap index (sitemaps.org 0.9), from one streaming parse in XML mode. Namespace
 * prefixes are ignored (`<sm:loc>` is `<loc>`); a `<loc>` outside `<url>`/`<sitemap>`, or not an http(s) URL, is
 * skipped. The protocol wants every `<loc>` absolute; one written as a path (`<loc>/sitemap-posts.xml</loc>`, as some
 * generators write them) is resolved against `baseUrl`, the sitemap's own URL, when given. At most `maxEntries`
 * entries (the protocol's own limit is 50,000 per file). Pure.
 */
export function parseSitemap(xml: string, opts: { maxEntries?: number; baseUrl?: string } = {}): SitemapEntries {
  const maxEntries = opts.maxEntries ?? 50_000;
  const urls: string[] = [];
  const sitemaps: string[] = [];
  let truncated = 0;
  let parent: 'url' | 'sitemap' | null = null;
  let inLoc = false;
  let inLastmod = false;
  let text = '';
  const lastModified = new Map<string, number>();
  // The <loc> and <lastmod> of the <url> being read, in whichever order they come.
  let entryUrl: string | null = null;
  let entryLastmod: number | null = null;
  const local = (name: string): string => name.slice(name.indexOf(':') + 1).toLowerCase();
  const parser = createHtmlParser(
    {
      onopentag(name) {
        const n = local(name);
        if (n === 'url' || n === 'sitemap') {
          parent = n;
          entryUrl = null;
          entryLastmod = null;
        } else if (n === 'loc' && parent !== null) {
          inLoc = true;
          text = '';
        } else if (n === 'lastmod' && parent === 'url') {
          inLastmod = true;
          text = '';
        }
      },
      ontext(data) {
        if (inLoc || inLastmod) text += data;
      },
      onclosetag(name) {
        const n = local(name);
        if (n === 'loc' && inLoc) {
          inLoc = false;
          const url = canonicalCrawlUrl(decodeXmlText(text.replace(/^<!\[CDATA\[|\]\]>$/g, '')), opts.baseUrl);
          if (url === null) return;
          if (urls.length + sitemaps.length >= maxEntries) truncated += 1;
          else {
            (parent === 'url' ? urls : sitemaps).push(url);
            if (parent === 'url') entryUrl = url;
          }
        } else if (n === 'lastmod' && inLastmod) {
          inLastmod = false;
          entryLastmod = parseLastmod(text.replace(/^<!\[CDATA\[|\]\]>$/g, ''));
        } else if (n === parent) {
          if (parent === 'url' && entryUrl !== null && entryLastmod !== null) lastModified.set(entryUrl, Math.max(entryLastmod, lastModified.get(entryUrl) ?? -Infinity));
          parent = null;
        }
      },
    },
    { xml: true },
  );
  parser.end(xml);
  return { urls, sitemaps, truncated, lastModified };
}

/**
 * The `Sitemap:` lines of a robots.txt (any case, anywhere in the file), as canonical URLs. The protocol wants them
 * absolute; one written as a path (`Sitemap: /sitemap_index.xml`, common in the wild) is resolved against `robotsUrl`
 * when given, as Scrapy does.
 */
export function sitemapsFromRobots(robotsTxt: string, robotsUrl?: string): string[] {
  const out: string[] = [];
  for (const line of robotsTxt.split(/\r?\n|\r/)) {
    const m = /^\s*sitemap\s*:\s*(\S+)/i.exec(line);
    const url = m ? canonicalCrawlUrl(m[1]!, m[1]!.startsWith('/') ? robotsUrl : undefined) : null;
    if (url !== null && !out.includes(url)) out.push(url);
  }
  return out;
}
