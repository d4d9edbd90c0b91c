import { Redis, type RedisOptions } from 'ioredis';

/** Who uses a connection: workers block on Redis and must never give up a command; producers should fail fast. */
export type ConnectionRole = 'worker' | 'producer';

/**
 * An ioredis client for BullMQ. Workers get `maxRetriesPerRequest: null` (BullMQ requires it for blocking commands:
 * a worker must wait out a Redis restart rather than crash); producers get a small retry budget so an API request
 * fails instead of hanging when Redis is down.
 */
export function createRedisConnection(url: string, role: ConnectionRole = 'worker', extra: RedisOptions = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: role === 'worker' ? null : 3,
    enableReadyCheck: true,
    // Reconnect forever with a capped backoff: a Redis restart must not take the fleet down.
    retryStrategy: (times) => Math.min(times * 200, 5_000),
    ...extra,
  });
}

/** Close a client, tolerating one that is already closed or never connected. */
export async function closeRedisConnection(client: Redis): Promise<void> {
  if (client.status === 'end') return;
  try {
    await client.quit();
  } catch {
    client.disconnect();
  }
}
