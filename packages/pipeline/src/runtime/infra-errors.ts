import { CrawlerError } from '@crawler/core';
import { DB_ERROR_CODES, translateDbError } from '@crawler/db';

// ioredis and BullMQ when Redis is away or restarting: the command could not be sent or its answer never came. Or
// Redis refuses writes until its operator acts: full under maxmemory with noeviction (OOM), unable to persist (MISCONF).
// Or a Redis Cluster down for longer than ioredis' retries (CLUSTERDOWN, then "Too many Cluster redirections").
const REDIS_DOWN = /Connection is closed|Stream isn't writeable|LOADING|READONLY|MaxRetriesPerRequest|Reached the max retries|Command timed out|OOM command not allowed|MISCONF|CLUSTERDOWN|Too many Cluster redirections/i;
/** A socket that could not connect or broke: Redis's as much as Postgres's. */
const SOCKET_DOWN = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE/i;

/**
 * True when `err` says our own infrastructure (Postgres or Redis) was unreachable, not that the page or the code is
 * wrong. Such a job is retried later; its link is not failed and no attempt is counted for it.
 */
export function isInfraError(err: unknown): boolean {
  if (err instanceof CrawlerError) return err.code === DB_ERROR_CODES.unavailable || err.code === DB_ERROR_CODES.conflict;
  if (isRedisDown(err) || SOCKET_DOWN.test(messageOf(err))) return true;
  const code = translateDbError(err, 'job').code;
  return code === DB_ERROR_CODES.unavailable || code === DB_ERROR_CODES.conflict;
}

/**
 * True when `err` says Postgres cannot take the crawler's writes now: unreachable, restarting, or read-only (a
 * failover's demoted primary). Not a Redis outage, not a conflict that the next try of the same write may win. A bare
 * socket error (ECONNREFUSED) counts: a Redis one would hold jobs for one probe of a Postgres that answers.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof CrawlerError) && isRedisDown(err)) return false;
  return translateDbError(err, 'job').code === DB_ERROR_CODES.unavailable;
}

/** Redis's own words for being away or refusing writes (a socket error alone may be Postgres's). */
function isRedisDown(err: unknown): boolean {
  if ((err as { name?: unknown } | null)?.name === 'MaxRetriesPerRequestError') return true;
  return REDIS_DOWN.test(messageOf(err));
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** BullMQ's message for a job whose worker stopped renewing its lock too often (killed, or cut off from Redis). */
export function isStalledError(err: unknown): boolean {
  return err instanceof Error && /stalled more than allowable limit/i.test(err.message);
}

/** How long a job waits before its `n`-th retry after an infrastructure error: 1 s doubling, capped at `maxMs`. */
export function infraRetryDelayMs(n: number, maxMs: number): number {
  return Math.min(maxMs, 1_000 * 2 ** Math.min(Math.max(0, n - 1), 16));
}
