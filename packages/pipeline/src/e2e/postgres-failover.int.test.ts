/**
 * Postgres failing over under a running crawl, as managed Postgres (RDS, Cloud SQL, Patroni) does it, on a PRIVATE
 * cluster started here (the machine's shared Postgres is never touched):
 *  - the server turns read-only (a demoted primary, or a connection still on the old one): every write answers
 *    25006 "cannot execute INSERT in a read-only transaction" until writes work again;
 *  - the server restarts (fast shutdown): every pooled connection is cut (57P01, ECONNRESET) and must be replaced;
 *  - a promotion behind an endpoint (a managed service's DNS name; here a TCP relay): the primary is fenced
 *    read-only, its streaming replica promoted, the endpoint moved to it, and the old primary killed a few seconds
 *    later; pooled connections still on the old primary meanwhile get 25006 and must be replaced by new ones.
 * Every time: all links done, none failed, one page and one counted attempt per link, the outage said in a few log
 * lines rather than one per job.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { createPrismaClient, type PrismaClient } from '@crawler/db';
import type { Logger } from '@crawler/core';
import { startPrivatePostgres, startPrivateRedis, startTcpEndpoint, startTestServer, staticArticle, type PrivatePostgres, type PrivateRedis, type TcpEndpoint, type TestServer } from '@crawler/testkit';
import { loadConfig } from '../config/crawler-config.js';
import { createRuntime } from '../runtime/create-runtime.js';
import type { CrawlerRuntime } from '../runtime/crawler-runtime.js';
import { FAULT_ENV, waitFor } from '../__fixtures__/e2e.js';

const PAGES = 30;

let redis: PrivateRedis | undefined;
let pg: PrivatePostgres | undefined;
let server: TestServer | undefined;
let db: TestDatabase | undefined;
let runtime: CrawlerRuntime | undefined;
/** Per test: clusters, relays and clients to close after it. */
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  [redis, pg] = await Promise.all([startPrivateRedis(), startPrivatePostgres()]);
  // Slow enough pages that the fault lands mid-crawl.
  server = await startTestServer(Object.fromEntries(Array.from({ length: PAGES }, (_, i) => [`/p/${i}`, { body: staticArticle({ title: `Failover ${i}` }), delayMs: 400 }])));
}, 120_000);

afterEach(async () => {
  await pg?.psql('ALTER SYSTEM RESET default_transaction_read_only', 'SELECT pg_reload_conf()').catch(() => undefined);
  await runtime?.close({ drainTimeoutMs: 2_000 });
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  await db?.drop().catch(() => undefined);
  runtime = undefined;
  db = undefined;
});

afterAll(async () => {
  await server?.close();
  await redis?.close();
  await pg?.close();
});

interface Line {
  level: 'warn' | 'error';
  msg: string;
  fields: Record<string, unknown>;
}

/** A logger that keeps warnings and errors (what an operator's alerting sees). */
function recordingLogger(lines: Line[], bindings: Record<string, unknown> = {}): Logger {
  const keep = (level: Line['level']) => (obj: unknown, msg?: string) => {
    const fields = typeof obj === 'object' && obj !== null ? { ...bindings, ...(obj as Record<string, unknown>) } : bindings;
    lines.push({ level, msg: typeof obj === 'string' ? obj : (msg ?? ''), fields });
  };
  return { debug: () => {}, info: () => {}, warn: keep('warn'), error: keep('error'), child: (b) => recordingLogger(lines, { ...bindings, ...b }) };
}

let seq = 0;
async function crawler(label: string, via?: (db: TestDatabase) => Promise<{ url: string; prisma: PrismaClient }>): Promise<{ runtime: CrawlerRuntime; prisma: PrismaClient; urls: string[]; lines: Line[] }> {
  db = await createTestDatabase(`pgfail_${label}`, { serverUrl: pg!.url });
  const target = via ? await via(db) : { url: db.url, prisma: db.prisma };
  seq += 1;
  const config = loadConfig({
    DATABASE_URL: target.url,
    REDIS_URL: redis!.url,
    QUEUE_PREFIX: `{pgfail_${label}_${seq}}`,
    ...FAULT_ENV,
  });
  const lines: Line[] = [];
  runtime = createRuntime(config, { prisma: target.prisma, logger: recordingLogger(lines) });
  const urls = Array.from({ length: PAGES }, (_, i) => server!.url(`/p/${i}`));
  return { runtime, prisma: target.prisma, urls, lines };
}

const doneCount = (prisma: PrismaClient) => prisma.link.count({ where: { status: 'done' } });

/**
 * Feed the pages and start the workers; once a few links are done, the crawl's idle to await after the fault (in an
 * object: an async function returning the promise itself would wait for it).
 */
async function crawlUntilSomeDone(c: { runtime: CrawlerRuntime; prisma: PrismaClient; urls: string[] }): Promise<{ idle: Promise<void> }> {
  await c.runtime.enqueue(c.urls);
  c.runtime.startWorkers();
  const idle = c.runtime.waitUntilIdle({ pollMs: 200 });
  idle.catch(() => undefined);
  await waitFor(async () => (await doneCount(c.prisma)) >= 4 || null, 'a few links done', 60_000);
  return { idle };
}

/** Every link done, one page each, one successful attempt each, no failed attempt counted against the site. */
async function expectEveryLinkDoneOnce(prisma: PrismaClient): Promise<void> {
  expect(await prisma.link.groupBy({ by: ['status'], _count: true })).toEqual([{ status: 'done', _count: PAGES }]);
  const pages = await prisma.fetchedContent.groupBy({ by: ['linkId'], _count: true });
  expect(pages.filter((p) => p._count !== 1)).toEqual([]);
  expect(pages).toHaveLength(PAGES);
  expect(await prisma.fetcherAttempt.count({ where: { linkId: { not: null }, success: false } })).toBe(0);
  expect(await prisma.fetcherAttempt.count({ where: { linkId: { not: null } } })).toBe(PAGES);
  expect((await prisma.link.aggregate({ _sum: { attemptCount: true } }))._sum.attemptCount).toBe(PAGES);
}

function summary(what: string, lines: Line[], extra: Record<string, unknown>): void {
  const byMsg = new Map<string, number>();
  for (const l of lines) byMsg.set(`${l.level} ${l.msg}`, (byMsg.get(`${l.level} ${l.msg}`) ?? 0) + 1);
  console.log(`${what}: ${JSON.stringify(extra)}; ${lines.length} warn/error lines:\n  ${[...byMsg].map(([m, n]) => `${n}× ${m}`).join('\n  ')}`);
}

describe('Postgres failing over under a running crawl (private cluster)', () => {
  it('turns read-only (25006) for a while: nothing fails, nothing is counted twice, readiness says so, the crawl completes', async () => {
    const c = await crawler('readonly');
    server!.resetHits();
    const { idle } = await crawlUntilSomeDone(c);
    await pg!.psql('ALTER SYSTEM SET default_transaction_read_only = on', 'SELECT pg_reload_conf()');
    const doneAtFault = await doneCount(c.prisma);
    // Every fetch that lands now cannot write its outcome.
    await new Promise((r) => setTimeout(r, 5_000));
    const readiness = await c.runtime.pingPostgres().then(() => 'ok', (err: unknown) => `fail: ${String(err)}`);
    const hitsDuring = server!.hits();
    const failedDuring = await c.prisma.link.count({ where: { status: 'failed' } });
    await pg!.psql('ALTER SYSTEM RESET default_transaction_read_only', 'SELECT pg_reload_conf()');
    const backAt = Date.now();
    await idle;
    summary('read-only', c.lines, { doneAtFault, hitsDuring, failedDuring, readiness, requests: server!.hits(), resumedToIdleMs: Date.now() - backAt });
    const requests = server!.hits();
    server!.resetHits();
    await expectEveryLinkDoneOnce(c.prisma);
    expect(failedDuring).toBe(0);
    // Only the fetches in flight when it turned read-only are made again, not the frontier over and over.
    expect(requests).toBeLessThan(2 * PAGES);
    // A worker writing to a read-only Postgres takes no work: /readyz must say so.
    expect(readiness).not.toBe('ok');
  }, 150_000);

  it('restarts (fast shutdown) mid-crawl: the pool reconnects, nothing fails, the crawl completes', async () => {
    const c = await crawler('restart');
    server!.resetHits();
    const { idle } = await crawlUntilSomeDone(c);
    const doneAtFault = await doneCount(c.prisma);
    await pg!.stop();
    await pg!.start();
    const backAt = Date.now();
    await idle;
    summary('restart', c.lines, { doneAtFault, requests: server!.hits(), resumedToIdleMs: Date.now() - backAt });
    server!.resetHits();
    await expectEveryLinkDoneOnce(c.prisma);
  }, 150_000);

  it('fails over to its promoted replica behind an endpoint, the old primary fenced read-only then killed: every link done once', async () => {
    // Its own primary: the promotion consumes it.
    const primary = await startPrivatePostgres();
    closers.push(() => primary.close());
    const endpoint: TcpEndpoint = await startTcpEndpoint(primary.port);
    closers.push(() => endpoint.close());
    let replica: PrivatePostgres | undefined;
    const saved = pg;
    pg = primary;
    let c: Awaited<ReturnType<typeof crawler>>;
    try {
      c = await crawler('promote', async (d) => {
        replica = await primary.replica();
        closers.push(() => replica!.close());
        const url = new URL(d.url);
        url.port = String(endpoint.port);
        const prisma = createPrismaClient(url.toString(), { maxConnections: 4 });
        closers.push(() => prisma.$disconnect());
        return { url: url.toString(), prisma };
      });
    } finally {
      pg = saved;
    }
    server!.resetHits();
    const { idle } = await crawlUntilSomeDone(c);
    const doneAtFault = await doneCount(c.prisma);
    // Fenced, as a failover manager does before it promotes: from now on the old primary refuses every write.
    await primary.psql('ALTER SYSTEM SET default_transaction_read_only = on', 'SELECT pg_reload_conf()');
    const lsn = await primary.psql('SELECT pg_current_wal_lsn()');
    await waitFor(async () => (await replica!.psql(`SELECT pg_last_wal_replay_lsn() >= '${lsn}'::pg_lsn`)) === 't' || null, 'the replica to catch up', 30_000);
    await replica!.promote();
    endpoint.retarget(replica!.port);
    const movedAt = Date.now();
    // Connections opened before the move stay on the old primary until it dies.
    await new Promise((r) => setTimeout(r, 3_000));
    await primary.close();
    await idle;
    summary('promotion', c.lines, { doneAtFault, requests: server!.hits(), movedToIdleMs: Date.now() - movedAt });
    server!.resetHits();
    await expectEveryLinkDoneOnce(c.prisma);
  }, 150_000);
});
