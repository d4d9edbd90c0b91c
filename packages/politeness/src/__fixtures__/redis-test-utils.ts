import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A hash-tagged prefix no other test run shares. */
export function uniquePrefix(area: string): string {
  return `{crawler_test_fleet_${area}_${randomBytes(4).toString('hex')}}:`;
}

/** Delete every key under `prefix`. */
export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  // SCAN's MATCH treats `{`/`}` literally but `[`/`*`/`?` as globs; our prefixes use neither.
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}

export function createRedis(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
}
