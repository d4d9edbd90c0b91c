import { describe, expect, it } from 'vitest';
import { CLUSTER_SLOTS, parseConsumedShards, shardOfDomain, shardOfUrl, shardPrefix, slotOf } from './queue-shards.js';
import { parseClusterNodes } from '../connection.js';

describe('queue shards', () => {
  it('keeps the base prefix for shard 0, so one shard is the unsharded layout byte for byte', () => {
    expect(shardPrefix('{crawler}', 0, 1)).toBe('{crawler}');
    expect(shardPrefix('{crawler}', 0, 3)).toBe('{crawler}');
    expect(shardOfUrl('https://a.example/x', 1)).toBe(0);
  });

  it('gives every other shard its own hash tag, one per slice of the slot space', () => {
    for (const n of [2, 3, 4, 6]) {
      const prefixes = Array.from({ length: n }, (_, i) => shardPrefix('{crawler}', i, n));
      expect(new Set(prefixes).size).toBe(n);
      for (const p of prefixes) expect(p).toMatch(/^\{crawler(-s\d+(-\d+)?)?\}$/);
      const slices = prefixes.map((p) => Math.floor(slotOf(p) / (CLUSTER_SLOTS / n)));
      expect(new Set(slices).size).toBe(n);
    }
    expect(shardPrefix('{crawler}', 2, 3)).toBe(shardPrefix('{crawler}', 2, 3));
    expect(shardPrefix('plain', 1, 2)).toBe('plain-s1');
  });

  it('puts a registrable domain and all its hosts on one shard, and spreads many sites over every shard', () => {
    const n = 3;
    expect(shardOfUrl('https://a.example.co.uk/p', n)).toBe(shardOfUrl('http://www.b.example.co.uk/q?x=1', n));
    expect(shardOfDomain('shop.example.com', n)).toBe(shardOfUrl('https://example.com/', n));
    const hosts = Array.from({ length: 40 }, (_, i) => `http://127.0.31.${i + 1}:8080/`);
    const counts = [0, 0, 0];
    for (const h of hosts) counts[shardOfUrl(h, n)]! += 1;
    expect(counts.every((c) => c >= 5)).toBe(true);
    expect(shardOfUrl('not a url', n)).toBe(0);
  });

  it('parses the consumed shards, every shard by default', () => {
    expect(parseConsumedShards(undefined, 3)).toEqual([0, 1, 2]);
    expect(parseConsumedShards('', 2)).toEqual([0, 1]);
    expect(parseConsumedShards('2, 0,2', 3)).toEqual([0, 2]);
    expect(() => parseConsumedShards('3', 3)).toThrow(/bad shard '3'/);
    expect(() => parseConsumedShards('x', 3)).toThrow(/bad shard/);
    expect(() => parseConsumedShards(',', 3)).toThrow(/no shard/);
  });

  it('parses cluster seed nodes', () => {
    expect(parseClusterNodes(['127.0.0.1:7001', ' [::1]:7002'])).toEqual([
      { host: '127.0.0.1', port: 7001 },
      { host: '::1', port: 7002 },
    ]);
    expect(() => parseClusterNodes(['127.0.0.1'])).toThrow(/bad cluster node/);
  });
});
