import { describe, expect, it } from 'vitest';
import { isRepeatingPath } from './crawl-traps.js';

describe('isRepeatingPath', () => {
  it.each([
    'https://a.test/deep/a/a/a/',
    'https://a.test/deep/a/a/a/a/a/a/page.html',
    'https://a.test/x/y/x/y/x/y/',
    'https://a.test/docs/a/b/c/a/b/c/a/b/c/index.html?q=1',
  ])('a trap: %s', (url) => {
    expect(isRepeatingPath(url)).toBe(true);
  });

  it.each([
    'https://a.test/',
    'https://a.test/deep/a/a/',
    'https://a.test/2024/05/05/story',
    'https://a.test/tag/news/news',
    'https://a.test/a/b/a/b/',
    'https://a.test/p?path=/a/a/a/a/',
    'https://a.test/a/b/c/d/a/b/c/d/a/b/c/d/',
  ])('a page: %s', (url) => {
    expect(isRepeatingPath(url)).toBe(false);
  });
});
