import type { Redis } from 'ioredis';

/** Keys removed per UNLINK (and asked of each SCAN step). */
export const DELETE_PREFIX_BATCH = 500;

/** `[`, `]`, `*`, `?` and `\` are globs in SCAN's MATCH: escaped, a prefix matches only itself. */
function escapeGlob(s: string): string {
  return s.replace(/[*?[\]\\]/g, '\\$&');
}

/**
 * Delete every Redis key whose name starts with `prefix` (a run's queues, politeness, robots, probe and seen keys):
 * SCAN with MATCH and UNLINK in batches, so a prefix with millions of keys neither blocks Redis (as KEYS or one huge
 * DEL would) nor builds one huge argument list. The one helper demo, bench and tests use. An empty prefix is refused:
 * it would mean the whole database. Returns how many keys were removed.
 */
export async function deleteRedisPrefix(redis: Redis, prefix: string, batchSize = DELETE_PREFIX_BATCH): Promise<number> {
  if (prefix === '') throw new Error('deleteRedisPrefix: refusing an empty prefix (it would delete every key)');
  const match = `${escapeGlob(prefix)}*`;
  let removed = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', match, 'COUNT', batchSize);
    cursor = next;
    for (let i = 0; i < keys.length; i += batchSize) removed += await redis.unlink(...keys.slice(i, i + batchSize));
  } while (cursor !== '0');
  return removed;
}
