import type { Redis } from 'ioredis';
import { masterNodesOf } from './connection.js';

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
 * it would mean the whole database. On a Redis Cluster every master is scanned (SCAN sees one node's keys). Returns how
 * many keys were removed.
 */
export async function deleteRedisPrefix(redis: Redis, prefix: string, batchSize = DELETE_PREFIX_BATCH): Promise<number> {
  if (prefix === '') throw new Error('deleteRedisPrefix: refusing an empty prefix (it would delete every key)');
  const match = `${escapeGlob(prefix)}*`;
  let removed = 0;
  for (const node of masterNodesOf(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', batchSize);
      cursor = next;
      // One key per UNLINK on a cluster node: keys of different slots may not share a command.
      if (node !== redis) for (const key of keys) removed += await node.unlink(key);
      else for (let i = 0; i < keys.length; i += batchSize) removed += await redis.unlink(...keys.slice(i, i + batchSize));
    } while (cursor !== '0');
  }
  return removed;
}
