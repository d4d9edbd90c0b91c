/**
 * REDIS_CLUSTER_NODES naming a Redis that is not a cluster node (the shared test server at REDIS_URL is a plain one):
 * the start-up check says so, naming the variable, instead of the process waiting forever for a slot map.
 * Read-only: CLUSTER SLOTS is all the client sends.
 */
import type { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RedisNotClusterError, RedisSetupError, assertRedisDatabase, closeRedisConnection, createRedisConnection } from './connection.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const plain = new URL(REDIS_URL);
const node = `${plain.hostname}:${plain.port || '6379'}`;

describe('REDIS_CLUSTER_NODES on a Redis that is not a cluster', () => {
  it('fails the start-up check naming the variable and the node, for every role', async () => {
    for (const role of ['producer', 'worker'] as const) {
      const client = createRedisConnection({ url: 'unused', clusterNodes: [node] }, role) as unknown as Cluster;
      try {
        const err = await assertRedisDatabase(client).then(() => null, (e: unknown) => e);
        expect(err, role).toBeInstanceOf(RedisNotClusterError);
        expect(err, role).toBeInstanceOf(RedisSetupError);
        expect((err as Error).message, role).toBe(
          `REDIS_CLUSTER_NODES=${node}: ${node} is not a Redis Cluster node (ERR This instance has cluster support disabled); unset REDIS_CLUSTER_NODES to use one Redis through REDIS_URL, or name the nodes of a cluster`,
        );
      } finally {
        await closeRedisConnection(client);
      }
    }
  }, 30_000);
});
