/**
 * The BUILT fetcher app against a Redis an operator got wrong: a private redis-server (never the shared one) that
 * fills up under maxmemory.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { createRedisConnection } from '@crawler/queue';
import { startPrivateRedis, type PrivateRedis } from '@crawler/testkit';
import { spawnApp, type AppProcess } from './__fixtures__/spawn-app.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const PREFIX = '{crawler_test_apps_redis}';

let db: TestDatabase;
let redis: PrivateRedis;
const apps: AppProcess[] = [];

beforeAll(async () => {
  execFileSync(`${REPO}node_modules/.bin/tsc`, ['-p', `${REPO}apps/fetcher/tsconfig.json`], { stdio: 'pipe' });
  [db, redis] = await Promise.all([createTestDatabase('apps_redis_setup'), startPrivateRedis()]);
}, 120_000);

afterAll(async () => {
  await Promise.all(apps.map((a) => a.stop('SIGKILL')));
  await redis?.close();
  await db?.drop();
});

function startFetcher(name: string, extra: Record<string, string> = {}): AppProcess {
  const p = spawnApp(name, `${REPO}apps/fetcher/dist/main.js`, { DATABASE_URL: db.url, REDIS_URL: redis.url, QUEUE_PREFIX: PREFIX, FETCHERS: 'simple_http:1', METRICS_PORT: '0', LOG_LEVEL: 'info', RECONCILE_INTERVAL_MS: '0', SCHEDULER_INTERVAL_MS: '0', ...extra });
  apps.push(p);
  return p;
}

describe('fetcher and its Redis', () => {
  it('is not ready while Redis is full: PING answers, but no job could be added', async () => {
    const p = startFetcher('fetcher-full');
    const port = (await p.waitForLog((l) => l.msg === 'metrics listening on /metrics', 60_000)).port as number;
    await p.waitForLog((l) => l.msg === 'workers started', 60_000);
    const readyz = async () => {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      return [res.status, await res.json()];
    };
    // As an orchestrator does: ask until ready (each check has 2 s to answer, which a loaded machine can miss once).
    const untilReady = async () => {
      for (let i = 0; i < 20; i++) {
        const [status] = await readyz();
        if (status === 200) return status;
        await new Promise((r) => setTimeout(r, 500));
      }
      return readyz();
    };
    expect(await untilReady()).toBe(200);

    const client = createRedisConnection(redis.url, 'producer');
    try {
      await client.config('SET', 'maxmemory-policy', 'noeviction');
      await client.config('SET', 'maxmemory', '2mb');
      await client.eval("for i = 1, 400 do redis.call('SET', 'fill:' .. i, string.rep('x', 10000)) end", 0).catch(() => undefined);
      expect(await client.ping()).toBe('PONG');
      await expect(client.set('probe', '1')).rejects.toThrow(/^OOM/);
      const [status, body] = await readyz();
      expect(status).toBe(503);
      expect(body).toMatchObject({ checks: { redis: 'fail' } });
      // Failed because Redis refused the write, not because it was slow to answer.
      const failed = await p.waitForLog((l) => l.msg?.startsWith('health check failed') === true && l.dependency === 'redis');
      expect((failed.err as { message?: string }).message).toMatch(/^OOM command not allowed/);
      // /healthz is liveness: a full Redis is no reason to restart the worker.
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);

      // Memory freed: ready again.
      await client.config('SET', 'maxmemory', '0');
      expect(await untilReady()).toBe(200);
    } finally {
      await client.config('SET', 'maxmemory', '0');
      await client.flushall();
      client.disconnect();
      await p.stop('SIGTERM');
    }
  }, 90_000);

  it('refuses a REDIS_URL database the server does not have, in one line, instead of using database 0', async () => {
    const p = startFetcher('fetcher-db99', { REDIS_URL: `${redis.url}/99` });
    expect(await p.exited).toBe(1);
    const failed = p.logs.find((l) => typeof l.msg === 'string' && l.msg.startsWith('start-up failed'));
    expect(failed?.msg).toMatch(/REDIS_URL="redis:\/\/127\.0\.0\.1:\d+\/99": this Redis has no database 99 \(it has 16: 0 to 15/);
    expect(failed?.err).toBeUndefined();
    expect(p.logs.find((l) => l.msg === 'workers started')).toBeUndefined();
  }, 60_000);

  it('uses the database REDIS_URL names on every connection, BullMQ\'s own included', async () => {
    const p = startFetcher('fetcher-db3', { REDIS_URL: `${redis.url}/3` });
    await p.waitForLog((l) => l.msg === 'workers started', 60_000);
    const client = createRedisConnection(redis.url, 'producer');
    try {
      // The worker's connections open around its 'workers started' line (BullMQ's blocking one a moment later), and one
      // opened a moment ago may not have sent its SELECT yet: it shows db=0 at age 0. Read the list again until all
      // of them are there and none is elsewhere; one that stays on another database fails the test.
      let theirs: string[] = [];
      let elsewhere: string[] = [];
      for (let i = 0; i < 50; i++) {
        const clients = (await client.client('LIST')) as string;
        theirs = clients.split('\n').filter((l) => l.trim() !== '' && !/ cmd=client\|list /.test(l));
        elsewhere = theirs.filter((l) => !/ db=3 /.test(l));
        if (theirs.length >= 3 && elsewhere.length === 0) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(theirs.length).toBeGreaterThanOrEqual(3);
      expect(elsewhere).toEqual([]);
      expect((await client.keys(`${PREFIX}*`)).length).toBe(0);
      await client.select(3);
      expect((await client.keys(`${PREFIX}*`)).length).toBeGreaterThan(0);
    } finally {
      client.disconnect();
      await p.stop('SIGTERM');
    }
  }, 60_000);
});
