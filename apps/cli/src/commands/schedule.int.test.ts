import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { JobQueues, deleteRedisPrefix, createRedisConnection } from '@crawler/queue';
import type { Redis } from 'ioredis';
import { captureIO } from '../__fixtures__/capture-io.js';
import { UsageError } from '../command.js';
import schedule from './schedule.js';
import enqueue from './enqueue.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `{crawler_test_cli_schedule_${process.pid}}`;
let db: TestDatabase;
let redis: Redis;

beforeAll(async () => {
  db = await createTestDatabase('cli_schedule');
  redis = createRedisConnection(REDIS_URL, 'producer');
});

afterAll(async () => {
  await deleteRedisPrefix(redis, PREFIX);
  redis.disconnect();
  await db?.drop();
});

function io() {
  const c = captureIO();
  c.io.env = { DATABASE_URL: db.url, REDIS_URL, QUEUE_PREFIX: PREFIX, FETCHERS: 'simple_http', LOG_LEVEL: 'silent' };
  return c;
}

describe('crawl enqueue --revisit and crawl schedule', () => {
  it('schedules links and shows what is due when', async () => {
    const e = io();
    expect(await enqueue.run(['--revisit', '6h', 'https://s.example/a', 'https://s.example/b'], e.io)).toBe(0);
    expect(await enqueue.run(['--revisit', 'adaptive:10m..7d', 'https://s.example/c'], io().io)).toBe(0);
    // Visits that ended: a and c an hour ago, b ten hours ago (so due now).
    const ago = (h: number) => new Date(Date.now() - h * 3_600_000);
    await db.prisma.link.update({ where: { url: 'https://s.example/a' }, data: { status: 'done', lastAttemptAt: ago(1) } });
    await db.prisma.link.update({ where: { url: 'https://s.example/b' }, data: { status: 'done', lastAttemptAt: ago(10) } });
    await db.prisma.link.update({ where: { url: 'https://s.example/c' }, data: { status: 'done', lastAttemptAt: ago(1) } });

    const s = io();
    expect(await schedule.run([], s.io)).toBe(0);
    expect(s.out()).toMatch(/^3 links scheduled: 2 due now, 0 within an hour, 1 within a day, 0 later\n/);
    const lines = s.out().trim().split('\n').slice(1);
    // Soonest first: b (6 h after 10 h ago), c (adaptive, 10 min after a first visit an hour ago), a (in 5 h).
    expect(lines.map((l) => l.trim().split(/\s+/).at(-1))).toEqual(['https://s.example/b', 'https://s.example/c', 'https://s.example/a']);
    const j = io();
    expect(await schedule.run(['--json', '--limit', '1'], j.io)).toBe(0);
    const json = JSON.parse(j.out()) as { scheduled: number; dueNow: number; next: Array<{ url: string }> };
    expect(json).toMatchObject({ scheduled: 3, dueNow: 2 });
    expect(json.next.map((n) => n.url)).toEqual(['https://s.example/b']);
  });

  it('enqueue --priority stores the priority on the link and gives its route job that priority; a bad one is refused', async () => {
    expect(await enqueue.run(['--priority', '7', 'https://s.example/p1'], io().io)).toBe(0);
    const link = await db.prisma.link.findUniqueOrThrow({ where: { url: 'https://s.example/p1' } });
    expect(link.priority).toBe(7);
    const queues = new JobQueues({ connection: redis, prefix: PREFIX });
    const jobs = await queues.routeQueue().getJobs(['prioritized', 'waiting']);
    await queues.close();
    expect(jobs.find((j) => j.data.linkId === link.id)?.opts.priority).toBe(7);
    for (const bad of ['0', '-1', '1.5', 'high', '2097153']) {
      await expect(enqueue.run([`--priority=${bad}`, 'https://s.example/p2'], io().io)).rejects.toThrow(/--priority must be a whole number from 1/);
    }
    expect(await db.prisma.link.count({ where: { url: 'https://s.example/p2' } })).toBe(0);
  });

  it('refuses an interval below the minimum and a bad max age, naming the flag', async () => {
    await expect(enqueue.run(['--revisit', '10s', 'https://s.example/x'], io().io)).rejects.toThrow(UsageError);
    await expect(enqueue.run(['--max-age=-1d', 'https://s.example/x'], io().io)).rejects.toThrow(/--max-age must not be negative/);
    expect(await db.prisma.link.count({ where: { url: 'https://s.example/x' } })).toBe(0);
  });
});
