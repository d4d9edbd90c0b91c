/**
 * The revisit scheduler's cost with many scheduled links: N links with a fixed revisit policy in Postgres (spread
 * over the next 30 days, D of them due now), the scheduler (RevisitScheduler: claim with FOR UPDATE SKIP LOCKED,
 * add route jobs) enqueues the due ones; measured per due link, at N = --small and N = --large, against the same
 * route jobs added without a claim (the Redis part alone), in the same run. Redis memory is what the scheduler's
 * jobs take (MEMORY USAGE over the bench's key prefix), and, for comparison, what one delayed job per scheduled
 * link (the design we do not use) would take, measured on --delayed-sample jobs and scaled to N.
 *
 *   node dist/schedule-bench.js [--large 1000000] [--small 20000] [--due 10000] [--batch 500] [--delayed-sample 10000]
 */
import { Redis } from 'ioredis';
import { silentLogger } from '@crawler/core';
import { ScheduleStore } from '@crawler/db';
import { createTestDatabase } from '@crawler/db/testing';
import { RevisitScheduler } from '@crawler/pipeline';
import { JobQueues, ROUTE_QUEUE, deleteRedisPrefix } from '@crawler/queue';
import { benchArgs } from './cli-args.js';
import { benchEnv } from './env.js';

const { values } = benchArgs({
  script: 'schedule-bench',
  options: {
    large: { type: 'string', default: '1000000', description: 'scheduled links in the large run' },
    small: { type: 'string', default: '20000', description: 'scheduled links in the small run' },
    due: { type: 'string', default: '10000', description: 'scheduled links due now, which the scheduler enqueues' },
    batch: { type: 'string', default: '500', description: "links per scheduler claim, and per add of the reference's route jobs" },
    'delayed-sample': { type: 'string', default: '10000', description: 'delayed jobs added to measure the one-delayed-job-per-link design' },
  },
});
const due = Number(values.due);
const batch = Number(values.batch);
const redis = new Redis(benchEnv().redisUrl);

/** Bytes the keys under `prefix` take in Redis (MEMORY USAGE of each, summed). */
async function prefixBytes(prefix: string): Promise<number> {
  let total = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    for (const k of keys) total += Number((await redis.memory('USAGE', k, 'SAMPLES', '0')) ?? 0);
  } while (cursor !== '0');
  return total;
}

async function run(scheduled: number): Promise<Record<string, number>> {
  const db = await createTestDatabase(`bench_schedule_${scheduled}`);
  const prefix = `{crawler_bench_schedule_${process.pid}_${scheduled}}`;
  const queues = new JobQueues({ connection: redis, prefix });
  try {
    let t = performance.now();
    // Links visited over the last 30 days with a 30-day interval: next_fetch_at spread over the next 30 days (the
    // trigger computes it on insert); the first `due` of them were visited 31 days ago: due now.
    await db.prisma.$executeRawUnsafe(
      `INSERT INTO links (url, initial_url, domain, status, revisit_mode, revisit_interval_s, last_attempt_at)
       SELECT 'https://h' || (i % 5000) || '.example/p/' || i, 'https://h' || (i % 5000) || '.example/p/' || i, 'h' || (i % 5000) || '.example',
         'done', 'fixed', 2592000,
         CASE WHEN i <= ${due} THEN now() - interval '31 days' ELSE now() - (i::float8 / ${scheduled}) * interval '30 days' END
       FROM generate_series(1, ${scheduled}) i`,
    );
    await db.prisma.$executeRawUnsafe('ANALYZE links');
    const insertS = (performance.now() - t) / 1000;
    const before = await prefixBytes(prefix);
    const scheduler = new RevisitScheduler({ schedule: new ScheduleStore({ prisma: db.prisma }), queues, logger: silentLogger, settings: { intervalMs: 0, batchSize: batch, maxQueued: due * 2 } });
    t = performance.now();
    const pass = await scheduler.runOnce();
    const schedulerMs = performance.now() - t;
    const jobsBytes = (await prefixBytes(prefix)) - before;
    // An empty pass (nothing due): what every tick costs when the schedule has nothing to give.
    t = performance.now();
    await scheduler.runOnce();
    const idlePassMs = performance.now() - t;
    // Once the claimed rows' dead index entries have been seen, an idle pass is an empty index range scan.
    t = performance.now();
    await scheduler.runOnce();
    const idlePass2Ms = performance.now() - t;
    const plan = (await db.prisma.$queryRawUnsafe<Array<{ 'QUERY PLAN': string }>>(
      `EXPLAIN (ANALYZE, BUFFERS) SELECT id FROM links WHERE next_fetch_at IS NOT NULL AND next_fetch_at <= now() ORDER BY next_fetch_at LIMIT ${batch}`,
    )).map((r) => r['QUERY PLAN']);
    console.error(`plan at ${scheduled} scheduled:\n${plan.join('\n')}`);

    // Reference: the same number of route jobs added with no claim (Redis alone).
    const refPrefix = `${prefix.slice(0, -1)}_ref}`;
    const refQueues = new JobQueues({ connection: redis, prefix: refPrefix });
    const ids = (await db.prisma.link.findMany({ where: { status: 'queued' }, select: { id: true, url: true, generation: true } })).map((l) => ({ linkId: l.id, url: l.url, generation: l.generation + 100 }));
    t = performance.now();
    for (let i = 0; i < ids.length; i += batch) await refQueues.enqueueRoutes(ids.slice(i, i + batch));
    const enqueueOnlyMs = performance.now() - t;
    await deleteRedisPrefix(redis, refPrefix);
    await refQueues.close();
    return {
      scheduled, due: pass?.claimed ?? 0, insertS: Math.round(insertS), schedulerUsPerDueLink: Math.round((schedulerMs * 1000) / (pass?.claimed || due)),
      enqueueOnlyUsPerLink: Math.round((enqueueOnlyMs * 1000) / ids.length), idlePassMs: Math.round(idlePassMs * 10) / 10, idlePass2Ms: Math.round(idlePass2Ms * 10) / 10,
      redisBytesPerDueLink: Math.round(jobsBytes / (pass?.claimed || due)), redisBytesTotal: jobsBytes,
    };
  } finally {
    await deleteRedisPrefix(redis, prefix);
    await queues.close();
    await db.drop();
  }
}

/** The design we do not use: one delayed BullMQ job per scheduled link, measured on a sample. */
async function delayedJobBytes(sample: number): Promise<number> {
  const prefix = `{crawler_bench_schedule_delayed_${process.pid}}`;
  try {
    const q = new JobQueues({ connection: redis, prefix }).routeQueue();
    for (let i = 0; i < sample; i += 1000) {
      await q.addBulk(Array.from({ length: Math.min(1000, sample - i) }, (_, k) => ({
        name: 'route', data: { linkId: crypto.randomUUID(), url: `https://h${i + k}.example/p/${i + k}`, generation: 1 }, opts: { jobId: `d${i + k}`, delay: 86_400_000 + (i + k) * 1000 },
      })));
    }
    const bytes = await prefixBytes(prefix);
    await q.close();
    return bytes / sample;
  } finally {
    await deleteRedisPrefix(redis, prefix);
  }
}

const results = { small: await run(Number(values.small)), large: await run(Number(values.large)), delayedJobBytesEach: Math.round(await delayedJobBytes(Number(values['delayed-sample']))) };
const large = results.large;
console.log(JSON.stringify({
  ...results,
  ratios: {
    schedulerLargeVsSmall: Math.round((large.schedulerUsPerDueLink! / results.small.schedulerUsPerDueLink!) * 100) / 100,
    schedulerVsEnqueueOnly: Math.round((large.schedulerUsPerDueLink! / large.enqueueOnlyUsPerLink!) * 100) / 100,
  },
  redisIfOneDelayedJobPerLinkMiB: Math.round((results.delayedJobBytesEach * large.scheduled) / 1048576),
  redisSchedulerMiB: Math.round((large.redisBytesTotal! / 1048576) * 10) / 10,
  queue: ROUTE_QUEUE,
}, null, 2));
redis.disconnect();
