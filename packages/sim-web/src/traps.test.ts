import { describe, expect, it } from 'vitest';
import { BIG_PAGE_LINKS, trapAnswer, trapAreaOf, trapResourceOf } from './traps.js';

const ctx = { origin: 'http://127.0.0.2:8080', offsite: 'http://127.0.0.3:8080', sessionId: () => '65fa752c324e51ea8f6b772165309770' };
const hrefs = (path: string) => [...(trapAnswer(path, ctx)?.body ?? '').matchAll(/href="([^"]*)"/g)].map((m) => m[1]);

describe('the traps site', () => {
  it('serves a finite real site: home, 4 sections, 40 articles, and a 404 past them', () => {
    expect(hrefs('/')).toEqual(expect.arrayContaining(['/section/1', '/section/4', '/cal?month=0', '/deep/', '/shop', '/big', '/dups', '/directives']));
    expect(hrefs('/section/4')).toContain('/article/40');
    expect(trapAnswer('/article/41', ctx)).toBeNull();
    expect(trapAnswer('/section/5', ctx)).toBeNull();
  });

  it('answers every URL of a trap: months without end, any depth under /deep/, a session id per answer', () => {
    expect(hrefs('/cal?month=99999')).toEqual(['/cal?month=99998', '/cal?month=100000', '/']);
    expect(trapAnswer(`/deep/${'a/'.repeat(500)}`, ctx)?.status).toBe(200);
    expect(hrefs('/deep/a/')).toEqual(['a/']);
    expect(hrefs('/shop/product/3?sid=x')).toContain('/shop/product/1?sid=65fa752c324e51ea8f6b772165309770');
    expect(hrefs('/big')).toHaveLength(BIG_PAGE_LINKS);
  });

  it('redirects off the site, round trip through the other site, and to an article', () => {
    expect(trapAnswer('/redirect/offsite', ctx)?.headers.location).toBe('http://127.0.0.3:8080/page/1');
    expect(trapAnswer('/redirect/roundtrip', ctx)?.headers.location).toBe('http://127.0.0.3:8080/__sim/redirect?to=http%3A%2F%2F127.0.0.2%3A8080%2Farticle%2F7');
    expect(trapAnswer('/redirect/old-article', ctx)?.headers.location).toBe('http://127.0.0.2:8080/article/1');
    expect(trapAnswer('/redirect/offsite', { ...ctx, offsite: undefined })).toBeNull();
  });

  it('names one resource for every spelling of a page, and the area a request was for', () => {
    for (const p of ['/list?b=2&a=1', '/list?a=1&b=2&sid=abc']) expect(trapResourceOf(p)).toBe('/list?a=1&b=2');
    expect(trapResourceOf('/docs/index.html')).toBe(trapResourceOf('/docs/'));
    expect(trapResourceOf('/caf%c3%a9')).toBe(trapResourceOf('/caf%C3%A9'));
    expect(trapResourceOf('/article/1/')).toBe('/article/1');
    expect(['/', '/article/3', '/cal?month=2', '/deep/a/', '/shop?sid=1', '/big/item/9', '/dups'].map(trapAreaOf)).toEqual(['real', 'real', 'cal', 'deep', 'shop', 'big', 'other']);
  });
});
