import { describe, expect, it, vi } from 'vitest';
import { DecisionCache, DomainSetbacks, SectionScopes } from './decision-cache.js';

function clockAt(ms: number) {
  const c = { t: ms, now: () => new Date(c.t) };
  return c;
}

describe('DecisionCache', () => {
  it('returns a stored decision until the TTL passes in real time', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      const cache = new DecisionCache<string>(1_000, clockAt(0));
      cache.set('k', 'd.test', 'simple_http');
      vi.advanceTimersByTime(999);
      expect(cache.get('k')).toBe('simple_http');
      vi.advanceTimersByTime(1);
      expect(cache.get('k')).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it('expires when the injected clock moves by the TTL, either way (simulated weeks pass in seconds)', () => {
    const clock = clockAt(1_000_000);
    const cache = new DecisionCache<string>(1_000, clock);
    cache.set('k', 'd.test', 'playwright');
    clock.t += 500;
    expect(cache.get('k')).toBe('playwright');
    clock.t += 7 * 24 * 3600_000;
    expect(cache.get('k')).toBeUndefined();
    cache.set('k', 'd.test', 'playwright');
    clock.t -= 5_000;
    expect(cache.get('k')).toBeUndefined();
  });

  it('keeps nothing when disabled, and at most maxEntries, dropping the oldest', () => {
    const off = new DecisionCache<string>(0, clockAt(0));
    off.set('k', 'd.test', 'v');
    expect(off.get('k')).toBeUndefined();
    const small = new DecisionCache<string>(60_000, clockAt(0), { maxEntries: 2 });
    small.set('a', 'd.test', '1');
    small.set('b', 'd.test', '2');
    small.set('c', 'd.test', '3');
    expect([small.get('a'), small.get('b'), small.get('c')]).toEqual([undefined, '2', '3']);
  });

  it('drops a domain\'s entries stored before its latest setback, and only that domain\'s', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      const setbacks = new DomainSetbacks();
      const cache = new DecisionCache<string>(60_000, clockAt(0), { setbacks });
      cache.set('a1', 'a.test', 'simple_http');
      cache.set('b1', 'b.test', 'simple_http');
      vi.advanceTimersByTime(1);
      setbacks.record('a.test');
      expect(cache.get('a1')).toBeUndefined();
      expect(cache.get('b1')).toBe('simple_http');
      // A decision taken after the setback (from the store, which now holds the failed attempt) is reused again.
      vi.advanceTimersByTime(1);
      cache.set('a2', 'a.test', 'playwright');
      expect(cache.get('a2')).toBe('playwright');
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('SectionScopes', () => {
  it("lets a section's first pages share its domain's decision, then asks the store for its own from the next page on", () => {
    const scopes = new SectionScopes(5);
    expect([1, 2, 3, 4, 5].map(() => scopes.routeDomainScoped('a.test/blog'))).toEqual([true, true, true, true, true]);
    expect(scopes.routeDomainScoped('a.test/blog')).toBe(false);
    expect(scopes.routeDomainScoped('a.test/blog')).toBe(false);
    // Other sections count on their own.
    expect(scopes.routeDomainScoped('a.test/app')).toBe(true);
  });

  it('stops sharing at once for a section the store judged on its own evidence', () => {
    const scopes = new SectionScopes(5);
    expect(scopes.routeDomainScoped('a.test/blog')).toBe(true);
    scopes.judgedOnItsOwn('a.test/blog');
    expect(scopes.routeDomainScoped('a.test/blog')).toBe(false);
  });

  it('keeps sharing for a site of one-page sections (a slug per article), within a bounded memory', () => {
    const scopes = new SectionScopes(5, 100);
    for (let i = 0; i < 1_000; i++) expect(scopes.routeDomainScoped(`news.test/story-${i}`)).toBe(true);
    for (let i = 0; i < 1_000; i++) scopes.judgedOnItsOwn(`news.test/own-${i}`);
    // The oldest were dropped: a dropped section counts again from one page.
    expect(scopes.routeDomainScoped('news.test/own-0')).toBe(true);
    expect(scopes.routeDomainScoped('news.test/own-999')).toBe(false);
  });
});
