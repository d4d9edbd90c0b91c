import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from 'bullmq';
import { JobQueues } from './job-queues.js';
import { createRedisConnection, closeRedisConnection } from './connection.js';
import { ROUTE_QUEUE, fetchQueueName } from './catalog/queue-names.js';
import { parseJobData } from './parse-job.js';
import { RouteJobSchema } from './catalog/payloads.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `{crawler_test_queue_${process.pid}}`;
const linkId = '3f2b8c1e-2d4a-4c5b-9e6f-0a1b2c3d4e5f';

describe('JobQueues against real Redis', () => {
  const connection = createRedisConnection(REDIS_URL, 'worker');
  let queues: JobQueues;

  beforeAll(() => {
    queues = new JobQueues({ connection, prefix });
  });

  afterAll(async () => {
    await queues.obliterate([ROUTE_QUEUE, fetchQueueName('simple_http')]);
    await queues.close();
    await closeRedisConnection(connection);
  });

  it('stores the same link once however often it is enqueued, under the hash-tagged prefix', async () => {
    await queues.enqueueRoute({ linkId, url: 'https://a.example/' });
    await queues.enqueueRoute({ linkId, url: 'https://a.example/' });
    await queues.enqueueRoutes([{ linkId, url: 'https://a.example/' }]);
    expect((await queues.countJobs([ROUTE_QUEUE])).waiting).toBe(1);
    const keys = await connection.keys(`${prefix}:route:*`);
    expect(keys.length).toBeGreaterThan(0);
  });

  it('delays a job when asked', async () => {
    await queues.enqueueFetch({ linkId, url: 'https://a.example/', fetcher: 'direct_access', selectionSource: 'probe' }, { delayMs: 60_000 });
    const counts = await queues.countJobs([fetchQueueName('simple_http')]);
    expect(counts.delayed).toBe(1);
  });

  it('counts the delayed jobs that fall due within a horizon, not the ones parked for longer', async () => {
    const name = fetchQueueName('playwright');
    const other = '4f2b8c1e-2d4a-4c5b-9e6f-0a1b2c3d4e5f';
    await queues.enqueueFetch({ linkId, url: 'https://a.example/', fetcher: 'playwright', selectionSource: 'probe' }, { delayMs: 2_000 });
    await queues.enqueueFetch({ linkId: other, url: 'https://b.example/', fetcher: 'playwright', selectionSource: 'probe' }, { delayMs: 600_000 });
    expect((await queues.countJobs([name])).delayed).toBe(2);
    expect(await queues.countDelayedDueWithin([name], 60_000)).toBe(1);
    expect(await queues.countDelayedDueWithin([name], 1_000)).toBe(0);
    expect(await queues.countDelayedDueWithin([name], 700_000)).toBe(2);
    await queues.obliterate([name]);
  });

  it('with shards, puts each link on its domain\'s shard under that shard\'s hash tag, and counts over every shard', async () => {
    const sharded = new JobQueues({ connection, prefix: `${prefix.slice(0, -1)}_sh}`, shards: 3 });
    try {
      const hosts = Array.from({ length: 12 }, (_, i) => `https://site${i}.example/page`);
      const inputs = hosts.map((url, i) => ({ linkId: `3f2b8c1e-2d4a-4c5b-9e6f-0a1b2c3d4e${String(i).padStart(2, '0')}`, url }));
      await sharded.enqueueRoutes(inputs);
      await sharded.enqueueRoute({ linkId: inputs[0]!.linkId, url: 'https://www.sub.site0.example/other' });
      expect((await sharded.countJobs([ROUTE_QUEUE])).waiting).toBe(12);
      const perShard = await sharded.countJobsByShard([ROUTE_QUEUE], ['waiting']);
      expect(perShard.filter((c) => (c.counts.waiting ?? 0) > 0).map((c) => c.shard)).toEqual([0, 1, 2]);
      for (const input of inputs) {
        const shard = sharded.shardOf(input.url);
        expect(await sharded.routeQueue(shard).getJobState(input.linkId)).toBe('waiting');
        expect(await sharded.queueFor(ROUTE_QUEUE, input.url).getJob(input.linkId)).toBeDefined();
        expect(await connection.exists(`${sharded.prefixOf(shard)}:route:${input.linkId}`)).toBe(1);
      }
      const f = await sharded.enqueueFetch({ linkId: inputs[5]!.linkId, url: inputs[5]!.url, fetcher: 'simple_http', selectionSource: 'probe' });
      expect(await sharded.fetchQueue('simple_http', sharded.shardOf(inputs[5]!.url)).getJobState(f)).toBe('waiting');
      expect(Object.keys(await sharded.queueDepths([ROUTE_QUEUE], ['waiting']))).toEqual(['route@s0', 'route@s1', 'route@s2']);
    } finally {
      await sharded.obliterate([ROUTE_QUEUE, fetchQueueName('simple_http')]);
      expect((await sharded.countJobs([ROUTE_QUEUE])).waiting).toBe(0);
      await sharded.close();
    }
  });

  it('fails a job with a bad payload and keeps the worker running', async () => {
    const q = queues.routeQueue();
    await q.obliterate({ force: true });
    await q.add('route', { linkId: 'not-a-uuid', url: 'nope' }, { jobId: 'bad1' });
    await q.add('route', { linkId, url: 'https://b.example/' }, { jobId: 'good1' });
    const seen: string[] = [];
    const worker = new Worker(
      ROUTE_QUEUE,
      async (job) => {
        const data = parseJobData(RouteJobSchema, job.data, { queue: ROUTE_QUEUE, jobId: job.id });
        seen.push(data.url);
      },
      { connection, prefix },
    );
    await new Promise<void>((resolve) => {
      let n = 0;
      const done = (): void => {
        n += 1;
        if (n === 2) resolve();
      };
      worker.on('completed', done);
      worker.on('failed', done);
    });
    await worker.close();
    const bad = await q.getJob('bad1');
    expect(bad?.failedReason).toMatch(/invalid route job bad1/);
    expect(bad?.attemptsMade).toBe(1);
    expect(seen).toEqual(['https://b.example/']);
  });
});
