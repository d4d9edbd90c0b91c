import { describe, expect, it } from 'vitest';
import { defineScript, hashTaggedPrefix } from './run-script.js';

describe('hashTaggedPrefix', () => {
  it('keeps a prefix that already has a hash tag', () => {
    expect(hashTaggedPrefix('{crawler}:polite:')).toBe('{crawler}:polite:');
  });
  it('wraps a bare prefix so all keys share one cluster slot', () => {
    expect(hashTaggedPrefix('crawler:polite:')).toBe('{crawler:polite}:');
    expect(hashTaggedPrefix('crawler')).toBe('{crawler}:');
  });
  it('refuses an empty prefix', () => {
    expect(() => hashTaggedPrefix('::')).toThrow(TypeError);
  });
});

describe('defineScript', () => {
  it('computes the SHA1 Redis will use for EVALSHA', () => {
    // SHA1 of "return 1", as `redis-cli SCRIPT LOAD "return 1"` prints it.
    expect(defineScript('return 1', 0).sha1).toBe('e0e1f9fabfc9d4800c877a703b823ac0578ff8db');
  });
});
