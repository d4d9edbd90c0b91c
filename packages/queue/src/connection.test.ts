import { describe, expect, it, vi } from 'vitest';
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

  it('drops a connection whose node turned replica (READONLY, UNBLOCKED) and connects again: a worker resends the command, a producer fails it', () => {
    const warn = vi.fn();
    const worker = createRedisConnection('redis://127.0.0.1:1', 'worker', { lazyConnect: true }, { logger: { warn } });
    const producer = createRedisConnection('redis://127.0.0.1:1', 'producer', { lazyConnect: true }, { logger: { warn } });
    try {
      const readOnly = new Error("READONLY You can't write against a read only replica.");
      const unblocked = new Error('UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)');
      expect(worker.options.reconnectOnError?.(readOnly)).toBe(2);
      expect(worker.options.reconnectOnError?.(unblocked)).toBe(2);
      expect(producer.options.reconnectOnError?.(readOnly)).toBe(1);
      expect(worker.options.reconnectOnError?.(new Error('ERR wrong number of arguments'))).toBe(false);
      expect(worker.options.reconnectOnError?.(new Error('OOM command not allowed when used memory > maxmemory'))).toBe(false);
      // One warning for the address, not one per write.
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]!.at(-1))).toMatch(/redis at redis:\/\/127\.0\.0\.1:1\/0 is a read-only replica now/);
    } finally {
      worker.disconnect();
      producer.disconnect();
    }
  });
});
