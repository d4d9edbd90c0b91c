import { canonicalCrawlUrl } from './crawl-url.js';
import type { ExtractLinksOptions, PageLinks } from './extract-links.js';

/** A JSON Feed names its version as a URL under this prefix (`https://jsonfeed.org/version/1.1`). */
const JSON_FEED_VERSION = /^https?:\/\/jsonfeed\.org\/version\//i;

/**
 * The links of a JSON Feed (jsonfeed.org, versions 1 and 1.1), as a crawl reads an RSS or Atom feed: the site's
 * `home_page_url`, the next page of the feed (`next_url`) and each item's `url` (its page, as RSS's `<link>`), resolved
 * against the feed's URL. Not `feed_url` (the feed itself), `external_url` (a page elsewhere the item only talks
 * about), attachments or images. Null when the text is not a JSON Feed (other JSON, or not JSON at all). Pure.
 */
export function extractJsonFeedLinks(text: string, pageUrl: string, opts: ExtractLinksOptions = {}): PageLinks | null {
  let feed: unknown;
  try {
    feed = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(feed) || typeof feed.version !== 'string' || !JSON_FEED_VERSION.test(feed.version)) return null;
  const maxLinks = opts.maxLinks ?? 5000;
  const values: unknown[] = [feed.home_page_url, feed.next_url];
  if (Array.isArray(feed.items)) for (const item of feed.items) if (isObject(item)) values.push(item.url);
  const byUrl = new Map<string, { url: string; nofollow: boolean }>();
  let truncated = 0;
  for (const value of values) {
    if (typeof value !== 'string') continue;
    const url = canonicalCrawlUrl(value, pageUrl, opts.trackingParams);
    if (url === null || byUrl.has(url)) continue;
    if (byUrl.size >= maxLinks) {
      truncated += 1;
      continue;
    }
    byUrl.set(url, { url, nofollow: false });
  }
  return { links: [...byUrl.values()], canonical: null, nofollowAll: false, truncated };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
