/**
 * The crawler on Redis Sentinel (a PRIVATE master + replica + one sentinel with quorum 1 on free loopback ports, with
 * passwords on both; the machine's shared Redis is never touched). The start-up check names a wrong master name or
 * sentinel password in one line; a crawl of two sim-web sites runs through the master the sentinel names, and with
 * that master SIGKILLed mid-crawl the sentinel promotes the replica, the workers follow it over the same clients, and
 * every link ends done (Postgres is the arbiter: what Redis lost with the master is rebuilt by the reconciler).
 * Postgres: the shared server, a database of this file's own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { RedisSentinelError, RedisSetupError, assertRedisDatabase, closeRedisConnection, createRedisConnection } from '@crawler/queue';
import { startPrivateSentinel, type PrivateSentinel } from '@crawler/testkit';
import { startSimSite, type SimSite } from '@crawler/sim-web';
import type { Logger } from '@crawler/core';
import { loadConfig } from '../config/crawler-config.js';
import { createRuntime } from '../runtime/create-runtime.js';
import type { CrawlerRuntime } from '../runtime/crawler-runtime.js';
import { waitFor } from '../__fixtures__/e2e.js';

const PASSWORD = 'data-pw';
const SENTINEL_PASSWORD = 'sentinel-pw';
const PER_SITE = 200;

let sentinel: PrivateSentinel | undefined;
let sites: SimSite[] = [];
const dbs: TestDatabase[] = [];
let runtime: CrawlerRuntime | undefined;

beforeAll(async () => {
  sentinel = await startPrivateSentinel({ password: PASSWORD, sentinelPassword: SENTINEL_PASSWORD, downAfterMs: 1_000, failoverTimeoutMs: 3_000 });
  sites = await Promise.all([0, 1].map((i) => startSimSite({ kind: 'static', name: `sentinel-${i}` }, { host: `127.0.61.${i + 1}`, index: i })));
}, 120_000);

afterAll(async () => {
  await runtime?.close({ drainTimeoutMs: 2_000 });
  await Promise.all(sites.map((s) => s.close()));
  await sentinel?.close();
  for (const db of dbs) await db.drop().catch(() => undefined);
});

/** The sentinel setup as the environment names it; REDIS_URL gives only the data nodes' password (its host is nowhere). */
function sentinelEnv(over: Record<string, string> = {}): Record<string, string> {
  return {
    REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:1/0`,
    REDIS_SENTINELS: sentinel!.sentinel,
    REDIS_SENTINEL_NAME: sentinel!.name,
    REDIS_SENTINEL_PASSWORD: SENTINEL_PASSWORD,
    ...over,
  };
}

const base = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/unused' };

describe('Redis Sentinel: the start-up check', () => {
  it('passes with the right name and password, and names a wrong master name or sentinel password in one line', async () => {
    const check = async (env: Record<string, string>): Promise<unknown> => {
      const client = createRedisConnection(loadConfig({ ...base, ...env }).redisTarget, 'producer');
      try {
        return await assertRedisDatabase(client).then(() => null, (e: unknown) => e);
      } finally {
        await closeRedisConnection(client);
      }
    };
    expect(await check(sentinelEnv())).toBeNull();
    const wrongName = await check(sentinelEnv({ REDIS_SENTINEL_NAME: 'mymaster' }));
    expect(wrongName).toBeInstanceOf(RedisSentinelError);
    expect(wrongName).toBeInstanceOf(RedisSetupError);
    expect((wrongName as Error).message).toBe(`REDIS_SENTINEL_NAME="mymaster": the sentinels at ${sentinel!.sentinel} monitor no master of that name (they monitor '${sentinel!.name}')`);
    const wrongPassword = await check(sentinelEnv({ REDIS_SENTINEL_PASSWORD: 'nope' }));
    expect(wrongPassword).toBeInstanceOf(RedisSentinelError);
    expect((wrongPassword as Error).message).toMatch(new RegExp(`^REDIS_SENTINEL_PASSWORD=\\(hidden\\): the sentinels at ${sentinel!.sentinel} refused to answer \\(WRONGPASS[^\\n]*\\): it must be their requirepass$`));
  }, 60_000);
});

/** Links the reconciler requeued (its pass reports), counted from the log. */
function reconcileCounter(): { logger: Logger; requeued: () => number } {
  let requeued = 0;
  const log = (obj: unknown): void => {
    const r = (obj as { report?: { requeued?: Record<string, number> } } | undefined)?.report?.requeued;
    if (r) requeued += Object.values(r).reduce((a, b) => a + b, 0);
  };
  const logger: Logger = { debug: log, info: log, warn: log, error: log, child: () => logger };
  return { logger, requeued: () => requeued };
}

describe('Redis Sentinel: a crawl through a failover', () => {
  it('the master SIGKILLed mid-crawl: the sentinel promotes the replica, the workers follow it, every link done', async () => {
    const db = await createTestDatabase('sentinel_failover');
    dbs.push(db);
    const reconciled = reconcileCounter();
    const config = loadConfig({
      DATABASE_URL: db.url,
      ...sentinelEnv(),
      QUEUE_PREFIX: '{crawler_sentinel}',
      ALLOW_PRIVATE_NETWORKS: 'true',
      FETCHERS: 'simple_http:8',
      ROBOTS_ENABLED: 'false',
      DOMAIN_MIN_DELAY_MS: '20',
      DOMAIN_MAX_CONCURRENCY: '2',
      // A killed master's jobs are found stalled in seconds, and lost work is rebuilt soon after.
      LOCK_DURATION_MS: '5000',
      STALLED_INTERVAL_MS: '2000',
      RECONCILE_INTERVAL_MS: '3000',
      RECONCILE_GRACE_MS: '5000',
      INFRA_RETRY_MAX_MS: '2000',
      LOG_LEVEL: 'silent',
    });
    runtime = createRuntime(config, { prisma: db.prisma, logger: reconciled.logger });
    const urls = sites.flatMap((s) => s.urls(PER_SITE, 1));
    expect((await runtime.enqueue(urls)).accepted).toHaveLength(urls.length);
    const startedAt = Date.now();
    runtime.startWorkers();
    const idle = runtime.waitUntilIdle({ pollMs: 250 });
    // Done counts over time, for the figures: when links were done again after the kill.
    const timeline: Array<[number, number]> = [];
    const sampler = setInterval(() => void done().then((n) => timeline.push([Date.now(), n]), () => undefined), 250);
    const done = () => db.prisma.link.count({ where: { status: 'done' } });
    await waitFor(async () => (await done()) >= urls.length / 4 || null, 'a quarter of the crawl', 120_000);

    const victim = await sentinel!.masterPort();
    // The crawler's keys are on the master the sentinel names (REDIS_URL's host and port are nowhere).
    expect(Number((await sentinel!.cli(victim, 'dbsize')).trim())).toBeGreaterThan(0);
    const doneAtKill = await done();
    const killedAt = Date.now();
    await sentinel!.kill(victim);
    const heir = await sentinel!.waitForFailover(victim, 60_000);
    const promotedAt = Date.now();
    expect(heir).not.toBe(victim);
    await idle;
    const idleAt = Date.now();
    clearInterval(sampler);

    const statuses = await db.prisma.link.groupBy({ by: ['status'], _count: true });
    expect(statuses).toEqual([{ status: 'done', _count: urls.length }]);
    expect(doneAtKill).toBeLessThan(urls.length);
    const served = new Map<string, number>();
    for (const s of sites) for (const r of s.requestLog()) served.set(`${s.origin}${r.path}`, (served.get(`${s.origin}${r.path}`) ?? 0) + 1);
    expect(urls.filter((u) => !served.has(u))).toEqual([]);
    // Printed for the README's figures: how long the crawl stood still.
    const requests = sites.flatMap((s) => s.requestLog().map((r) => r.atMs)).sort((a, b) => a - b);
    const resumedAt = requests.find((t) => t >= promotedAt) ?? NaN;
    const duplicates = [...served.values()].reduce((sum, n) => sum + n - 1, 0);
    const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    const doneAgainAt = timeline.find(([t, n]) => t > killedAt && n > doneAtKill + 16)?.[0] ?? NaN;
    console.log(
      `sentinel failover: ${urls.length} pages, ${doneAtKill} done ${s(killedAt - startedAt)} after the start when master :${victim} was SIGKILLed; ` +
        `replica :${heir} promoted ${s(promotedAt - killedAt)} after the kill; first page request ${s(resumedAt - killedAt)} after it; ` +
        `more links done than were in flight ${s(doneAgainAt - killedAt)} after it; all done ${s(idleAt - killedAt)} after it; ` +
        `duplicate requests ${duplicates}; links requeued by the reconciler ${reconciled.requeued()}`,
    );
    await runtime.close();
    runtime = undefined;
  }, 300_000);
});
