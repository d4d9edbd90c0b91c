import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
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

  it('pins the delayed-set encoding countDelayedDueWithin reads: score = due ms × 0x1000 + a counter, for added and parked jobs', async () => {
    // countDelayedDueWithin reads BullMQ's delayed sorted set directly (one ZCOUNT per queue). BullMQ has no public
    // call that answers "is a delayed job due within a minute": getDelayed's jobs carry `timestamp` (creation) and
    // `delay` (relative to the moment they were moved), so a job parked by moveToDelayed has no public due time. If an
    // upgrade of BullMQ changes the encoding (commands/includes/getDelayedScore.lua), this test fails first.
    const name = 'delayed_encoding';
    const q = queues.queue(name);
    await q.obliterate({ force: true });
    const key = q.keys.delayed!;
    expect(key).toBe(`${prefix}:${name}:delayed`);
    const before = Date.now();
    await q.add('x', {}, { jobId: 'job-added', delay: 600_000 });
    const after = Date.now();
    const added = Number(await connection.zscore(key, 'job-added'));
    expect(Math.floor(added / 0x1000)).toBeGreaterThanOrEqual(before + 600_000);
    expect(Math.floor(added / 0x1000)).toBeLessThanOrEqual(after + 600_000);
    await q.add('x', {}, { jobId: 'job-parked' });
    const worker = new Worker(name, null, { connection, prefix });
    try {
      const job = await worker.getNextJob('park-token');
      expect(job?.id).toBe('job-parked');
      const due = Date.now() + 30_000;
      await job!.moveToDelayed(due, 'park-token');
      const parked = Number(await connection.zscore(key, 'job-parked'));
      expect(Math.floor(parked / 0x1000)).toBe(due);
      expect(parked % 0x1000).toBeLessThan(0x1000);
      expect(await queues.countDelayedDueWithin([name], 60_000)).toBe(1);
      expect(await queues.countDelayedDueWithin([name], 700_000)).toBe(2);
    } finally {
      await worker.close();
      await q.obliterate({ force: true });
    }
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

  it('tells in bulk where each job is, as getJobState does, for every state a job can be in', async () => {
    const name = 'state_probe';
    const q = queues.queue(name);
    await q.obliterate({ force: true });
    const url = 'https://a.example/';
    const keep = { attempts: 1, removeOnComplete: false, removeOnFail: false };
    for (const id of ['t1', 't2', 't3']) await q.add('x', {}, { jobId: id, ...keep });
    // Job ids must not be a queue key's name ('delayed', 'wait'...): a job's hash shares the queue's key space.
    // Manual processing: a worker without a processor takes jobs one at a time and finishes them by hand.
    const worker = new Worker(name, null, { connection, prefix });
    try {
      const token = 'probe-token';
      const taken = [await worker.getNextJob(token), await worker.getNextJob(token), await worker.getNextJob(token)];
      expect(taken.map((j) => j?.id)).toEqual(['t1', 't2', 't3']);
      await taken[0]!.moveToCompleted('ok', token, false);
      await taken[1]!.moveToFailed(new Error('boom'), token, false);
      await q.add('x', {}, { jobId: 'job-waiting' });
      await q.add('x', {}, { jobId: 'job-delayed', delay: 600_000 });
      await q.add('x', {}, { jobId: 'job-removed' });
      await q.getJob('job-removed').then((j) => j!.remove());
      const ids = ['job-waiting', 'job-delayed', 't1', 't2', 't3', 'job-removed', 'job-never'];
      const bullmq = await Promise.all(ids.map((id) => q.getJobState(id)));
      const ours = await queues.jobStates(ids.map((jobId) => ({ queue: name, url, jobId })));
      expect(bullmq).toEqual(['waiting', 'delayed', 'completed', 'failed', 'active', 'unknown', 'unknown']);
      expect(ours).toEqual(['live', 'live', 'completed', 'failed', 'live', 'missing', 'missing']);
      // Prioritized and paused-queue jobs are live too.
      await q.add('x', {}, { jobId: 'job-prio', priority: 3 });
      await q.pause();
      await q.add('x', {}, { jobId: 'job-paused' });
      expect(await Promise.all(['job-prio', 'job-paused'].map((id) => q.getJobState(id)))).toEqual(['prioritized', 'waiting']);
      expect(await queues.jobStates(['job-prio', 'job-paused'].map((jobId) => ({ queue: name, url, jobId })))).toEqual(['live', 'live']);
      await q.resume();
    } finally {
      await worker.close();
      await q.obliterate({ force: true });
    }
  });

  it('adds route jobs in bulk with a delay each, and a job id that exists stays one job', async () => {
    const ids = Array.from({ length: 2_500 }, (_, i) => `5f2b8c1e-2d4a-4c5b-9e6f-${String(i).padStart(12, '0')}`);
    await queues.routeQueue().obliterate({ force: true });
    const inputs = ids.map((id) => ({ linkId: id, url: 'https://bulk.example/' }));
    await queues.enqueueRoutes(inputs, ids.map((_, i) => (i % 10 === 0 ? { delayMs: 600_000 } : undefined)));
    await queues.enqueueRoutes(inputs.slice(0, 100));
    const counts = await queues.countJobs([ROUTE_QUEUE]);
    expect(counts.delayed).toBe(250);
    expect(counts.waiting + counts.prioritized).toBe(2_250);
    expect((await queues.routeQueue().getJob(ids[10]!))!.opts.delay).toBe(600_000);
    await queues.routeQueue().obliterate({ force: true });
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

  it('sends the single adds of one turn of the event loop as one bulk add per queue, and falls back to adds one by one when it fails', async () => {
    const name = fetchQueueName('playwright_stealth');
    const q = queues.fetchQueue('playwright_stealth');
    const bulk = vi.spyOn(q, 'addBulk');
    const single = vi.spyOn(q, 'add');
    const ids = Array.from({ length: 12 }, (_, i) => `5f2b8c1e-2d4a-4c5b-9e6f-${String(i).padStart(12, '0')}`);
    const input = (id: string) => ({ linkId: id, url: `https://c.example/${id}`, fetcher: 'playwright_stealth', selectionSource: 'learned' as const });
    // Twelve decisions at once, one of them twice (a duplicate route job): one bulk add, eleven jobs.
    const jobIds = await Promise.all([...ids.map((id) => queues.enqueueFetch(input(id))), queues.enqueueFetch(input(ids[0]!))]);
    expect(new Set(jobIds).size).toBe(12);
    expect(bulk).toHaveBeenCalledTimes(1);
    expect(single).not.toHaveBeenCalled();
    expect((await queues.countJobs([name])).waiting).toBe(12);
    // Redis refuses the bulk add: every add is retried alone and resolves once its job exists (the old ones stay one job).
    bulk.mockRejectedValueOnce(new Error('READONLY You can\'t write against a read only replica.'));
    const more = ['6f2b8c1e-2d4a-4c5b-9e6f-000000000001', '6f2b8c1e-2d4a-4c5b-9e6f-000000000002'];
    await Promise.all([...more.map((id) => queues.enqueueFetch(input(id))), queues.enqueueFetch(input(ids[1]!))]);
    expect(single).toHaveBeenCalledTimes(3);
    expect((await queues.countJobs([name])).waiting).toBe(14);
    // One that fails alone rejects alone.
    single.mockRejectedValueOnce(new Error('boom'));
    bulk.mockRejectedValueOnce(new Error('bulk refused'));
    const settled = await Promise.allSettled(['7f2b8c1e-2d4a-4c5b-9e6f-000000000001', '7f2b8c1e-2d4a-4c5b-9e6f-000000000002'].map((id) => queues.enqueueFetch(input(id))));
    expect(settled.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    bulk.mockRestore();
    single.mockRestore();
    await queues.obliterate([name]);
  });
  it('names a queue with jobs ready and no worker connected as unserved, and not once a worker serves it', async () => {
    const name = fetchQueueName('playwright');
    await queues.obliterate([name]);
    expect(await queues.unservedQueues([name])).toEqual([]);
    const ids = ['8f2b8c1e-2d4a-4c5b-9e6f-000000000001', '8f2b8c1e-2d4a-4c5b-9e6f-000000000002'];
    for (const id of ids) await queues.enqueueFetch({ linkId: id, url: `https://d.example/${id}`, fetcher: 'playwright', selectionSource: 'learned' });
    // Delayed jobs are not ready: they do not make a queue unserved.
    await queues.enqueueFetch({ linkId: '8f2b8c1e-2d4a-4c5b-9e6f-000000000003', url: 'https://d.example/later', fetcher: 'playwright', selectionSource: 'learned' }, { delayMs: 60_000 });
    expect(await queues.unservedQueues([ROUTE_QUEUE, name])).toEqual([{ queue: name, shard: 0, label: name, ready: 2 }]);
    expect((await queues.workerCounts([name]))[name]).toBe(0);
    // A worker that holds its one job: the other still waits, and the queue is served.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const worker = new Worker(name, async () => (started(), held), { connection, prefix, concurrency: 1 });
    try {
      await running;
      expect((await queues.countJobs([name])).waiting).toBe(1);
      expect((await queues.workerCounts([name]))[name]).toBeGreaterThan(0);
      expect(await queues.unservedQueues([name])).toEqual([]);
    } finally {
      release();
      await worker.close();
      await queues.obliterate([name]);
    }
  });
});
