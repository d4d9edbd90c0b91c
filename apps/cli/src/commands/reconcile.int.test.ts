import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { createRedisConnection, deleteRedisPrefix } from '@crawler/queue';
import type { Redis } from 'ioredis';
import type { CommandIO } from '../command.js';
import reconcile from './reconcile.js';
import { REDIS_URL } from '@crawler/testkit';

const PREFIX = `{crawler_test_cli_reconcile_${process.pid}}`;
let db: TestDatabase;
let redis: Redis;

beforeAll(async () => {
  db = await createTestDatabase('cli_reconcile');
  redis = createRedisConnection(REDIS_URL, 'producer');
  // Links Postgres knows and no job carries (as after Redis lost its data): two queued, one paused for an hour.
  for (const [i, data] of [{}, {}, { status: 'paused', pausedUntil: new Date(Date.now() + 3_600_000) }].entries()) {
    await db.prisma.link.create({ data: { url: `https://r.example/${i}`, initialUrl: `https://r.example/${i}`, domain: 'r.example', ...data } });
  }
});

afterAll(async () => {
  await deleteRedisPrefix(redis, PREFIX);
  redis.disconnect();
  await db?.drop();
});

async function run(args: string[]): Promise<string> {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (d) => (out += String(d)));
  const env = { DATABASE_URL: db.url, REDIS_URL, QUEUE_PREFIX: PREFIX, FETCHERS: 'simple_http', LOG_LEVEL: 'silent' };
  const io: CommandIO = { stdin: new PassThrough(), stdout, stderr: new PassThrough(), env };
  expect(await reconcile.run(args, io)).toBe(0);
  return out;
}

describe('crawl reconcile', () => {
  it('requeues the links no job carries and says so; a second run finds them all carried', async () => {
    // The default grace period leaves links touched in the last two minutes alone.
    expect(await run([])).toMatch(/scanned 0 unfinished links/);
    const first = await run(['--grace-ms', '0']);
    expect(first).toMatch(/scanned 3 unfinished links untouched for 0 ms: 0 carried by a live job, 3 requeued/);
    expect(first).toMatch(/queued: 2/);
    expect(first).toMatch(/1 paused links wait out the rest of their pause/);
    // No process serves the queues here: the jobs just given back wait on a queue with no worker, and that is said.
    expect(first).toMatch(/2 jobs wait on route and no worker is connected to it: start a router/);
    expect(JSON.parse(await run(['--grace-ms', '0', '--json']))).toMatchObject({ scanned: 3, alive: 3, requeued: {} });
  });

  it('refuses a grace period past any date as a usage error, in the flag and in RECONCILE_GRACE_MS', async () => {
    await expect(run(['--grace-ms', '99999999999999999'])).rejects.toThrow(/--grace-ms must be a non-negative integer up to 3153600000000/);
    const io: CommandIO = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough(), env: { DATABASE_URL: db.url, REDIS_URL, QUEUE_PREFIX: PREFIX, RECONCILE_GRACE_MS: '99999999999999999' } };
    await expect(reconcile.run([], io)).rejects.toThrow(/RECONCILE_GRACE_MS="99999999999999999"/);
  });
});
