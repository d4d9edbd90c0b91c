/**
 * The reporting commands an operator runs while looking into an outage, with Redis down (a port nothing listens on):
 * they must end, in one line that says what is wrong, not hang or dump ioredis' stack.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { freePort } from '@crawler/testkit';
import { captureIO } from './__fixtures__/capture-io.js';
import { runCli } from './cli.js';

let db: TestDatabase;
let redisUrl: string;

beforeAll(async () => {
  db = await createTestDatabase('cli_redis_down');
  redisUrl = `redis://127.0.0.1:${await freePort()}`;
}, 60_000);

afterAll(async () => {
  await db?.drop();
});

describe('Redis down', () => {
  for (const argv of [['explain', 'https://down.example/a'], ['stats']]) {
    it(`crawl ${argv[0]} ends with one line saying Redis does not answer`, async () => {
      const t = captureIO();
      t.io.env = { DATABASE_URL: db.url, REDIS_URL: redisUrl, QUEUE_PREFIX: '{crawler_test_redis_down}', LOG_LEVEL: 'silent' };
      // A command that waited for Redis for good would hang here: the test's own timeout fails it.
      expect(await runCli(argv, t.io)).toBe(1);
      const err = t.err();
      expect(err).toMatch(new RegExp(`^crawl ${argv[0]}: Redis does not answer`));
      expect(err).toMatch(/REDIS_URL/);
      expect(err).not.toMatch(/MaxRetriesPerRequestError|at Socket/);
      expect(err.trim().split('\n')).toHaveLength(1);
    }, 30_000);
  }
});
