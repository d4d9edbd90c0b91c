import { describe, expect, it } from 'vitest';
import { compileScope, compileUrlPattern, siteOf } from './crawl-scope.js';
import { canonicalCrawlUrl } from './crawl-url.js';

describe('siteOf', () => {
  it('uses the Public Suffix List', () => {
    expect(siteOf('www.bbc.co.uk')).toBe('bbc.co.uk');
    expect(siteOf('a.b.example.com')).toBe('example.com');
    expect(siteOf('alice.github.io')).toBe('alice.github.io');
    expect(siteOf('127.0.0.5')).toBe('127.0.0.5');
    expect(siteOf('localhost')).toBe('localhost');
  });
});

describe('compileScope', () => {
  const seeds = ['https://www.example.co.uk/start'];
  it('same-site admits subdomains of the registrable domain only', () => {
    const s = compileScope({ scope: 'same-site', seeds });
    expect(s.check('https://blog.example.co.uk/x')).toBeNull();
    expect(s.check('http://example.co.uk/')).toBeNull();
    expect(s.check('https://other.co.uk/')).toBe('scope');
    expect(s.check('https://example.co.uk.evil.com/')).toBe('scope');
  });

  it('same-host and same-origin', () => {
    const host = compileScope({ scope: 'same-host', seeds });
    expect(host.check('http://www.example.co.uk:8080/a')).toBeNull();
    expect(host.check('https://blog.example.co.uk/')).toBe('scope');
    const origin = compileScope({ scope: 'same-origin', seeds });
    expect(origin.check('https://www.example.co.uk/z')).toBeNull();
    expect(origin.check('http://www.example.co.uk/z')).toBe('scope');
    expect(origin.check('https://www.example.co.uk:8443/z')).toBe('scope');
  });

  it('any seed counts, and all lets anything through the scope', () => {
    const s = compileScope({ scope: 'same-host', seeds: ['http://127.0.0.2:1/', 'http://127.0.0.3:1/'] });
    expect(s.check('http://127.0.0.3:9/x')).toBeNull();
    expect(s.check('http://127.0.0.4:1/x')).toBe('scope');
    expect(compileScope({ scope: 'all', seeds }).check('https://anything.example/')).toBeNull();
  });

  it('ANDs scope, include and exclude', () => {
    const s = compileScope({ scope: 'same-site', seeds, include: ['/docs/**', 're:/api/v\\d+/'], exclude: ['**/private/**', '**.pdf'] });
    expect(s.check('https://www.example.co.uk/docs/a/b')).toBeNull();
    expect(s.check('https://www.example.co.uk/x/api/v2/y')).toBeNull();
    expect(s.check('https://www.example.co.uk/blog/a')).toBe('include');
    expect(s.check('https://www.example.co.uk/docs/private/a')).toBe('exclude');
    expect(s.check('https://www.example.co.uk/docs/a.pdf')).toBe('exclude');
    expect(s.check('https://elsewhere.com/docs/a')).toBe('scope');
  });

  it('a page is one page to include and exclude, with or without its trailing slash (as to the frontier)', () => {
    // WordPress-style links end in "/": `/blog/draft-*` must not let /blog/draft-1/ through while refusing /blog/draft-1.
    const s = compileScope({ scope: 'same-site', seeds, include: ['/blog/*', '/docs'], exclude: ['/blog/draft-*'] });
    expect(s.check('https://www.example.co.uk/blog/post-1/')).toBeNull();
    expect(s.check('https://www.example.co.uk/blog/post-1/?page=2')).toBeNull();
    expect(s.check('https://www.example.co.uk/docs/')).toBeNull();
    expect(s.check('https://www.example.co.uk/blog/draft-1/')).toBe('exclude');
    expect(s.check('https://www.example.co.uk/blog/draft-1')).toBe('exclude');
    expect(s.check('https://www.example.co.uk/blog/post-1/comments/')).toBe('include');
  });
});

describe('compileUrlPattern', () => {
  it('globs: * stays within a segment, ** crosses, ? is one character, the rest literal', () => {
    expect(compileUrlPattern('https://a.com/*/x').test('https://a.com/p/x')).toBe(true);
    expect(compileUrlPattern('https://a.com/*/x').test('https://a.com/p/q/x')).toBe(false);
    expect(compileUrlPattern('https://a.com/**').test('https://a.com/p/q/x?y=1')).toBe(true);
    expect(compileUrlPattern('/p?ge').test('http://a.com/page')).toBe(true);
    expect(compileUrlPattern('/a.b').test('http://a.com/axb')).toBe(false);
    expect(compileUrlPattern('/a/*').test('http://a.com/a/b')).toBe(true);
    expect(compileUrlPattern('/a/*').test('http://a.com/b/a/b')).toBe(false);
  });

  it('globs match the canonical URL whatever case, IDN spelling, default port or escapes the user typed', () => {
    const matches = (pattern: string, raw: string) => compileScope({ scope: 'all', seeds: [], include: [pattern] }).check(canonicalCrawlUrl(raw)!) === null;
    expect(matches('https://Docs.Example.COM/guide/**', 'https://docs.example.com/guide/a')).toBe(true);
    expect(matches('HTTPS://docs.example.com:443/guide/*', 'https://DOCS.example.com/guide/a')).toBe(true);
    expect(matches('https://bücher.de/**', 'https://xn--bcher-kva.de/buch')).toBe(true);
    expect(matches('https://*.Bücher.de/**', 'https://shop.bücher.de/buch')).toBe(true);
    expect(matches('/%7euser/*', 'https://a.com/~user/p')).toBe(true);
    expect(matches('/café/*', 'https://a.com/caf%c3%a9/p')).toBe(true);
    expect(matches('https://docs.example.com/guide/**', 'https://docs.example.org/guide/a')).toBe(false);
  });

  it('regexes are searched, and a broken one is a RangeError', () => {
    expect(compileUrlPattern('re:\\d{3}').test('http://a.com/p/123')).toBe(true);
    expect(() => compileUrlPattern('re:(')).toThrow(RangeError);
  });
});
