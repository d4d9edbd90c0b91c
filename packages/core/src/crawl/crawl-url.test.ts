import { describe, expect, it } from 'vitest';
import { canonicalCrawlUrl, compileTrackingParams, frontierKey, stripTrackingParams } from './crawl-url.js';

describe('stripTrackingParams', () => {
  it('removes utm_* and click ids, keeps the rest in order', () => {
    expect(stripTrackingParams('https://a.com/p?z=1&utm_source=x&UTM_Medium=y&fbclid=abc&a=2')).toBe('https://a.com/p?z=1&a=2');
    expect(stripTrackingParams('https://a.com/p?utm_source=x&gclid=1')).toBe('https://a.com/p');
    expect(stripTrackingParams('https://a.com/p?ref=home')).toBe('https://a.com/p?ref=home');
  });

  it('matches escaped names and takes a custom list', () => {
    expect(stripTrackingParams('https://a.com/p?utm%5Fsource=x&q=1')).toBe('https://a.com/p?q=1');
    const f = compileTrackingParams(['session*', 'sid']);
    expect(stripTrackingParams('https://a.com/p?sessionId=1&sid=2&utm_source=3', f)).toBe('https://a.com/p?utm_source=3');
  });

  it('removes session ids, in the query or as a path parameter', () => {
    expect(stripTrackingParams('https://a.com/shop/item;jsessionid=8F3A2B?id=4')).toBe('https://a.com/shop/item?id=4');
    expect(stripTrackingParams('https://a.com/dir;JSESSIONID=x/page.jsp')).toBe('https://a.com/dir/page.jsp');
    expect(stripTrackingParams('https://a.com/p?PHPSESSID=9d1e&page=2')).toBe('https://a.com/p?page=2');
    expect(stripTrackingParams('https://a.com/m;v=2/x;a=1')).toBe('https://a.com/m;v=2/x;a=1');
  });

  it('keeps a malformed escape as written', () => {
    expect(stripTrackingParams('https://a.com/p?%E0%A4%A=1')).toBe('https://a.com/p?%E0%A4%A=1');
  });
});

describe('canonicalCrawlUrl', () => {
  it('resolves, normalizes, drops fragments and tracking parameters', () => {
    expect(canonicalCrawlUrl('../b/./c?utm_campaign=q#top', 'https://Example.com/a/x/')).toBe('https://example.com/a/b/c');
    expect(canonicalCrawlUrl('//cdn.example.com/x', 'https://a.com/')).toBe('https://cdn.example.com/x');
    expect(canonicalCrawlUrl('  /p\n  ', 'http://a.com/q')).toBe('http://a.com/p');
  });

  it('refuses a URL longer than MAX_URL_LENGTH once normalized, unless only its tracking parameters made it so', () => {
    const token = 'a1B2'.repeat(600);
    expect(canonicalCrawlUrl(`/search?t=${token}`, 'https://a.test/')).toBeNull();
    expect(canonicalCrawlUrl(`/search?q=x&utm_content=${token}`, 'https://a.test/')).toBe('https://a.test/search?q=x');
    expect(canonicalCrawlUrl(`/${'p'.repeat(2_000)}`, 'https://a.test/')).toBe(`https://a.test/${'p'.repeat(2_000)}`);
  });

  it('refuses what cannot be fetched', () => {
    for (const raw of ['', '#top', 'mailto:a@b.c', 'javascript:void(0)', 'tel:123', 'data:text/html,x', 'http://']) {
      expect(canonicalCrawlUrl(raw, 'https://a.com/')).toBeNull();
    }
  });
});

describe('frontierKey', () => {
  it.each([
    ['https://a.com/docs/', 'https://a.com/docs'],
    ['https://a.com/docs', 'https://a.com/docs'],
    ['https://a.com/', 'https://a.com/'],
    ['https://a.com/d/?x=1', 'https://a.com/d?x=1'],
    ['https://a.com:8080/', 'https://a.com:8080/'],
    ['https://a.com/p?next=/x/', 'https://a.com/p?next=/x/'],
  ])('%s → %s', (url, key) => {
    expect(frontierKey(url)).toBe(key);
  });
});
