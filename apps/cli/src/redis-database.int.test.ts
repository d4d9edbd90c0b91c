/**
 * REDIS_URL's database index (`redis://host:6379/3`): ioredis selects it without waiting for the answer, so a database
 * the server does not have used to mean database 0, silently. A private redis-server (16 databases).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { createRedisConnection } from '@crawler/queue';
import { startPrivateRedis, type PrivateRedis } from '@crawler/testkit';
import { captureIO } from './__fixtures__/capture-io.js';
import { runCli } from './cli.js';

const PREFIX = '{crawler_test_cli_db}';
let db: TestDatabase;
let redis: PrivateRedis;

beforeAll(async () => {
  [db, redis] = await Promise.all([createTestDatabase('cli_redis_db'), startPrivateRedis()]);
}, 60_000);

afterAll(async () => {
  await redis?.close();
  await db?.drop();
});

function run(argv: string[], redisUrl: string) {
  const t = captureIO();
  t.io.env = { DATABASE_URL: db.url, REDIS_URL: redisUrl, QUEUE_PREFIX: PREFIX, FETCHERS: 'simple_http', LOG_LEVEL: 'silent', RECONCILE_INTERVAL_MS: '0', SCHEDULER_INTERVAL_MS: '0' };
  return { t, code: runCli(argv, t.io) };
}

describe('REDIS_URL with a database index', () => {
  for (const argv of [['enqueue', 'https://db.example/a'], ['stats'], ['pauses'], ['reconcile']]) {
    it(`crawl ${argv[0]} refuses a database the server does not have, naming REDIS_URL`, async () => {
      const { t, code } = run(argv, `${redis.url}/99`);
      expect(await code).toBe(2);
      expect(t.err()).toMatch(new RegExp(`^crawl ${argv[0]}: REDIS_URL="redis://127\\.0\\.0\\.1:\\d+/99": this Redis has no database 99 \\(it has 16: 0 to 15`));
    }, 60_000);
  }

  it('crawl enqueue puts its jobs in the database REDIS_URL names, not in database 0', async () => {
    const { t, code } = run(['enqueue', 'https://db.example/b'], `${redis.url}/5`);
    expect(await code, t.err()).toBe(0);
    const client = createRedisConnection(redis.url, 'producer');
    try {
      expect(await client.keys(`${PREFIX}*`)).toEqual([]);
      await client.select(5);
      expect(await client.keys(`${PREFIX}:route:*`)).not.toEqual([]);
    } finally {
      client.disconnect();
    }
  }, 60_000);
});
