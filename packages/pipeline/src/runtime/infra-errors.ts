import { CrawlerError } from '@crawler/core';
import { DB_ERROR_CODES, translateDbError } from '@crawler/db';

// ioredis and BullMQ when Redis is away or restarting: the command could not be sent or its answer never came. Or
// Redis refuses writes until its operator acts: full under maxmemory with noeviction (OOM), unable to persist (MISCONF).
// Or a Redis Cluster down for longer than ioredis' retries (CLUSTERDOWN, then "Too many Cluster redirections").
const REDIS_DOWN = /Connection is closed|Stream isn't writeable|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|LOADING|READONLY|MaxRetriesPerRequest|Reached the max retries|Command timed out|OOM command not allowed|MISCONF|CLUSTERDOWN|Too many Cluster redirections/i;

/**
 * True when `err` says our own infrastructure (Postgres or Redis) was unreachable, not that the page or the code is
 * wrong. Such a job is retried later; its link is not failed and no attempt is counted for it.
 */
export function isInfraError(err: unknown): boolean {
  if (err instanceof CrawlerError) return err.code === DB_ERROR_CODES.unavailable || err.code === DB_ERROR_CODES.conflict;
  const name = (err as { name?: unknown } | null)?.name;
  if (name === 'MaxRetriesPerRequestError') return true;
  const message = err instanceof Error ? err.message : String(err);
  if (REDIS_DOWN.test(message)) return true;
  const code = translateDbError(err, 'job').code;
  return code === DB_ERROR_CODES.unavailable || code === DB_ERROR_CODES.conflict;
}

/** BullMQ's message for a job whose worker stopped renewing its lock too often (killed, or cut off from Redis). */
export function isStalledError(err: unknown): boolean {
  return err instanceof Error && /stalled more than allowable limit/i.test(err.message);
}

/** How long a job waits before its `n`-th retry after an infrastructure error: 1 s doubling, capped at `maxMs`. */
export function infraRetryDelayMs(n: number, maxMs: number): number {
  return Math.min(maxMs, 1_000 * 2 ** Math.min(Math.max(0, n - 1), 16));
}
