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
  let text = '';
  const local = (name: string): string => name.slice(name.indexOf(':') + 1).toLowerCase();
  const parser = createHtmlParser(
    {
      onopentag(name) {
        const n = local(name);
        if (n === 'url' || n === 'sitemap') parent = n;
        else if (n === 'loc' && parent !== null) {
          inLoc = true;
          text = '';
        }
      },
      ontext(data) {
        if (inLoc) text += data;
      },
      onclosetag(name) {
        const n = local(name);
        if (n === 'loc' && inLoc) {
          inLoc = false;
          const url = canonicalCrawlUrl(decodeXmlText(text.replace(/^<!\[CDATA\[|\]\]>$/g, '')), opts.baseUrl);
          if (url === null) return;
          if (urls.length + sitemaps.length >= maxEntries) truncated += 1;
          else (parent === 'url' ? urls : sitemaps).push(url);
        } else if (n === parent) parent = null;
      },
    },
    { xml: true },
  );
  parser.end(xml);
  return { urls, sitemaps, truncated };
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
