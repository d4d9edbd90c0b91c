/**
 * `crawl pauses` against a running crawler on real Redis and Postgres: a site that rate-limits with a long
 * Retry-After is listed with its reason and end; `crawl pauses lift` lets its links run at once.
 */
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { deleteRedisPrefix, createRedisConnection } from '@crawler/queue';
import { createRuntime, loadConfig, type CrawlerRuntime } from '@crawler/pipeline';
import { robotsTxt, startTestServer, staticArticle, type TestServer } from '@crawler/testkit';
import type { Redis } from 'ioredis';
import type { CommandIO } from '../command.js';
import pauses from './pauses.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `{crawler_test_cli_pauses_${process.pid}}`;
let db: TestDatabase;
let redis: Redis;
let runtime: CrawlerRuntime;
let site: TestServer;
let env: Record<string, string>;
let limiting = true;

beforeAll(async () => {
  db = await createTestDatabase('cli_pauses');
  redis = createRedisConnection(REDIS_URL, 'producer');
  // Rate-limits with an hour's Retry-After until the test says the site is fine again.
  site = await startTestServer({
    '/robots.txt': robotsTxt(),
    '/p/*': (_req, res) => {
      if (limiting) res.writeHead(429, { 'content-type': 'text/html', 'retry-after': '3600' }).end('<html><body>Too Many Requests</body></html>');
      else res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(staticArticle({ title: 'ok' }));
    },
  });
  env = {
    DATABASE_URL: db.url, REDIS_URL, QUEUE_PREFIX: PREFIX, FETCHERS: 'simple_http:2', LOG_LEVEL: 'silent', ALLOW_PRIVATE_NETWORKS: 'true',
    LEARNING_MODE_ENABLED: 'false', DEFAULT_FETCHER: 'simple_http', DOMAIN_MIN_DELAY_MS: '0', RECONCILE_INTERVAL_MS: '0',
  };
  runtime = createRuntime(loadConfig(env));
});

afterAll(async () => {
  await runtime?.close({ drainTimeoutMs: 2_000 });
  await site?.close();
  await deleteRedisPrefix(redis, PREFIX);
  redis.disconnect();
  await db?.drop();
});

async function run(args: string[]): Promise<string> {
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (d) => (out += String(d)));
  const io: CommandIO = { stdin: new PassThrough(), stdout, stderr: new PassThrough(), env };
  expect(await pauses.run(args, io)).toBe(0);
  return out;
}

async function statuses(): Promise<Array<{ status: string; lastErrorType: string | null }>> {
  return db.prisma.link.findMany({ select: { status: true, lastErrorType: true }, orderBy: { url: 'asc' } });
}

async function until<T>(fn: () => Promise<T | null | false>, what: string, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(await statuses())}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('crawl pauses', () => {
  it('lists nothing when nothing is paused', async () => {
    expect(await run([])).toBe('no paused domains\n');
  });

  it('lists a rate-limited domain with its reason and end, and its paused links say why', async () => {
    await runtime.enqueue([site.url('/p/1'), site.url('/p/2'), site.url('/p/3')]);
    runtime.startWorkers();
    await until(async () => (await statuses()).every((l) => l.status === 'paused'), 'every link paused');
    // Every paused link carries the reason, including those that only met the domain's pause at the gate.
    expect((await statuses()).map((l) => l.lastErrorType)).toEqual(['rate_limited', 'rate_limited', 'rate_limited']);

    const list = JSON.parse(await run(['--json'])) as Array<{ domain: string; reason: string; until: string; domainPausedUntil: string | null; pausedLinks: number }>;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ domain: '127.0.0.1', reason: 'rate_limited', pausedLinks: 3 });
    // Retry-After: 3600 is honoured: about an hour from now.
    expect(Date.parse(list[0]!.domainPausedUntil!) - Date.now()).toBeGreaterThan(3_500_000);
    const table = await run([]);
    // Both ends: the site's own pause (what `crawl explain` names) and when its last paused link is routed again.
    expect(table).toMatch(/^domain\s+reason\s+domain paused until\s+last link resumes\s+paused links\n127\.0\.0\.1\s+rate_limited\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+3\n$/);
    expect(table).toContain(`rate_limited  ${list[0]!.domainPausedUntil}  ${list[0]!.until}`);
  }, 60_000);

  it('lift ends the pause: the links run now, not in an hour', async () => {
    limiting = false;
    expect(await run(['lift', '127.0.0.1'])).toBe('127.0.0.1: domain pause lifted, 3 paused links routed again\n');
    await until(async () => (await statuses()).every((l) => l.status === 'done'), 'every link done');
    expect(await run([])).toBe('no paused domains\n');
  }, 60_000);

  it('refuses a lift without a domain', async () => {
    await expect(pauses.run(['lift'], { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough(), env })).rejects.toThrow(/takes one domain/);
  });
});
