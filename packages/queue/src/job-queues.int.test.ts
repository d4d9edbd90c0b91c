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
