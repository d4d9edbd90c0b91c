/**
 * A Redis that is full (maxmemory reached, noeviction: BullMQ's required policy) answers PING but refuses every write.
 * `crawl enqueue` and `crawl crawl` must say so and what to do, not dump ioredis' ReplyError with a Lua script's hash.
 * A private redis-server: the shared one is never filled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisConnection } from '@crawler/queue';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { startPrivateRedis, type PrivateRedis } from '@crawler/testkit';
import { captureIO } from './__fixtures__/capture-io.js';
import { runCli } from './cli.js';

let db: TestDatabase;
let redis: PrivateRedis;

beforeAll(async () => {
  db = await createTestDatabase('cli_redis_full');
  redis = await startPrivateRedis();
  const client = createRedisConnection(redis.url, 'producer');
  await client.config('SET', 'maxmemory-policy', 'noeviction');
  await client.config('SET', 'maxmemory', '2mb');
  // Fill it past maxmemory in one script (a script may overshoot; the next write is refused).
  await client.eval("for i = 1, 400 do redis.call('SET', 'fill:' .. i, string.rep('x', 10000)) end", 0).catch(() => undefined);
  await expect(client.set('probe', '1')).rejects.toThrow(/^OOM/);
  client.disconnect();
}, 60_000);

afterAll(async () => {
  await redis?.close();
  await db?.drop();
});

describe('a full Redis', () => {
  for (const argv of [['enqueue', 'https://full.example/a'], ['crawl', 'https://full.example/b']]) {
    it(`crawl ${argv[0]} says Redis is full and that the links are kept, in one line without a stack`, async () => {
      const t = captureIO();
      t.io.env = { DATABASE_URL: db.url, REDIS_URL: redis.url, QUEUE_PREFIX: '{crawler_test_full}', FETCHERS: 'simple_http', LOG_LEVEL: 'silent', RECONCILE_INTERVAL_MS: '0', SCHEDULER_INTERVAL_MS: '0' };
      expect(await runCli(argv, t.io)).toBe(1);
      const err = t.err();
      expect(err).toMatch(new RegExp(`^crawl ${argv[0]}: Redis is full: it has reached its maxmemory`));
      expect(err).toMatch(/Nothing was lost: links already accepted are in Postgres/);
      expect(err).not.toMatch(/ReplyError|at parseError|script: [0-9a-f]{40}/);
      expect(err.trim().split('\n')).toHaveLength(1);
      // The link is stored, queued: the reconciler gives it its job once Redis takes writes.
      expect(await db.prisma.link.findFirst({ where: { url: argv[1] } })).toMatchObject({ status: 'queued' });
    }, 60_000);
  }
});
