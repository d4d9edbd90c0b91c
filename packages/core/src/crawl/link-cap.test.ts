import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as crawlUrl from './crawl-url.js';
import { extractXmlLinks } from './extract-feed-links.js';
import { extractLinks } from './extract-links.js';

// The real canonicalization, counted: what a hostile page costs is how many URLs it makes the crawler resolve.
vi.mock('./crawl-url.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('./crawl-url.js')>();
  return { ...real, canonicalCrawlUrl: vi.fn(real.canonicalCrawlUrl) };
});
const resolved = vi.mocked(crawlUrl.canonicalCrawlUrl);

describe('a page or feed with far more links than maxLinks', () => {
  // A hook's returned function is its cleanup: mockClear returns the mock, so it is not returned.
  beforeEach(() => {
    resolved.mockClear();
  });

  it('resolves no URL past the cap, and none twice for a repeated href', () => {
    const hrefs = Array.from({ length: 20_000 }, (_, i) => `/p/${i}`);
    const page = `<nav>${'<a href="/home">home</a>'.repeat(500)}</nav>${hrefs.map((h) => `<a href="${h}">x</a>`).join('')}<a href="/home" rel="nofollow">`;
    const r = extractLinks(page, 'https://site.test/', { maxLinks: 100 });
    expect(r.links).toHaveLength(100);
    expect(r.links[0]).toEqual({ url: 'https://site.test/home', nofollow: false });
    expect(r.truncated).toBe(20_000 - 99);
    expect(resolved.mock.calls.length).toBeLessThanOrEqual(101);

    resolved.mockClear();
    const feed = `<rss><channel>${hrefs.map((h) => `<item><link>${h}</link></item>`).join('')}</channel></rss>`;
    const f = extractXmlLinks(feed, 'https://site.test/feed', { maxLinks: 100 });
    expect(f.links).toHaveLength(100);
    expect(f.truncated).toBe(20_000 - 100);
    expect(resolved.mock.calls.length).toBeLessThanOrEqual(101);
  });

  it('still lets a followed spelling of a link found before the cap clear its nofollow', () => {
    const page = `<a href="/a" rel="nofollow">a</a><a href="/b">b</a><a href="/c">c</a><a href="/a">a again</a>`;
    expect(extractLinks(page, 'https://site.test/', { maxLinks: 2 }).links).toEqual([
      { url: 'https://site.test/a', nofollow: false },
      { url: 'https://site.test/b', nofollow: false },
    ]);
  });
});
