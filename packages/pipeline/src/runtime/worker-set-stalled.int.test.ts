import { afterAll, describe, expect, it, vi } from 'vitest';
import { Queue, Worker } from 'bullmq';
import type { Logger } from '@crawler/core';
import { createRedisConnection, deleteRedisPrefix } from '@crawler/queue';
import { REDIS_URL } from '@crawler/testkit';
import { WorkerSet } from './worker-set.js';

const PREFIX = `{crawler_test_stalled_${process.pid}}`;
const redis = createRedisConnection(REDIS_URL, 'worker');

afterAll(async () => {
  await deleteRedisPrefix(redis, PREFIX);
  redis.disconnect();
});

describe('WorkerSet: a worker that stopped taking part', () => {
  it('counts a stalled job by queue (crawler_jobs_stalled_total) and warns, on the worker that found it', async () => {
    const warnings: Array<{ o: Record<string, unknown>; msg: string }> = [];
    const logger = { debug: () => undefined, info: () => undefined, error: () => undefined, warn: (o: Record<string, unknown>, msg: string) => void warnings.push({ o, msg }), child: () => logger } as unknown as Logger;
    const stalled: string[] = [];
    const set = new WorkerSet({ links: { updateUnlessFinished: async () => true }, logger, infraRetryMaxMs: 1_000, served: new Set(), metrics: { jobStalled: (q) => void stalled.push(q) } });
    const queue = new Queue('route', { connection: redis, prefix: PREFIX });
    // The dead worker: it takes the job and never renews its lock nor finishes, as a process killed mid-job.
    let taken!: () => void;
    const tookIt = new Promise<void>((resolve) => (taken = resolve));
    const deadRedis = createRedisConnection(REDIS_URL, 'worker');
    const aliveRedis = createRedisConnection(REDIS_URL, 'worker');
    const dead = new Worker('route', () => (taken(), new Promise(() => undefined)), { connection: deadRedis, prefix: PREFIX, skipLockRenewal: true, skipStalledCheck: true, lockDuration: 500 });
    await queue.add('r', { linkId: 'x' }, { jobId: 'stall-1' });
    await tookIt;
    const alive = new Worker('route', async () => 'ok', { connection: aliveRedis, prefix: PREFIX, stalledInterval: 300, lockDuration: 500, maxStalledCount: 2 });
    set.add(alive);
    try {
      await vi.waitFor(() => expect(stalled).toEqual(['route']), { timeout: 20_000, interval: 100 });
      expect(warnings.find((w) => w.msg.startsWith('job stalled'))?.o).toMatchObject({ jobId: 'stall-1', stalled: 1 });
    } finally {
      await set.close(1_000);
      await dead.close(true);
      await queue.close();
      deadRedis.disconnect();
      aliveRedis.disconnect();
    }
  });
});
