/**
 * The reporting commands an operator runs while looking into an outage, with Redis or Postgres down (a port nothing
 * listens on): they must end, in one line that says what is wrong, not hang or dump a driver's stack.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { freePort } from '@crawler/testkit';
import { captureIO } from './__fixtures__/capture-io.js';
import { runCli } from './cli.js';

let db: TestDatabase;
let redisUrl: string;
let deadPort: number;

beforeAll(async () => {
  db = await createTestDatabase('cli_redis_down');
  redisUrl = `redis://127.0.0.1:${await freePort()}`;
  deadPort = await freePort();
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

describe('Postgres down', () => {
  for (const argv of [['explain', 'https://down.example/a'], ['stats'], ['enqueue', 'https://down.example/a'], ['crawl', 'https://down.example/a']]) {
    it(`crawl ${argv[0]} ends with one line saying Postgres does not answer, without DATABASE_URL's password`, async () => {
      const t = captureIO();
      t.io.env = { DATABASE_URL: `postgresql://postgres:s3cret-pw@127.0.0.1:${deadPort}/crawler`, REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', QUEUE_PREFIX: '{crawler_test_pg_down}', LOG_LEVEL: 'silent' };
      expect(await runCli(argv, t.io)).toBe(1);
      const err = t.err();
      expect(err).toMatch(new RegExp(`^crawl ${argv[0]}: Postgres does not answer \\(`));
      expect(err).toMatch(/DATABASE_URL/);
      expect(err).not.toMatch(/s3cret-pw|\n\s+at /);
      expect(err.trim().split('\n')).toHaveLength(1);
    }, 30_000);
  }
});

describe('the database missing or the login refused', () => {
  // A newcomer who has not run the setup, and one whose DATABASE_URL has a wrong user: the producer commands (the
  // crawler's main job) end in one line that says what to do, not a driver's stack.
  for (const argv of [['enqueue', 'https://down.example/a'], ['crawl', 'https://down.example/a'], ['stats']]) {
    it(`crawl ${argv[0]} says the database does not exist and how to make it`, async () => {
      const t = captureIO();
      t.io.env = { DATABASE_URL: `postgresql://postgres:s3cret-pw@127.0.0.1:5432/crawler_absent_${process.pid}`, REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', QUEUE_PREFIX: '{crawler_test_pg_absent}', LOG_LEVEL: 'silent' };
      expect(await runCli(argv, t.io)).toBe(1);
      const err = t.err();
      expect(err).toMatch(new RegExp(`^crawl ${argv[0]}: the database DATABASE_URL names does not exist \\(.*crawler_absent_.*\\): create it .*crawl migrate`));
      expect(err).not.toMatch(/s3cret-pw|\n\s+at /);
      expect(err.trim().split('\n')).toHaveLength(1);
    }, 30_000);
  }
});
