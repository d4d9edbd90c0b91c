import { describe, expect, it } from 'vitest';
import { BoundedMap } from './bounded-map.js';

describe('BoundedMap', () => {
  it('keeps the most recently set entries, dropping the oldest past its limit', () => {
    const m = new BoundedMap<string, number>(3);
    m.set('a', 1).set('b', 2).set('c', 3);
    m.set('a', 10); // a is now the newest
    m.set('d', 4);
    expect([...m.entries()]).toEqual([['c', 3], ['a', 10], ['d', 4]]);
    expect(m.size).toBe(3);
    for (let i = 0; i < 10_000; i++) m.set(`k${i}`, i);
    expect(m.size).toBe(3);
    expect(m.get('k9999')).toBe(9999);
  });

  it('refuses a limit that is not a positive integer', () => {
    expect(() => new BoundedMap(0)).toThrow(RangeError);
    expect(() => new BoundedMap(1.5)).toThrow(RangeError);
  });
});
