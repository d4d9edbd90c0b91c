import { describe, expect, it } from 'vitest';
import { splitPositionals } from './crawl.js';

describe('crawl: which arguments are files of URLs', () => {
  const exists = (p: string) => p === 'urls.txt' || p === 'lists/more';
  it('treats only existing files and "-" as files; URLs, typos and bare words are URLs to validate one by one', () => {
    expect(splitPositionals(['https://a.example/', 'urls.txt', 'not a url', 'example.com/page', '-', 'lists/more', 'missing.txt'], exists)).toEqual({
      urls: ['https://a.example/', 'not a url', 'example.com/page', 'missing.txt'],
      files: ['urls.txt', '-', 'lists/more'],
    });
  });
  it('never reads a file for something with a scheme, even if a file of that name exists', () => {
    expect(splitPositionals(['ftp://x/y', 'javascript:alert(1)'], () => true)).toEqual({ urls: ['ftp://x/y', 'javascript:alert(1)'], files: [] });
  });
});
