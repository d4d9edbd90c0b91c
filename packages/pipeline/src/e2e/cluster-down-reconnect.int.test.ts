/**
 * A worker's connection reconnecting while the Redis Cluster is down (a master lost with no replica left to promote,
 * so every node answers CLUSTERDOWN), then the master back. BullMQ reconnects a worker's blocking connection by
 * awaiting the Cluster client's connect(); with ioredis' ready check, a connect() that found the cluster down
 * reconnected on its own and never settled, so the worker waited on it for good: a router's shard-0 route worker
 * took no job for minutes after its shard's master came back, and its close timed out. connection.ts turns the
 * ready check off. Private cluster: 3 masters without replicas on free loopback ports.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cluster } from 'ioredis';
import { Queue, Worker, createRedisConnection, slotOf } from '@crawler/queue';
import { startPrivateRedisCluster, type PrivateRedisCluster } from '@crawler/testkit';
import { waitFor } from '../__fixtures__/e2e.js';

let cluster: PrivateRedisCluster | undefined;

beforeAll(async () => {
  cluster = await startPrivateRedisCluster({ masters: 3, replicasPerMaster: 0, nodeTimeoutMs: 2_000 });
}, 120_000);

afterAll(async () => {
  await cluster?.close();
});

/** Kill the master serving `prefix`'s slot and wait until the other nodes say the cluster is down; its port. */
async function takeDown(prefix: string): Promise<number> {
  const slot = slotOf(prefix);
  const victim = (await cluster!.masters()).find((m) => m.slots.some(([a, b]) => slot >= a && slot <= b))!;
  await cluster!.kill(victim.port);
  const others = cluster!.ports.filter((p) => p !== victim.port);
  await waitFor(async () => ((await Promise.all(others.map((p) => cluster!.cli(p, 'cluster', 'info')))).every((s) => s.includes('cluster_state:fail')) || null), 'the cluster down', 30_000);
  return victim.port;
}

const settled = (p: Promise<unknown>, ms: number) => Promise.race([p.then(() => 'settled', () => 'settled'), new Promise((r) => setTimeout(() => r('pending'), ms))]);

describe('a Redis Cluster down, then whole again', () => {
  it("a worker connection's connect() begun while the cluster is down settles once it is whole", async () => {
    const client = createRedisConnection({ url: 'redis://unused', clusterNodes: cluster!.seeds }, 'worker') as unknown as Cluster;
    client.on('error', () => undefined);
    try {
      await client.ping();
      const port = await takeDown('{crawler_down_connect}');
      // What BullMQ's reconnect of a blocking connection does: drop it, then await connect().
      client.disconnect();
      await waitFor(async () => (['end', 'close'].includes(client.status) ? true : null), `the client closed (${client.status})`, 10_000);
      const connected = client.connect();
      await new Promise((r) => setTimeout(r, 3_000));
      await cluster!.restart(port);
      await cluster!.waitHealthy(60_000);
      expect(await settled(connected, 15_000)).toBe('settled');
      await client.set('{crawler_down_connect}:k', 'v');
      expect(await client.get('{crawler_down_connect}:k')).toBe('v');
    } finally {
      client.disconnect();
    }
  }, 180_000);

  it('a worker takes the next job after its master came back, and closes', async () => {
    const prefix = '{crawler_down_worker}';
    const target = { url: 'redis://unused', clusterNodes: cluster!.seeds };
    const queue = new Queue('down', { connection: createRedisConnection(target, 'producer'), prefix });
    const taken: string[] = [];
    const worker = new Worker('down', async (job) => void taken.push(job.name), { connection: createRedisConnection(target, 'worker'), prefix, concurrency: 2 });
    worker.on('error', () => undefined);
    try {
      await queue.add('before', {});
      await waitFor(async () => (taken.includes('before') ? true : null), 'the first job', 30_000);
      await new Promise((r) => setTimeout(r, 2_000));
      const port = await takeDown(prefix);
      // Long enough for the worker's blocking command to give up on the cluster (maxRedirections) while it is down.
      await new Promise((r) => setTimeout(r, 25_000));
      await cluster!.restart(port);
      await cluster!.waitHealthy(60_000);
      await queue.add('after', {});
      await waitFor(async () => (taken.includes('after') ? true : null), 'the job added after the master came back', 60_000);
      expect(await settled(worker.close(), 15_000)).toBe('settled');
    } finally {
      void worker.disconnect().catch(() => undefined);
      await settled(queue.close(), 5_000);
    }
  }, 240_000);
});
