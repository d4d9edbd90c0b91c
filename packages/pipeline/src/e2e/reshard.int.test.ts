/**
 * Changing QUEUE_SHARDS on a deployment with work in flight (README "Changing QUEUE_SHARDS"): links enqueued under one
 * shard count are finished by workers restarted with another, none stranded in a queue nobody consumes any more.
 * Shared Redis under this file's own prefix; its own database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { JobQueues, ROUTE_QUEUE, deleteRedisPrefix, shardPrefix } from '@crawler/queue';
import { startTestServer, staticArticle, type TestServer } from '@crawler/testkit';
import { loadConfig } from '../config/crawler-config.js';
import { createRuntime } from '../runtime/create-runtime.js';
import type { CrawlerRuntime } from '../runtime/crawler-runtime.js';
import { REDIS_URL } from '../__fixtures__/e2e.js';

const HOSTS = 20;
const PER_HOST = 10;
let servers: TestServer[] = [];
const dbs: TestDatabase[] = [];
const prefixes: string[] = [];
let runtime: CrawlerRuntime | undefined;

beforeAll(async () => {
  servers = await Promise.all(
    Array.from({ length: HOSTS }, (_, h) => startTestServer({ '/r/*': (req, res) => res.end(staticArticle({ title: `Reshard ${h} ${req.url}` })) }, { host: `127.0.23.${h + 1}` })),
  );
}, 60_000);

afterAll(async () => {
  await runtime?.close({ drainTimeoutMs: 2_000 });
  await Promise.all(servers.map((s) => s.close()));
  const r = new Redis(REDIS_URL);
  try {
    for (const p of prefixes) for (const shard of [0, 1, 2]) for (const n of [2, 3]) await deleteRedisPrefix(r, `${shardPrefix(p, shard, n)}:`);
  } finally {
    r.disconnect();
  }
  for (const db of dbs) await db.drop().catch(() => undefined);
});

function runtimeWith(db: TestDatabase, prefix: string, shards: number): CrawlerRuntime {
  const config = loadConfig({
    DATABASE_URL: db.url,
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    QUEUE_SHARDS: String(shards),
    ALLOW_PRIVATE_NETWORKS: 'true',
    FETCHERS: 'simple_http:6',
    // Every page through its fetch queue: the test counts fetch jobs per shard (an inline fetch has none).
    FETCH_INLINE: 'false',
    ROBOTS_ENABLED: 'false',
    DOMAIN_MIN_DELAY_MS: '0',
    DOMAIN_MAX_CONCURRENCY: '4',
    LOG_LEVEL: 'silent',
  });
  return createRuntime(config, { prisma: db.prisma });
}

async function reshard(label: string, from: number, to: number): Promise<void> {
  const db = await createTestDatabase(`reshard_${label}`);
  dbs.push(db);
  const prefix = `{crawler_test_reshard_${label}_${process.pid}}`;
  prefixes.push(prefix);
  const urls = servers.flatMap((s) => Array.from({ length: PER_HOST }, (_, i) => s.url(`/r/${i}`)));
  // The old deployment takes the links and is stopped before any worker ran.
  const before = runtimeWith(db, prefix, from);
  expect((await before.enqueue(urls)).accepted).toHaveLength(urls.length);
  expect((await before.counts()).waiting).toBe(urls.length);
  await before.close();
  // The new one: every worker restarted with the new shard count, then the crawl runs to the end.
  runtime = runtimeWith(db, prefix, to);
  runtime.startWorkers();
  await runtime.waitUntilIdle({ pollMs: 200 });
  expect(await db.prisma.link.groupBy({ by: ['status'], _count: true })).toEqual([{ status: 'done', _count: urls.length }]);
  const pages = await db.prisma.fetchedContent.groupBy({ by: ['linkId'], _count: true });
  expect(pages.filter((p) => p._count !== 1)).toEqual([]);
  expect(pages).toHaveLength(urls.length);
  // Every shard of the new layout fetched some of the pages (old route jobs may all run on shard 0, which keeps its
  // prefix; their fetch jobs go to the link's new shard).
  const perShard = await Promise.all(runtime.queues.allShards().map((s) => runtime!.queues.fetchQueue('simple_http', s).getJobCounts('completed')));
  for (const c of perShard) expect(c.completed).toBeGreaterThan(0);
  // Going down, some jobs sat in queues of shards that no longer exist: nobody consumed them (they are still there),
  // yet their links are done: the reconciler rebuilt them from Postgres on the links' new shards.
  const old = new JobQueues({ connection: runtime.redis, prefix, shards: from });
  const orphaned = old.allShards().filter((s) => !runtime!.queues.prefixes.includes(old.prefixOf(s)));
  const left = orphaned.length === 0 ? 0 : (await old.countJobs([ROUTE_QUEUE], orphaned)).waiting;
  await old.close();
  if (to < from) expect(left).toBeGreaterThan(0);
  else expect(orphaned).toEqual([]);
  await runtime.close();
  runtime = undefined;
}

describe('changing QUEUE_SHARDS with links in flight', () => {
  it('1 → 3: jobs queued in the unsharded layout finish, each link once', async () => {
    await reshard('up', 1, 3);
  }, 180_000);

  it('3 → 2: jobs left in shards that no longer exist are rebuilt from Postgres by the reconciler', async () => {
    await reshard('down', 3, 2);
  }, 180_000);
});
