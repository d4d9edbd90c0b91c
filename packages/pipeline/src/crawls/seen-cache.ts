import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * A cache of frontier keys a crawl has already decided on in Postgres, so the common case — a link to a page the
 * crawl has seen — is answered without the admission transaction. It only ever says "seen" for a key whose
 * decision was committed (keys are added after the commit), so skipping Postgres for it cannot lose a page; a key
 * it does not know goes to Postgres, the final arbiter. Emptied or lost, it costs speed, never correctness.
 */
export interface SeenCache {
  /** For each key, whether the crawl's decision on it is known to be committed. */
  known(crawlId: string, keys: readonly string[]): Promise<boolean[]>;
  /** Record keys whose decision has been committed. */
  remember(crawlId: string, keys: readonly string[]): Promise<void>;
}

/** Options of {@link RedisSeenCache}. */
export interface RedisSeenCacheOptions {
  redis: Redis;
  /** Key prefix (the queue prefix keeps a deployment's keys together). */
  prefix: string;
  /** Members per crawl at most: past it, new keys are not cached (Postgres still decides). @defaultValue 2_000_000 */
  maxPerCrawl?: number;
  /**
   * A crawl's set expires this long after its last write. A running crawl writes at every page it follows, so only a
   * crawl that ended (done, cancelled) or waits on paused sites goes this long without one; kept for days, the sets of
   * ended crawls held about 55 bytes per page crawled in those days. One that resumes refills its set from Postgres's
   * answers. @defaultValue 1 hour
   */
  ttlMs?: number;
}

/**
 * The Redis seen set: one SET per crawl whose members are the first 12 bytes of the SHA-1 of the frontier key.
 * Memory per seen URL is bounded and independent of the URL's length (≈ 50–60 bytes with Redis's per-entry
 * overhead; MEMORY USAGE in the bench); a 96-bit collision that would make a new page look seen has probability
 * about n²/2^97 — for a million-page crawl, 10^-17.
 */
export class RedisSeenCache implements SeenCache {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #max: number;
  readonly #ttlMs: number;

  constructor(o: RedisSeenCacheOptions) {
    this.#redis = o.redis;
    this.#prefix = o.prefix;
    this.#max = o.maxPerCrawl ?? 2_000_000;
    this.#ttlMs = o.ttlMs ?? 3600_000;
  }

  #key(crawlId: string): string {
    return `${this.#prefix}:crawl-seen:${crawlId}`;
  }

  async known(crawlId: string, keys: readonly string[]): Promise<boolean[]> {
    if (keys.length === 0) return [];
    const hits = (await this.#redis.smismember(this.#key(crawlId), ...keys.map(digest))) as number[];
    return hits.map((h) => h === 1);
  }

  async remember(crawlId: string, keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.#redis.eval(REMEMBER, 1, this.#key(crawlId), this.#max, this.#ttlMs, ...keys.map(digest));
  }
}

/** SADD while under the cap, and refresh the TTL: one round trip, and the cap is checked atomically. */
const REMEMBER = `
if redis.call('SCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('SADD', KEYS[1], unpack(ARGV, 3))
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 0`;

function digest(key: string): Buffer {
  return createHash('sha1').update(key).digest().subarray(0, 12);
}
