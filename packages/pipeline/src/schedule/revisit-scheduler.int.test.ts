import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { silentLogger } from '@crawler/core';
import { ScheduleStore } from '@crawler/db';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { JobQueues, ROUTE_QUEUE, deleteRedisPrefix } from '@crawler/queue';
import { REDIS_URL } from '../__fixtures__/e2e.js';
import { RevisitScheduler } from './revisit-scheduler.js';

const PREFIX = `{crawler_test_pipeline_scheduler_${process.pid}}`;
let db: TestDatabase;
let redis: Redis;
let queues: JobQueues;

beforeAll(async () => {
  db = await createTestDatabase('pipeline_scheduler');
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  queues = new JobQueues({ connection: redis, prefix: PREFIX });
});

afterAll(async () => {
  await queues?.close();
  await deleteRedisPrefix(redis, PREFIX);
  redis?.disconnect();
  await db?.drop();
});

describe('RevisitScheduler', () => {
  it('adds route jobs for due links only while the route queue has room, soonest due first', async () => {
    // 10 links due (visited 2 h ago, hourly), 5 not yet (visited now).
    await db.prisma.$executeRawUnsafe(
      `INSERT INTO links (url, initial_url, domain, status, revisit_mode, revisit_interval_s, last_attempt_at)
       SELECT 'https://due.test/' || i, 'https://due.test/' || i, 'due.test', 'done', 'fixed', 3600,
         CASE WHEN i <= 10 THEN now() - interval '2 hours' - i * interval '1 minute' ELSE now() END
       FROM generate_series(1, 15) i`,
    );
    const scheduler = new RevisitScheduler({ schedule: new ScheduleStore({ prisma: db.prisma }), queues, logger: silentLogger, settings: { intervalMs: 0, batchSize: 2, maxQueued: 4 } });
    expect(await scheduler.runOnce()).toEqual({ claimed: 4 });
    const jobs = await queues.routeQueue().getJobs(['waiting', 'prioritized']);
    // The longest overdue first (i = 10, 9, 8, 7), each at its new generation.
    expect(jobs.map((j) => j.data.url).sort()).toEqual(['https://due.test/10', 'https://due.test/7', 'https://due.test/8', 'https://due.test/9']);
    expect(jobs.every((j) => j.data.generation === 1)).toBe(true);
    // Four wait: no room, nothing claimed; the rest stays due in Postgres.
    expect(await scheduler.runOnce()).toEqual({ claimed: 0 });
    expect(await db.prisma.link.count({ where: { nextFetchAt: { lte: new Date() } } })).toBe(6);
    // Once the fleet has taken them, the next pass takes the rest of the due ones, and only those.
    await queues.routeQueue().drain();
    expect(await scheduler.runOnce()).toEqual({ claimed: 4 });
    await queues.routeQueue().drain();
    expect(await scheduler.runOnce()).toEqual({ claimed: 2 });
    expect(await scheduler.runOnce()).toEqual({ claimed: 0 });
    expect(await db.prisma.link.count({ where: { status: 'queued' } })).toBe(10);
    expect(await queues.countJobs([ROUTE_QUEUE])).toMatchObject({ waiting: 2 });
    await scheduler.stop();
    expect(await scheduler.runOnce()).toBeNull();
  });

  it("gives a due link's route job the priority the link was posted with: a backfill's revisits stay behind everyday work", async () => {
    await db.prisma.$executeRawUnsafe(
      `INSERT INTO links (url, initial_url, domain, status, revisit_mode, revisit_interval_s, last_attempt_at, priority)
       VALUES ('https://backfill.test/a', 'https://backfill.test/a', 'backfill.test', 'done', 'fixed', 3600, now() - interval '2 hours', 500),
              ('https://everyday.test/a', 'https://everyday.test/a', 'everyday.test', 'done', 'fixed', 3600, now() - interval '2 hours', NULL)`,
    );
    await queues.routeQueue().drain();
    const scheduler = new RevisitScheduler({ schedule: new ScheduleStore({ prisma: db.prisma }), queues, logger: silentLogger, settings: { intervalMs: 0, batchSize: 10, maxQueued: 100 } });
    expect(await scheduler.runOnce()).toEqual({ claimed: 2 });
    const jobs = await queues.routeQueue().getJobs(['waiting', 'prioritized']);
    const priorityOf = (url: string) => jobs.find((j) => j.data.url === url)!.opts.priority ?? 0;
    expect([priorityOf('https://backfill.test/a'), priorityOf('https://everyday.test/a')]).toEqual([500, 0]);
    await scheduler.stop();
  });
});
