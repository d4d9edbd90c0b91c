import { describe, expect, it } from 'vitest';
import { InvalidUrlError } from '../contracts/errors.js';
import { extractUrlHeuristics, sectionOfUrl, SECTION_SEGMENT_MAX_CHARS, URL_HEURISTIC_EXTRACTORS, type UrlHeuristicExtractor } from './url-heuristics.js';

function asMap(url: string): Record<string, string> {
  return Object.fromEntries(extractUrlHeuristics(url).map((h) => [h.type, h.value]));
}

describe('extractUrlHeuristics', () => {
  it('always gives domain and path_depth', () => {
    expect(asMap('https://www.Wikipedia.org/')).toEqual({ domain: 'wikipedia.org', path_depth: '0' });
  });

  it('takes the suffix from the path, lower-cased, never from the query', () => {
    expect(asMap('https://example.com/docs/Report.PDF').suffix).toBe('.pdf');
    expect(asMap('https://example.com/view?file=a.pdf').suffix).toBeUndefined();
    expect(asMap('https://example.com/a.tar.gz').suffix).toBe('.gz');
    expect(asMap('https://example.com/dir.v2/').suffix).toBeUndefined();
    expect(asMap('https://example.com/.well-known').suffix).toBeUndefined();
    expect(asMap('https://example.com/news/2024.03.story-title').suffix).toBeUndefined();
    expect(asMap('https://example.com/page.jsp;jsessionid=ABC').suffix).toBe('.jsp');
    expect(asMap('https://example.com/file%2Emp4').suffix).toBe('.mp4');
  });

  it('flags cdn/static/assets/api path segments and subdomains, not substrings', () => {
    expect(asMap('https://example.com/cdn/x.js').contains_cdn).toBe('true');
    expect(asMap('https://cdn2.example.com/x.js').contains_cdn).toBe('true');
    expect(asMap('https://cdnjs.cloudflare.com/lib.js').contains_cdn).toBe('true');
    expect(asMap('https://example.com/cdn-cgi/trace').contains_cdn).toBeUndefined();
    expect(asMap('https://cdn.com/page').contains_cdn).toBeUndefined();
    expect(asMap('https://example.com/static/app.css').contains_static).toBe('true');
    expect(asMap('https://example.com/staticpages/x').contains_static).toBeUndefined();
    expect(asMap('https://example.com/Assets/logo.png').contains_assets).toBe('true');
    expect(asMap('https://example.com/api/v1/users').contains_api).toBe('true');
    expect(asMap('https://api.github.com/repos').contains_api).toBe('true');
    expect(asMap('https://example.com/rapid/api-docs').contains_api).toBeUndefined();
  });

  it('names the section: the domain and the first path segment, lower-cased; none at the root', () => {
    expect(asMap('https://www.Example.com/Blog/2024/post').section).toBe('example.com/blog');
    expect(asMap('https://example.com/app').section).toBe('example.com/app');
    expect(asMap('https://example.com/app/').section).toBe('example.com/app');
    expect(asMap('https://example.com//docs/x').section).toBe('example.com/docs');
    expect(asMap('https://example.com/Caf%C3%A9;v=1/x').section).toBe('example.com/café');
    expect(asMap('https://example.com/?page=2').section).toBeUndefined();
    expect(asMap('https://example.com').section).toBeUndefined();
    expect(asMap(`https://example.com/${'s'.repeat(500)}`).section).toBe(`example.com/${'s'.repeat(SECTION_SEGMENT_MAX_CHARS)}`);
    expect(sectionOfUrl('https://www.example.com/Blog/x')).toBe('example.com/blog');
    expect(sectionOfUrl('https://example.com/')).toBeNull();
    expect(sectionOfUrl('not a url')).toBeNull();
  });

  it('counts path depth and flags deep paths above 5 segments', () => {
    expect(asMap('https://example.com/a/b/c/d/e').path_depth).toBe('5');
    expect(asMap('https://example.com/a/b/c/d/e').deep_path).toBeUndefined();
    expect(asMap('https://example.com/a/b/c/d/e/f').deep_path).toBe('true');
    expect(asMap('https://example.com/a//b/').path_depth).toBe('2');
  });

  it('flags queries longer than 50 characters', () => {
    expect(asMap(`https://example.com/?${'a'.repeat(50)}`).complex_query).toBeUndefined();
    expect(asMap(`https://example.com/?${'a'.repeat(51)}`).complex_query).toBe('true');
  });

  it('recognises video platforms on the domain and subdomains only', () => {
    expect(asMap('https://www.youtube.com/watch?v=x').video_platform).toBe('true');
    expect(asMap('https://m.youtube.com/watch?v=x').video_platform).toBe('true');
    expect(asMap('https://vimeo.com/123').video_platform).toBe('true');
    expect(asMap('https://notyoutube.com/x').video_platform).toBeUndefined();
    expect(asMap('https://example.com/youtube.com').video_platform).toBeUndefined();
  });

  it('handles IP hosts and IDNs', () => {
    expect(asMap('http://10.0.0.1:8080/api/x').domain).toBe('10.0.0.1');
    expect(asMap('http://[::1]/x').domain).toBe('[::1]');
    expect(asMap('https://www.bücher.de/').domain).toBe('xn--bcher-kva.de');
  });

  it('throws a typed error on malformed URLs instead of returning nothing', () => {
    for (const bad of ['', 'nope', 'ftp://x.org/a', '/rel']) {
      expect(() => extractUrlHeuristics(bad)).toThrow(InvalidUrlError);
    }
  });

  it('runs any extractor list: adding a heuristic is adding one entry', () => {
    const tld: UrlHeuristicExtractor = { type: 'tld', extract: (_u, p) => p.hostLabels.at(-1) ?? null };
    const out = extractUrlHeuristics('https://example.org/x', [...URL_HEURISTIC_EXTRACTORS, tld]);
    expect(out.at(-1)).toEqual({ type: 'tld', value: 'org' });
    expect(URL_HEURISTIC_EXTRACTORS.map((e) => e.type)).toEqual([
      'domain', 'section', 'suffix', 'contains_cdn', 'contains_static', 'contains_assets', 'contains_api', 'path_depth', 'deep_path', 'complex_query', 'video_platform',
    ]);
  });
});
