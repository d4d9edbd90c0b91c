import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { AttemptStore } from '@crawler/db';
import { JobQueues, ROUTE_QUEUE, createRedisConnection, deleteRedisPrefix } from '@crawler/queue';
import type { Redis } from 'ioredis';
import type { CommandIO } from '../command.js';
import stats, { type StatsReport } from './stats.js';
import { REDIS_URL } from '@crawler/testkit';

const PREFIX = `{crawler_test_cli_stats_${process.pid}}`;
let db: TestDatabase;
let redis: Redis;
let queues: JobQueues;

beforeAll(async () => {
  db = await createTestDatabase('cli_stats');
  redis = createRedisConnection(REDIS_URL, 'producer');
  queues = new JobQueues({ connection: redis, prefix: PREFIX });
  await queues.enqueueRoute({ linkId: '00000000-0000-4000-8000-000000000001', url: 'https://a.example/1' });
  await queues.enqueueRoute({ linkId: '00000000-0000-4000-8000-000000000002', url: 'https://a.example/2' }, { delayMs: 60_000 });
  const store = new AttemptStore({ prisma: db.prisma });
  const at = (source: string, fetcher: string, success: boolean, domain: string, isBanned = false) => ({
    url: `https://${domain}/x`,
    fetcher,
    success,
    isBanned,
    selectionSource: source,
    heuristics: [{ type: 'domain', value: domain }],
  });
  await store.logAttempts([
    at('probe', 'simple_http', true, 'a.example'),
    at('probe', 'simple_http', false, 'b.example', true),
    at('learned', 'direct_access', true, 'a.example'),
    at('learned', 'playwright', true, 'b.example'),
    at('retry', 'playwright', false, 'b.example'),
  ]);
});

afterAll(async () => {
  await queues?.close();
  await deleteRedisPrefix(redis, PREFIX);
  redis.disconnect();
  await db?.drop();
});

async function run(args: string[], extraEnv: Record<string, string> = {}): Promise<string> {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (d) => (out += String(d)));
  const env = { DATABASE_URL: db.url, REDIS_URL, QUEUE_PREFIX: PREFIX, FETCHERS: 'simple_http,playwright', ...extraEnv };
  const io: CommandIO = { stdin: new PassThrough(), stdout, stderr: new PassThrough(), env };
  expect(await stats.run(args, io)).toBe(0);
  return out;
}

describe('crawl stats', () => {
  it('reports rates by fetcher (aliases merged, priors left out) and domain, queue depths and learned share', async () => {
    const r = JSON.parse(await run(['--json'])) as StatsReport;
    const byFetcher = Object.fromEntries(r.byFetcher.map((s) => [s.key, s]));
    expect(Object.keys(byFetcher).sort()).toEqual(['playwright', 'simple_http']);
    expect(byFetcher.simple_http).toMatchObject({ attempts: 3, successes: 2, banned: 1 });
    expect(byFetcher.playwright).toMatchObject({ attempts: 2, successes: 1, banRate: 0 });
    expect(r.byDomain.map((d) => [d.key, d.attempts, d.banned])).toEqual([
      ['b.example', 3, 1],
      ['a.example', 2, 0],
    ]);
    expect(r.queues[ROUTE_QUEUE]).toEqual({ waiting: 1, active: 0, delayed: 1, failed: 0, workers: 0 });
    expect(Object.keys(r.queues)).toEqual(['route', 'fetch-simple_http', 'fetch-playwright']);
    expect(r.decisions).toEqual({ attempts: 5, learned: 2, probes: 2, learnedShare: 0.4, probesSaved: 2 });
    expect(r.velocity).toHaveLength(1);
  });

  it('prints tables on a terminal', async () => {
    const text = await run([]);
    expect(text).toMatch(/By fetcher \(last 7 days\)\nfetcher\s+attempts\s+success\s+banned/);
    expect(text).toMatch(/simple_http\s+3\s+66\.7%\s+33\.3%/);
    expect(text).toMatch(/route\s+1\s+0\s+1\s+0\s+0/);
    expect(text).toContain('route: 1 jobs waiting and no worker connected');
    expect(text).toContain('5 attempts, 40.0% learned, 2 probes, 2 probes saved');
  });

  it('breaks proxied attempts down per proxy, masked, priced by the configured tier', async () => {
    const via = (tier: string, proxy: string, success: boolean) => ({
      url: 'https://c.example/x', fetcher: 'simple_http', success, isBanned: !success, selectionSource: 'learned', exitTier: tier, exitProxy: proxy,
      heuristics: [{ type: 'domain', value: 'c.example' }],
    });
    await new AttemptStore({ prisma: db.prisma }).logAttempts([
      via('datacenter', 'http://***@127.0.0.1:8001', false),
      via('residential', 'socks5://***@127.0.0.1:9001', true),
      via('residential', 'socks5://***@127.0.0.1:9001', true),
    ]);
    const PROXY_TIERS = JSON.stringify([
      { name: 'datacenter', cost: 1, urls: ['http://dcUser:dcSecret@127.0.0.1:8001'] },
      { name: 'residential', cost: 10, urls: ['socks5://resUser:resSecret@127.0.0.1:9001'] },
    ]);
    const r = JSON.parse(await run(['--json'], { PROXY_TIERS })) as StatsReport;
    expect(r.byProxy.map((p) => [p.key, p.tier, p.attempts, p.banned, p.costUnits])).toEqual([
      ['socks5://***@127.0.0.1:9001', 'residential', 2, 0, 20],
      ['http://***@127.0.0.1:8001', 'datacenter', 1, 1, 1],
    ]);
    const text = await run([], { PROXY_TIERS });
    expect(text).toMatch(/By proxy \(last 7 days, busiest first\)\nproxy\s+tier\s+attempts\s+success\s+banned\s+cost units\n.*\nsocks5:\/\/\*\*\*@127\.0\.0\.1:9001\s+residential\s+2\s+100\.0%\s+0\.0%\s+20\n/);
    for (const secret of ['dcUser', 'dcSecret', 'resUser', 'resSecret']) expect(text).not.toContain(secret);
  });

  it('shows the last minutes from every worker (old attempts left out, failures by error type) and the backlog by domain', async () => {
    const store = new AttemptStore({ prisma: db.prisma });
    const recentBase = JSON.parse(await run(['--json'])) as StatsReport;
    const before = recentBase.recent!.byFetcher.reduce((n, f) => n + f.attempts, 0);
    const one = (errorType: string | null, attemptedAt?: Date) => ({
      url: 'https://d.example/x', fetcher: 'simple_http', success: errorType === null, isBanned: false, selectionSource: 'learned', errorType,
      heuristics: [{ type: 'domain', value: 'd.example' }], ...(attemptedAt ? { attemptedAt } : {}),
    });
    await store.logAttempts([one(null), one('timeout'), one('timeout'), one('rate_limited'), one('timeout', new Date(Date.now() - 3_600_000))]);
    const q = (url: string) => ({ url, initialUrl: url, domain: new URL(url).hostname });
    const { LinkStore } = await import('@crawler/db');
    const links = new LinkStore(db.prisma);
    for (const l of await links.upsertMany([q('https://e.example/1'), q('https://e.example/2'), q('https://f.example/1')])) {
      if (l.url.startsWith('https://e.example/2')) await links.update(l.id, { status: 'paused' });
    }
    const r = JSON.parse(await run(['--json', '--recent-minutes', '10'])) as StatsReport;
    expect(r.recent!.minutes).toBe(10);
    expect(r.recent!.byFetcher.reduce((n, f) => n + f.attempts, 0) - before).toBe(4);
    expect(r.recent!.errors.find((e) => e.key === 'timeout')?.attempts).toBe(2);
    expect(r.recent!.errors.find((e) => e.key === 'rate_limited')?.attempts).toBe(1);
    expect(r.backlog).toMatchObject({ total: 3, byStatus: { queued: 2, paused: 1, routing: 0, fetching: 0 } });
    expect(r.backlog!.topDomains[0]).toEqual({ domain: 'e.example', total: 2, queued: 1, routing: 0, fetching: 0, paused: 1 });
    const text = await run([]);
    expect(text).toMatch(/Last 5 minutes \(all workers, from the attempt log\)\nfetcher\s+attempts\s+per s\s+pages\/s\s+success\s+banned/);
    expect(text).toContain('Backlog: 3 unfinished links (queued 2, routing 0, fetching 0, paused 1)');
  });
});
