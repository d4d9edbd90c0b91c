import { describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import { DEFAULT_TRACKING_PARAMS, compileTrackingParams, silentLogger } from '@crawler/core';
import { readSitemaps } from './sitemaps.js';

const enc = new TextEncoder();

describe('readSitemaps', () => {
  it('follows an index whose <loc>s are paths, resolved against the index URL', async () => {
    const files: Record<string, Uint8Array> = {
      'https://a.test/robots.txt': enc.encode('User-agent: *\nSitemap: https://a.test/maps/index.xml\n'),
      'https://a.test/maps/index.xml': enc.encode('<sitemapindex><sitemap><loc>/maps/posts.xml.gz</loc></sitemap><sitemap><loc>pages.xml</loc></sitemap></sitemapindex>'),
      'https://a.test/maps/posts.xml.gz': gzipSync('<urlset><url><loc>/posts/1</loc></url></urlset>'),
      'https://a.test/maps/pages.xml': enc.encode('<urlset><url><loc>https://a.test/about</loc></url></urlset>'),
    };
    const fetch = async (url: string) => (files[url] ? { status: 200, body: files[url] } : { status: 404, body: new Uint8Array() });
    const report = await readSitemaps(['https://a.test/'], { fetch, logger: silentLogger });
    expect(report).toEqual({
      urls: ['https://a.test/posts/1', 'https://a.test/about'],
      files: ['https://a.test/maps/index.xml', 'https://a.test/maps/posts.xml.gz', 'https://a.test/maps/pages.xml'],
      errors: [],
      truncated: false,
      lastModified: new Map(),
    });
  });

  it('reads an RSS or Atom feed listed as a sitemap (as search engines accept them) for its entries', async () => {
    const files: Record<string, Uint8Array> = {
      'https://a.test/robots.txt': enc.encode('Sitemap: https://a.test/feed/\nSitemap: https://a.test/atom.xml\n'),
      'https://a.test/feed/': enc.encode(`<?xml version="1.0"?><rss version="2.0"><channel><link>https://a.test/</link>
        <item><link>https://a.test/posts/1</link></item><item><guid>https://a.test/posts/2</guid></item></channel></rss>`),
      'https://a.test/atom.xml': enc.encode('<feed xmlns="http://www.w3.org/2005/Atom"><link rel="self" href="/atom.xml"/><entry><link href="/posts/3"/></entry></feed>'),
    };
    const fetch = async (url: string) => (files[url] ? { status: 200, body: files[url] } : { status: 404, body: new Uint8Array() });
    const report = await readSitemaps(['https://a.test/'], { fetch, logger: silentLogger, limits: { maxUrls: 3 } });
    expect(report).toEqual({
      urls: ['https://a.test/', 'https://a.test/posts/1', 'https://a.test/posts/2'],
      files: ['https://a.test/feed/', 'https://a.test/atom.xml'],
      errors: [],
      truncated: true,
      lastModified: new Map(),
    });
  });

  it('reads a seed that is itself a sitemap, at whatever path, instead of looking for its origin\'s', async () => {
    const files: Record<string, Uint8Array> = {
      'https://a.test/robots.txt': enc.encode('Sitemap: https://a.test/other.xml\n'),
      'https://a.test/other.xml': enc.encode('<urlset><url><loc>https://a.test/not-asked-for</loc></url></urlset>'),
      'https://a.test/maps/sitemap_index.xml': enc.encode('<sitemapindex><sitemap><loc>/maps/sitemap-posts.xml.gz</loc></sitemap></sitemapindex>'),
      'https://a.test/maps/sitemap-posts.xml.gz': gzipSync('<urlset><url><loc>/posts/1</loc></url></urlset>'),
      'https://b.test/sitemap.xml': enc.encode('<urlset><url><loc>https://b.test/page</loc></url></urlset>'),
    };
    const fetch = async (url: string) => (files[url] ? { status: 200, body: files[url] } : { status: 404, body: new Uint8Array() });
    const report = await readSitemaps(['https://a.test/maps/sitemap_index.xml', 'https://b.test/'], { fetch, logger: silentLogger });
    expect(report).toEqual({
      urls: ['https://b.test/page', 'https://a.test/posts/1'],
      files: ['https://a.test/maps/sitemap_index.xml', 'https://b.test/sitemap.xml', 'https://a.test/maps/sitemap-posts.xml.gz'],
      errors: [],
      truncated: false,
      lastModified: new Map(),
    });
  });

  it('keeps each page\'s <lastmod> under its canonical URL, the latest when two files list it', async () => {
    const files: Record<string, Uint8Array> = {
      'https://a.test/robots.txt': enc.encode('Sitemap: https://a.test/one.xml\nSitemap: https://a.test/two.xml\n'),
      'https://a.test/one.xml': enc.encode('<urlset><url><loc>https://a.test/p?utm_source=x</loc><lastmod>2026-11-27</lastmod></url><url><loc>https://a.test/q</loc></url></urlset>'),
      'https://a.test/two.xml': enc.encode('<urlset><url><loc>https://a.test/p</loc><lastmod>2026-11-28T08:00:00Z</lastmod></url></urlset>'),
    };
    const fetch = async (url: string) => (files[url] ? { status: 200, body: files[url] } : { status: 404, body: new Uint8Array() });
    const report = await readSitemaps(['https://a.test/'], { fetch, logger: silentLogger, tracking: compileTrackingParams(DEFAULT_TRACKING_PARAMS) });
    expect(report.urls).toEqual(['https://a.test/p', 'https://a.test/q']);
    expect(report.lastModified).toEqual(new Map([['https://a.test/p', Date.parse('2026-11-28T08:00:00Z')]]));
  });

  it('re-reads conditionally: a 304 index costs one request, its children are asked with their own validators', async () => {
    let posts = '<urlset><url><loc>https://a.test/posts/1</loc></url></urlset>';
    const files: Record<string, { body: string; etag?: string; lastModified?: string }> = {
      'https://a.test/robots.txt': { body: 'Sitemap: https://a.test/index.xml\n', lastModified: 'Sat, 01 Nov 2026 00:00:00 GMT' },
      'https://a.test/index.xml': { body: '<sitemapindex><sitemap><loc>/posts.xml</loc></sitemap><sitemap><loc>/pages.xml</loc></sitemap></sitemapindex>', etag: '"i1"' },
      'https://a.test/posts.xml': { body: posts, etag: '"p1"' },
      // No validator: always read in full.
      'https://a.test/pages.xml': { body: '<urlset><url><loc>https://a.test/about</loc></url></urlset>' },
    };
    const asked: string[] = [];
    const fetch = async (url: string, headers?: Record<string, string>) => {
      const f = files[url];
      if (!f) return { status: 404, body: new Uint8Array() };
      const fresh = (f.etag !== undefined && headers?.['if-none-match'] === f.etag) || (f.lastModified !== undefined && headers?.['if-modified-since'] === f.lastModified);
      asked.push(`${url.slice('https://a.test'.length)} ${fresh ? 304 : 200}`);
      const h: Record<string, string> = { ...(f.etag ? { etag: f.etag } : {}), ...(f.lastModified ? { 'last-modified': f.lastModified } : {}) };
      return fresh ? { status: 304, body: new Uint8Array(), headers: h } : { status: 200, body: enc.encode(f.body), headers: h };
    };
    const first = await readSitemaps(['https://a.test/'], { fetch, logger: silentLogger, previous: new Map() });
    expect(first.urls).toEqual(['https://a.test/posts/1', 'https://a.test/about']);
    expect(first.unchanged).toEqual([]);
    expect(first.fileStates).toEqual(new Map([
      ['https://a.test/robots.txt', { lastModified: 'Sat, 01 Nov 2026 00:00:00 GMT', children: ['https://a.test/index.xml'] }],
      ['https://a.test/index.xml', { etag: '"i1"', children: ['https://a.test/posts.xml', 'https://a.test/pages.xml'] }],
      ['https://a.test/posts.xml', { etag: '"p1"', children: [] }],
    ]));

    // Nothing changed but the file without a validator: one request per file, only that file's pages.
    asked.length = 0;
    const second = await readSitemaps(['https://a.test/'], { fetch, logger: silentLogger, previous: first.fileStates });
    expect(asked).toEqual(['/robots.txt 304', '/index.xml 304', '/posts.xml 304', '/pages.xml 200']);
    expect(second.urls).toEqual(['https://a.test/about']);
    expect(second.unchanged).toEqual(['https://a.test/robots.txt', 'https://a.test/index.xml', 'https://a.test/posts.xml']);
    expect(second.fileStates).toEqual(first.fileStates);

    // A child changed under an unchanged index: the index still 304s, the child is read in full.
    posts = '<urlset><url><loc>https://a.test/posts/1</loc></url><url><loc>https://a.test/posts/2</loc></url></urlset>';
    files['https://a.test/posts.xml'] = { body: posts, etag: '"p2"' };
    asked.length = 0;
    const third = await readSitemaps(['https://a.test/'], { fetch, logger: silentLogger, previous: second.fileStates });
    expect(asked).toEqual(['/robots.txt 304', '/index.xml 304', '/posts.xml 200', '/pages.xml 200']);
    expect(third.urls).toEqual(['https://a.test/posts/1', 'https://a.test/posts/2', 'https://a.test/about']);
    expect(third.fileStates!.get('https://a.test/posts.xml')).toEqual({ etag: '"p2"', children: [] });

    // Without `previous` (a crawl's creation) nothing is conditional and no state is kept.
    asked.length = 0;
    const plain = await readSitemaps(['https://a.test/'], { fetch, logger: silentLogger });
    expect(asked.every((a) => a.endsWith(' 200'))).toBe(true);
    expect(plain.fileStates).toBeUndefined();
  });
});
