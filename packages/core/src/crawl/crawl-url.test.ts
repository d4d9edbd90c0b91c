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

  it('removes a session id written into every link (`sid=<token>` and the like), but not a short or word value', () => {
    expect(stripTrackingParams('https://a.com/shop?sid=65fa752c324e51ea8f6b772165309770&p=2')).toBe('https://a.com/shop?p=2');
    expect(stripTrackingParams('https://a.com/f/t.php?t=12&s=0a1b2c3d4e5f60718293a4b5c6d7e8f9')).toBe('https://a.com/f/t.php?t=12');
    expect(stripTrackingParams('https://a.com/p?osCsid=k2m4n6p8q0r2s4t6v8w0x2y4z6&x=1')).toBe('https://a.com/p?x=1');
    expect(stripTrackingParams('https://a.com/p?ASPSESSIONIDQQGGQGPG=LBBMNNLCHMHBJHFLNHPPAJGI&CFID=12345&CFTOKEN=87654321')).toBe('https://a.com/p');
    // Story ids, search words, dates and slugs are not tokens.
    for (const url of ['https://a.com/article.pl?sid=05/03/01/1234', 'https://a.com/p?sid=5', 'https://a.com/search?s=lighthouse+keepers+cottage',
      'https://a.com/p?s=2024-05-01', 'https://a.com/p?sid=abcdefghijklmnopqrstuvwxyz']) {
      expect(stripTrackingParams(url)).toBe(url);
    }
    // A custom list without the entries keeps them.
    expect(stripTrackingParams('https://a.com/p?sid=65fa752c324e51ea8f6b772165309770', compileTrackingParams(['utm_*']))).toBe('https://a.com/p?sid=65fa752c324e51ea8f6b772165309770');
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
    // Parameter order is no part of a page's identity; the order of one name's values is.
    ['https://a.com/list?b=2&a=1', 'https://a.com/list?a=1&b=2'],
    ['https://a.com/d/?z=&b=2&a=1&a=0', 'https://a.com/d?a=1&a=0&b=2&z='],
    ['https://a.com/p?b&a=1', 'https://a.com/p?a=1&b'],
  ])('%s → %s', (url, key) => {
    expect(frontierKey(url)).toBe(key);
  });
});
