import { describe, expect, it } from 'vitest';
import { outOfScopeBreakdown, outOfScopeSampleLines } from './crawl-follow.js';

const counters = (by: Partial<Record<'scope' | 'include' | 'exclude' | 'trap' | 'nofollow', number>>) => ({ outOfScopeByReason: { scope: 0, include: 0, exclude: 0, trap: 0, nofollow: 0, ...by } }) as never;

describe('crawl --follow\'s out-of-scope lines', () => {
  it('say how many each rule refused, in the words of the crawl\'s scope, the rules that refused none left out', () => {
    expect(outOfScopeBreakdown({ scope: 'same-site', counters: counters({ scope: 12, exclude: 3 }) })).toBe(' (12 another site, 3 excluded)');
    expect(outOfScopeBreakdown({ scope: 'same-host', counters: counters({ scope: 1, include: 2, nofollow: 4 }) })).toBe(' (1 another host, 2 no include matched, 4 nofollow)');
    expect(outOfScopeBreakdown({ scope: 'same-origin', counters: counters({}) })).toBe('');
  });

  it('name the first URLs each rule refused, one line per rule', () => {
    expect(outOfScopeSampleLines({ scope: 'same-origin', outOfScopeSamples: { scope: ['https://a.example/', 'https://b.example/x'], exclude: ['https://s.example/private/1'] } })).toBe(
      '  out of scope, another origin: https://a.example/ https://b.example/x\n  out of scope, excluded: https://s.example/private/1\n',
    );
    expect(outOfScopeSampleLines({ scope: 'same-site', outOfScopeSamples: {} })).toBe('');
  });
});
