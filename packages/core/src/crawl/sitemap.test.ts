import { describe, expect, it } from 'vitest';
import { parseSitemap, sitemapsFromRobots } from './sitemap.js';

describe('parseSitemap', () => {
  it('reads a urlset', () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
      <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
        <url><loc> https://a.test/one?x=1&amp;y=2 </loc><lastmod>2024-01-01</lastmod></url>
        <url><loc><![CDATA[https://a.test/two#frag]]></loc></url>
        <url><loc>ftp://a.test/no</loc></url>
        <loc>https://a.test/stray</loc>
      </urlset>`;
    expect(parseSitemap(xml)).toEqual({ urls: ['https://a.test/one?x=1&y=2', 'https://a.test/two'], sitemaps: [], truncated: 0, lastModified: new Map([['https://a.test/one?x=1&y=2', Date.parse('2024-01-01T00:00:00Z')]]) });
  });

  it("reads each page's <lastmod>, before or after its <loc>, and skips one that is no W3C date", () => {
    const xml = `<urlset>
      <url><lastmod>2026-11-28T10:30:00+01:00</lastmod><loc>https://a.test/first</loc></url>
      <url><loc>https://a.test/second</loc><lastmod> 2026-11-27 </lastmod></url>
      <url><loc>https://a.test/bad</loc><lastmod>yesterday</lastmod></url>
      <url><loc>https://a.test/none</loc></url>
      <url><loc>https://a.test/second</loc><lastmod>2026-11-20</lastmod></url>
    </urlset>`;
    expect(parseSitemap(xml).lastModified).toEqual(new Map([
      ['https://a.test/first', Date.parse('2026-11-28T09:30:00Z')],
      ['https://a.test/second', Date.parse('2026-11-27T00:00:00Z')],
    ]));
  });

  it('reads a sitemap index, with namespace prefixes', () => {
    const xml = `<sm:sitemapindex xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:sitemap><sm:loc>https://a.test/s1.xml.gz</sm:loc></sm:sitemap>
      <sm:sitemap><sm:loc>https://a.test/s2.xml</sm:loc></sm:sitemap></sm:sitemapindex>`;
    expect(parseSitemap(xml).sitemaps).toEqual(['https://a.test/s1.xml.gz', 'https://a.test/s2.xml']);
  });

  it('resolves a <loc> written as a path against the sitemap URL, in an index and in a urlset', () => {
    const index = `<sitemapindex><sitemap><loc>/sitemap-posts.xml</loc></sitemap><sitemap><loc>pages.xml</loc></sitemap></sitemapindex>`;
    expect(parseSitemap(index, { baseUrl: 'https://a.test/maps/index.xml' }).sitemaps).toEqual(['https://a.test/sitemap-posts.xml', 'https://a.test/maps/pages.xml']);
    expect(parseSitemap('<urlset><url><loc>/about</loc></url></urlset>', { baseUrl: 'https://a.test/sitemap.xml' }).urls).toEqual(['https://a.test/about']);
    // Without a base there is nothing to resolve against: skipped, as before.
    expect(parseSitemap(index).sitemaps).toEqual([]);
  });

  it('caps the entries', () => {
    const xml = `<urlset>${Array.from({ length: 20 }, (_, i) => `<url><loc>https://a.test/${i}</loc></url>`).join('')}</urlset>`;
    const r = parseSitemap(xml, { maxEntries: 5 });
    expect(r.urls).toHaveLength(5);
    expect(r.truncated).toBe(15);
  });

  it('gives nothing for garbage', () => {
    expect(parseSitemap('<html><body>not a sitemap</body></html>')).toEqual({ urls: [], sitemaps: [], truncated: 0, lastModified: new Map() });
    expect(parseSitemap('')).toEqual({ urls: [], sitemaps: [], truncated: 0, lastModified: new Map() });
  });
});

describe('sitemapsFromRobots', () => {
  it('collects Sitemap lines in any case, once each', () => {
    const txt = 'User-agent: *\nDisallow: /x\nSitemap: https://a.test/s.xml\r\nsitemap:https://a.test/s.xml\n  SITEMAP: https://a.test/news.xml.gz # c\nSitemap: not-a-url';
    expect(sitemapsFromRobots(txt)).toEqual(['https://a.test/s.xml', 'https://a.test/news.xml.gz']);
  });

  it('resolves a Sitemap line written as a path against the robots.txt URL', () => {
    const txt = 'User-agent: *\nSitemap: /sitemap_index.xml\nSitemap: not-a-url';
    expect(sitemapsFromRobots(txt, 'https://a.test/robots.txt')).toEqual(['https://a.test/sitemap_index.xml']);
  });
});
