import { describe, expect, it } from 'vitest';
import { extractLinks } from './extract-links.js';
import { encodeQueryIn } from './query-encoding.js';

const PAGE = 'http://shop.example/cat/';
const hrefs = (html: string, charset?: string) => extractLinks(html, PAGE, charset === undefined ? {} : { charset }).links.map((l) => l.url);

describe('a link\'s query in the document\'s encoding (URL standard: the query is encoded in the document\'s encoding)', () => {
  it('writes non-ASCII in the query of a windows-1251 page in windows-1251, and its path in UTF-8', () => {
    expect(hrefs('<a href="/search?q=Москва&lang=ru">a</a><a href="/wiki/Москва">b</a>', 'windows-1251')).toEqual([
      'http://shop.example/search?q=%CC%EE%F1%EA%E2%E0&lang=ru',
      'http://shop.example/wiki/%D0%9C%D0%BE%D1%81%D0%BA%D0%B2%D0%B0',
    ]);
  });

  it('writes a character the encoding lacks as its numeric reference, percent-encoded, as browsers do', () => {
    expect(hrefs('<a href="/search?q=&#26085;&#26412;">a</a>', 'windows-1251')).toEqual(['http://shop.example/search?q=%26%2326085%3B%26%2326412%3B']);
  });

  it('keeps the ASCII bytes of a multi-byte encoding as they are, as the query percent-encode set says (Shift_JIS 本 is 96 7B)', () => {
    expect(hrefs('<a href="search?q=日本">a</a>', 'shift_jis')).toEqual(['http://shop.example/cat/search?q=%93%FA%96{']);
    expect(hrefs('<a href="/s?q=한국">a</a>', 'euc-kr')).toEqual(['http://shop.example/s?q=%C7%D1%B1%B9']);
  });

  it('reads the labels browsers read as windows-1252 as windows-1252 (€ is 0x80), and leaves UTF-8 and UTF-16 pages to UTF-8', () => {
    expect(hrefs('<a href="/p?price=5€&c=é">a</a>', 'iso-8859-1')).toEqual(['http://shop.example/p?price=5%80&c=%E9']);
    for (const charset of [undefined, 'utf-8', 'UTF-8', 'utf-16le', 'no-such-charset']) {
      expect(hrefs('<a href="/p?c=é">a</a>', charset), String(charset)).toEqual(['http://shop.example/p?c=%C3%A9']);
    }
  });

  it('touches neither a query already percent-encoded nor the fragment', () => {
    expect(encodeQueryIn('/a?q=%CC%EE#frag-é?x=é', 'windows-1251')).toBe('/a?q=%CC%EE#frag-é?x=é');
    expect(encodeQueryIn('/Москва#x?y=é', 'windows-1251')).toBe('/Москва#x?y=é');
  });
});
