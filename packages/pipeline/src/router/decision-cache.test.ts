import { describe, expect, it, vi } from 'vitest';
import { DecisionCache, DomainSetbacks } from './decision-cache.js';

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
