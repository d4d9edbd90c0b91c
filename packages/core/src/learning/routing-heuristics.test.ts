import { describe, expect, it } from 'vitest';
import { extractUrlHeuristics } from '../url/url-heuristics.js';
import { ROUTING_HEURISTIC_TYPES, isNonHtmlSuffix, selectRoutingHeuristics } from './routing-heuristics.js';

describe('routing heuristics', () => {
  it('keeps the domain and its section and drops heuristics every site shares', () => {
    const all = extractUrlHeuristics('https://shop.example/a/b/c/d/e/f/page.html?q=' + 'x'.repeat(60));
    expect(all.map((h) => h.type)).toEqual(expect.arrayContaining(['path_depth', 'deep_path', 'complex_query', 'suffix']));
    expect(selectRoutingHeuristics(all)).toEqual([
      { type: 'domain', value: 'shop.example' },
      { type: 'section', value: 'shop.example/a' },
    ]);
    // A site's root has no section.
    expect(selectRoutingHeuristics(extractUrlHeuristics('https://shop.example/?q=1'))).toEqual([{ type: 'domain', value: 'shop.example' }]);
  });

  it('keeps a non-HTML suffix: the documents\' wikipedia.org/document.pdf is decided by its .pdf evidence', () => {
    const got = selectRoutingHeuristics(extractUrlHeuristics('https://wikipedia.org/document.pdf'));
    expect(got).toEqual([
      { type: 'domain', value: 'wikipedia.org' },
      { type: 'section', value: 'wikipedia.org/document.pdf' },
      { type: 'suffix', value: '.pdf' },
    ]);
  });

  it('keeps CDN and video-platform flags', () => {
    expect(selectRoutingHeuristics(extractUrlHeuristics('https://cdn.example.com/x/movie.mp4')).map((h) => h.type)).toEqual(['domain', 'section', 'suffix', 'contains_cdn']);
    expect(selectRoutingHeuristics(extractUrlHeuristics('https://www.youtube.com/watch?v=abc')).map((h) => h.type)).toEqual(['domain', 'section', 'video_platform']);
  });

  it('tells HTML-ish suffixes from content families, case-insensitively', () => {
    expect(['.pdf', '.PDF', '.json', '.zip', '.mp3', '.png'].every(isNonHtmlSuffix)).toBe(true);
    expect(['.html', '.htm', '.php', '.aspx', '.jsp', ''].some(isNonHtmlSuffix)).toBe(false);
  });

  it('follows a configured list of types', () => {
    const all = extractUrlHeuristics('https://a.example/x/y');
    expect(selectRoutingHeuristics(all, ['domain', 'path_depth'])).toEqual([
      { type: 'domain', value: 'a.example' },
      { type: 'path_depth', value: '2' },
    ]);
    expect(selectRoutingHeuristics(all, [])).toEqual([]);
    expect(ROUTING_HEURISTIC_TYPES).toContain('domain');
  });
});
