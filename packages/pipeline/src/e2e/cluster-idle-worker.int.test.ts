/**
 * An idle worker through a Redis Cluster failover: a BullMQ worker on our cluster connection takes a job, waits idle
 * (blocked on Redis for the next one), and the master that serves its queue's slot is SIGKILLed. Once the replica is
 * promoted, a job added to the queue must be taken, and the worker must close. Without the client-side deadline for
 * blocking commands (connection.ts BLOCKING_TIMEOUT_MS) the worker's blocking command stayed on the dead master's
 * connection: no job was taken after the failover and close never returned (2 of 3 runs of this scenario).
 * Private cluster: 3 masters + 3 replicas on free loopback ports.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue, Worker, createRedisConnection, slotOf } from '@crawler/queue';
import { startPrivateRedisCluster, type PrivateRedisCluster } from '@crawler/testkit';
import { waitFor } from '../__fixtures__/e2e.js';

let cluster: PrivateRedisCluster | undefined;

beforeAll(async () => {
  cluster = await startPrivateRedisCluster({ masters: 3, replicasPerMaster: 1, nodeTimeoutMs: 2_000 });
}, 120_000);

afterAll(async () => {
  await cluster?.close();
});

describe('an idle worker on a Redis Cluster', () => {
  it('takes the next job after the master of its queue was killed, and closes', async () => {
    const prefix = '{crawler_idle_worker}';
    const target = { url: 'redis://unused', clusterNodes: cluster!.seeds };
    const queue = new Queue('idle', { connection: createRedisConnection(target, 'producer'), prefix });
    const taken: string[] = [];
    const worker = new Worker('idle', async (job) => void taken.push(job.name), { connection: createRedisConnection(target, 'worker'), prefix, concurrency: 2 });
    worker.on('error', () => undefined); // the kill makes the worker's commands fail for a moment; it carries on
    try {
      await queue.add('before', {});
      await waitFor(async () => (taken.includes('before') ? true : null), 'the first job', 30_000);
      // Idle long enough to be blocked waiting for the next job.
      await new Promise((r) => setTimeout(r, 2_000));
      const slot = slotOf(prefix);
      const victim = (await cluster!.masters()).find((m) => m.slots.some(([a, b]) => slot >= a && slot <= b))!;
      await cluster!.kill(victim.port);
      await cluster!.waitHealthy(60_000);
      await queue.add('after', {});
      await waitFor(async () => (taken.includes('after') ? true : null), 'the job added after the failover', 30_000);
      const closed = await Promise.race([worker.close().then(() => 'closed'), new Promise((r) => setTimeout(() => r('close hung'), 15_000))]);
      expect(closed).toBe('closed');
    } finally {
      void worker.disconnect().catch(() => undefined);
      await queue.close().catch(() => undefined);
    }
  }, 180_000);
});
