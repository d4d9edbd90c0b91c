import { canonicalFetcherName } from '@crawler/core';

/** The router's queue: every link enters here and leaves with a fetcher chosen. */
export const ROUTE_QUEUE = 'route';

/** Prefix of the per-fetcher queues (`fetch-simple_http`, `fetch-playwright`, ...). */
export const FETCH_QUEUE_PREFIX = 'fetch-';

/**
 * The default Redis key prefix. The braces are a Redis Cluster hash tag: every key of every queue lands in one slot,
 * which BullMQ's multi-key Lua scripts require on a cluster.
 */
export const DEFAULT_QUEUE_PREFIX = '{crawler}';

/** The queue a fetcher consumes. Aliases map onto the canonical name, so `direct_access` shares `simple_http`'s queue. */
export function fetchQueueName(fetcher: string): string {
  const name = canonicalFetcherName(fetcher);
  // BullMQ builds keys as `<prefix>:<queue>:<suffix>`; a ':' inside the name would break that layout.
  if (!/^[a-z0-9_.-]+$/.test(name)) throw new Error(`invalid fetcher name for a queue: '${fetcher}'`);
  return `${FETCH_QUEUE_PREFIX}${name}`;
}

/** The fetcher a fetch queue belongs to, or null when `queue` is not a fetch queue. */
export function fetcherOfQueue(queue: string): string | null {
  return queue.startsWith(FETCH_QUEUE_PREFIX) ? queue.slice(FETCH_QUEUE_PREFIX.length) : null;
}

/** Check a configured key prefix: non-empty, no ':' (BullMQ adds the separators itself). */
export function assertQueuePrefix(prefix: string): string {
  if (!prefix || prefix.includes(':')) throw new Error(`invalid queue prefix '${prefix}': must be non-empty without ':'`);
  return prefix;
}
