import type { Redis } from 'ioredis';
import type { Logger, WallStreak } from '@crawler/core';

/** One refusal as the streak records it. */
export interface WallRefusal {
  atMs: number;
  /**
   * When the refused request left (the fleet's clock). It counts as one more refusal in a row only when it left after
   * the last counted one was noted: requests in flight together when the wall went up are one refusal, not a streak.
   */
  sentAtMs: number;
  errorType: string;
  reason: string;
  /** The refused arm (core armKey). */
  fetcher: string;
  /** No stronger tool of this fleet is left for the site: the top of the ladder was refused. */
  top: boolean;
}

// One script, so refusals noted at once by several workers are judged against each other and the first top refusal's
// time stays. A refusal counts when its request left after the last counted refusal was noted (countedAtMs).
const NOTE = `
local counted = tonumber(redis.call('HGET', KEYS[1], 'countedAtMs'))
if not counted or tonumber(ARGV[7]) > counted then
  redis.call('HINCRBY', KEYS[1], 'refusals', 1)
  redis.call('HSET', KEYS[1], 'countedAtMs', ARGV[1])
end
if ARGV[5] == '1' then redis.call('HSETNX', KEYS[1], 'topSinceMs', ARGV[1]) end
redis.call('HSET', KEYS[1], 'errorType', ARGV[2], 'reason', ARGV[3], 'fetcher', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return redis.call('HGETALL', KEYS[1])
`;

/**
 * The fleet's count of a site's refusals in a row (core WallStreak), in Redis under the queue prefix: the site's pause
 * backs off by it, and the links waiting on a wall that refused the fleet's strongest tool fail once WALL_MAX_WAIT_MS
 * has passed since (core wallVerdict). A page the site serves ends the streak. A Redis error costs the backoff and the
 * verdict for that moment, never the job.
 */
export class WallStreaks {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #ttlMs: number;
  readonly #logger?: Logger;

  /** `ttlMs`: how long a streak outlives its last refusal (a site left alone that long starts afresh). */
  constructor(o: { redis: Redis; prefix: string; ttlMs: number; logger?: Logger }) {
    this.#redis = o.redis;
    this.#prefix = o.prefix;
    this.#ttlMs = Math.max(1, Math.floor(o.ttlMs));
    this.#logger = o.logger;
  }

  /** Count one more refusal of `domain`; the streak after it, or null when Redis could not say. */
  async note(domain: string, r: WallRefusal): Promise<WallStreak | null> {
    try {
      const flat = (await this.#redis.eval(NOTE, 1, this.#key(domain), String(Math.floor(r.atMs)), r.errorType, r.reason, r.fetcher, r.top ? '1' : '0', String(this.#ttlMs), String(Math.floor(r.sentAtMs)))) as string[];
      return parseStreak(Object.fromEntries(pairs(flat)));
    } catch (err) {
      this.#logger?.warn({ err, domain }, 'could not count the site\'s refusal; its pause does not back off by the site\'s streak this time');
      return null;
    }
  }

  /** The streak of `domain`, or null when it has none (or Redis could not say). */
  async read(domain: string): Promise<WallStreak | null> {
    try {
      return parseStreak(await this.#redis.hgetall(this.#key(domain)));
    } catch (err) {
      this.#logger?.warn({ err, domain }, 'could not read the site\'s refusals in a row; the link waits');
      return null;
    }
  }

  /** The site served a page: its streak is over. */
  async clear(domain: string): Promise<void> {
    try {
      await this.#redis.del(this.#key(domain));
    } catch (err) {
      this.#logger?.warn({ err, domain }, 'could not end the site\'s streak of refusals');
    }
  }

  #key(domain: string): string {
    return `${this.#prefix}:wall-streak:${domain}`;
  }
}

function pairs(flat: string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
}

function parseStreak(h: Record<string, string>): WallStreak | null {
  const refusals = Number(h.refusals);
  if (!Number.isFinite(refusals) || refusals < 1 || !h.errorType) return null;
  const top = h.topSinceMs === undefined ? null : Number(h.topSinceMs);
  return { refusals, topSinceMs: top !== null && Number.isFinite(top) ? top : null, errorType: h.errorType, reason: h.reason ?? h.errorType, fetcher: h.fetcher ?? 'unknown' };
}
