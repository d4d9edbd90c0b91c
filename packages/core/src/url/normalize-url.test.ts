import { describe, expect, it } from 'vitest';
import { InvalidUrlError } from '../contracts/errors.js';
import { domainOf, normalizeUrl } from './normalize-url.js';

describe('normalizeUrl', () => {
  it.each([
    ['HTTP://Example.COM/a', 'http://example.com/a'],
    ['  https://example.com/a  ', 'https://example.com/a'],
    ['https://example.com', 'https://example.com/'],
    ['http://example.com:80/x', 'http://example.com/x'],
    ['https://example.com:443/x', 'https://example.com/x'],
    ['https://example.com:8443/x', 'https://example.com:8443/x'],
    ['https://example.com/a/./b/../c', 'https://example.com/a/c'],
    ['https://example.com/a/%2e%2E/c', 'https://example.com/c'],
    ['https://example.com/page#section', 'https://example.com/page'],
    ['https://example.com/page?', 'https://example.com/page'],
    ['https://example.com/p?z=1&a=2&m=3', 'https://example.com/p?z=1&a=2&m=3'],
    ['https://example.com/%7euser/%41', 'https://example.com/~user/A'],
    ['https://example.com/a%2fb%3a', 'https://example.com/a%2Fb%3A'],
    ['https://example.com/?q=%7e%2f', 'https://example.com/?q=~%2F'],
    ['https://Bücher.de/straße', 'https://xn--bcher-kva.de/stra%C3%9Fe'],
    ['https://example.com./x', 'https://example.com/x'],
    ['http://192.168.0.1:8080/', 'http://192.168.0.1:8080/'],
    ['http://[::1]/x', 'http://[::1]/x'],
    ['http://[2001:DB8::1]/', 'http://[2001:db8::1]/'],
  ])('%s → %s', (raw, want) => {
    expect(normalizeUrl(raw)).toBe(want);
  });

  it('gives the same string for the same page written differently', () => {
    const variants = ['https://EXAMPLE.com:443/a/b/../c#top', 'https://example.com/a/./c', ' https://example.com/a/c? '];
    expect(new Set(variants.map(normalizeUrl)).size).toBe(1);
  });

  it('drops credentials: they are not part of the page and must not be stored', () => {
    expect(normalizeUrl('https://user:secret@example.com/a')).toBe('https://example.com/a');
    expect(normalizeUrl('https://user@example.com/a')).toBe('https://example.com/a');
  });

  it('is idempotent', () => {
    for (const u of ['https://Bücher.de/a/../b?x=%7e#f', 'http://example.com:80']) {
      expect(normalizeUrl(normalizeUrl(u))).toBe(normalizeUrl(u));
    }
  });

  it.each(['', '   ', 'not a url', '/relative/path', '//example.com/x', 'ftp://example.com/f', 'mailto:a@b.c', 'javascript:alert(1)', 'http://', 'file:///etc/passwd', 'http://exa mple.com/'])(
    'rejects %j with InvalidUrlError',
    (raw) => {
      expect(() => normalizeUrl(raw)).toThrow(InvalidUrlError);
      try {
        normalizeUrl(raw);
      } catch (err) {
        expect((err as InvalidUrlError).code).toBe('invalid_url');
      }
    },
  );

  it('rejects a non-string', () => {
    expect(() => normalizeUrl(42 as unknown as string)).toThrow(InvalidUrlError);
  });
});

describe('domainOf', () => {
  it.each([
    ['https://www.Example.com/x', 'example.com'],
    ['https://blog.example.com/x', 'blog.example.com'],
    ['https://www.www.example.com/', 'www.example.com'],
    ['https://www.com/', 'www.com'],
    ['http://127.0.0.1:3000/a', '127.0.0.1'],
    ['http://[::1]:8080/', '[::1]'],
    ['https://bücher.de/', 'xn--bcher-kva.de'],
    ['https://example.com./', 'example.com'],
    ['Example.com', 'example.com'],
    ['www.example.org', 'example.org'],
  ])('%s → %s', (url, want) => {
    expect(domainOf(url)).toBe(want);
  });

  it('throws InvalidUrlError without a usable host', () => {
    expect(() => domainOf('')).toThrow(InvalidUrlError);
    expect(() => domainOf('ftp://example.com/')).toThrow(InvalidUrlError);
  });
});
