import { describe, expect, it } from 'vitest';
import type { Cluster } from 'ioredis';
import { BLOCKING_TIMEOUT_MS, createRedisConnection } from './connection.js';

describe('createRedisConnection', () => {
  it('gives blocking commands a client-side deadline, on one Redis and on every node of a Cluster', () => {
    const one = createRedisConnection('redis://127.0.0.1:1', 'worker', { lazyConnect: true });
    const cluster = createRedisConnection({ url: 'unused', clusterNodes: ['127.0.0.1:1'] }, 'worker', { lazyConnect: true }) as unknown as Cluster;
    try {
      expect(one.options.blockingTimeout).toBe(BLOCKING_TIMEOUT_MS);
      expect(cluster.options.redisOptions?.blockingTimeout).toBe(BLOCKING_TIMEOUT_MS);
      // Above BullMQ's own block (drainDelay, 5 s): a healthy wait is never cut short.
      expect(BLOCKING_TIMEOUT_MS).toBeGreaterThan(5_000);
    } finally {
      one.disconnect();
      cluster.disconnect();
    }
  });
});
