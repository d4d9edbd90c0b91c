import calculateSlot from 'cluster-key-slot';
import { domainOf, siteOf } from '@crawler/core';

/** Redis Cluster's slot count: a key's slot is CRC16 of its hash tag modulo this. */
export const CLUSTER_SLOTS = 16_384;

/** The most shards a deployment may configure: enough for a cluster of this many masters, each with one shard. */
export const MAX_QUEUE_SHARDS = 256;

/**
 * FNV-1a, 32 bits: a fixed, dependency-free hash, so every process of every version puts a site on the same shard
 * (Node's default hash seeds would not).
 */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * The shard of a host or domain: a stable hash of its registrable domain (`a.example.co.uk` and `b.example.co.uk`
 * share one), so a site's jobs and its politeness keys live in one shard, one Cluster slot, and per-domain limits stay
 * exact across the fleet. IPs and `localhost` hash as themselves.
 */
export function shardOfDomain(domain: string, shards: number): number {
  if (shards <= 1) return 0;
  return fnv1a(siteOf(domain)) % shards;
}

/** The shard of a URL (see {@link shardOfDomain}); a URL without a usable host goes to shard 0. */
export function shardOfUrl(url: string, shards: number): number {
  if (shards <= 1) return 0;
  let domain: string;
  try {
    domain = domainOf(url);
  } catch {
    return 0;
  }
  return shardOfDomain(domain, shards);
}

const TAG = /\{([^{}]+)\}/;

/** The Cluster slot of a key (CRC16 of its hash tag, as Redis computes it). */
export function slotOf(key: string): number {
  return calculateSlot(key);
}

/**
 * The key prefix of shard `shard` of `shards`. Shard 0 keeps the base prefix itself, so `QUEUE_SHARDS=1` is today's
 * layout byte for byte and a deployment going from 1 to N shards keeps its existing queues as shard 0.
 *
 * Other shards get their own hash tag, `{<tag>-s<i>}` (plus `-<k>` when needed): the smallest `k` whose slot falls in
 * the i-th of N equal slices of the slot space, counted from the slice holding shard 0's slot. `redis-cli --cluster
 * create` gives each master an equal contiguous range of slots, so N shards on N masters land one per master instead
 * of wherever CRC16 happens to throw them (three random tags share a master two times out of three). A base prefix
 * without a hash tag (single-node only) gets `-s<i>` appended.
 */
export function shardPrefix(base: string, shard: number, shards: number): string {
  if (shard === 0) return base;
  const m = TAG.exec(base);
  if (!m) return `${base}-s${shard}`;
  const tag = m[1]!;
  const slice = CLUSTER_SLOTS / shards;
  const want = (Math.floor(slotOf(base) / slice) + shard) % shards;
  const withTag = (t: string) => base.replace(TAG, `{${t}}`);
  // Finds one within a few hundred tries for any N up to MAX_QUEUE_SHARDS; the cap only guards against a bad N.
  for (let k = 0; k < 100_000; k++) {
    const candidate = withTag(k === 0 ? `${tag}-s${shard}` : `${tag}-s${shard}-${k}`);
    if (Math.floor(slotOf(candidate) / slice) === want) return candidate;
  }
  return withTag(`${tag}-s${shard}`);
}

/**
 * Parse `QUEUE_SHARDS_CONSUMED`: comma-separated shard numbers (`0,2`), or empty for every shard. Throws on a number
 * outside `0..shards-1`.
 */
export function parseConsumedShards(value: string | undefined, shards: number): number[] {
  const all = Array.from({ length: shards }, (_, i) => i);
  if (value === undefined || value.trim() === '') return all;
  const out = new Set<number>();
  for (const raw of value.split(',')) {
    const item = raw.trim();
    if (item === '') continue;
    if (!/^\d+$/.test(item) || Number(item) >= shards) throw new Error(`bad shard '${item}' (expected numbers from 0 to ${shards - 1})`);
    out.add(Number(item));
  }
  if (out.size === 0) throw new Error('no shard listed');
  return [...out].sort((a, b) => a - b);
}
