/**
 * The adapter that runs OUR crawler over the synthetic web: one router process and one fetch-worker process on a
 * fresh Postgres database and a unique Redis prefix, learning mode on. Everything that depends on how the pipeline
 * is started lives in `ours-launch.ts`; this file only measures.
 */
import { readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { deleteRedisPrefix } from '@crawler/queue';
import type { CrawlMeasurement } from './reference-result.js';
import { oursLaunchProblem, startOursProcesses, type OursProcesses } from './ours-launch.js';
import { benchEnv } from './env.js';

/** The slice of a Prisma client the adapter uses (raw queries only, so it does not depend on the generated types). */
interface RawClient {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
  $disconnect(): Promise<void>;
}
interface TestDatabaseLike {
  url: string;
  prisma: RawClient;
  drop(): Promise<void>;
}

/** Options of {@link crawlWithOurs}. */
export interface OursCrawlOptions {
  /** Pages of the first crawl. */
  urls: string[];
  /** Pages of the second crawl: other pages on the same domains, to measure probes once the domains are known. */
  secondUrls: string[];
  concurrency: number;
  redisUrl: string;
  /** Longest a crawl may take before the adapter gives up, in milliseconds. @defaultValue 15 min */
  timeoutMs?: number;
  /** Called between the crawls so the caller can snapshot and reset the synthetic web's counters. */
  betweenCrawls?: () => Promise<void>;
}

/** What one of our crawls measured, plus what the store says happened. */
export interface OursMeasurement extends CrawlMeasurement {
  extra: {
    attempts: number;
    probeDecisions: number;
    learnedDecisions: number;
    otherDecisions: number;
    contentRows: number;
    probesPerPage: number;
    /** CPU per page of the router and of the fetch-worker process alone (the producer is the rest). */
    routerCpuMsPerPage: number;
    fetcherCpuMsPerPage: number;
    /** Bench-side wall time (enqueue call → completion seen by polling), a cross-check of the Postgres span. */
    observedWallMs: number;
  };
}

/** Why our crawler cannot run yet (null when it can): the pipeline is written in parallel with the bench. */
export async function oursUnavailableReason(): Promise<string | null> {
  const problem = await oursLaunchProblem();
  if (problem) return problem;
  try {
    await import(TESTING_MODULE);
  } catch (err) {
    return `@crawler/db/testing is not importable (${(err as Error).message.split('\n')[0]})`;
  }
  return null;
}

// A variable specifier: the subpath is added by the db helper and may not exist when the bench compiles.
const TESTING_MODULE: string = '@crawler/db/testing';

interface ProcStat {
  cpuMs: number;
  peakRssBytes: number;
}

/** CPU (user + system) and peak RSS of a live process, read from /proc. */
async function readProcStat(pid: number): Promise<ProcStat> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
    return { cpuMs: (ticks * 1000) / 100, peakRssBytes: hwm ? Number(hwm[1]) * 1024 : 0 };
  } catch {
    return { cpuMs: 0, peakRssBytes: 0 };
  }
}

/** Delete every Redis key under `prefix` (a bench run's queues, politeness and probe keys), on a connection of its own. */
export async function clearBenchPrefix(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  try {
    await deleteRedisPrefix(redis, prefix);
  } finally {
    redis.disconnect();
  }
}

interface CrawlCounts {
  total: number;
  settled: number;
  done: number;
  failed: number;
}

// Links of this crawl are those created since it started: cheap to count, unlike matching thousands of URLs.
async function countLinks(db: RawClient, since: Date): Promise<CrawlCounts> {
  const rows = await db.$queryRawUnsafe<{ status: string; n: bigint }[]>(
    `SELECT status, count(*) AS n FROM links WHERE created_at >= $1 GROUP BY status`,
    since,
  );
  const by = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  const done = by.done ?? 0;
  const failed = by.failed ?? 0;
  return { total: rows.reduce((a, r) => a + Number(r.n), 0), settled: done + failed, done, failed };
}

/**
 * Crawl `urls` through the running processes: enqueue, then wait until every link is done or failed. Wall time is
 * taken from Postgres (first link stored → last link settled), so CLI start-up and polling do not count.
 */
async function crawlOnce(db: RawClient, procs: OursProcesses, urls: string[], timeoutMs: number): Promise<Omit<OursMeasurement, 'name'>> {
  const pids = procs.pids();
  const before = await Promise.all(pids.map(readProcStat));
  const marker = await db.$queryRawUnsafe<{ now: Date }[]>('SELECT clock_timestamp() AS now');
  const t0 = marker[0]!.now;
  const wallStart = performance.now();
  const enqueued = await procs.enqueue(urls);
  if (enqueued.rejected > 0) throw new Error(`${enqueued.rejected} URLs were rejected by enqueue`);
  const deadline = Date.now() + timeoutMs;
  let counts = await countLinks(db, t0);
  if (counts.total !== urls.length) throw new Error(`enqueue stored ${counts.total} links for ${urls.length} distinct URLs`);
  while (counts.settled < counts.total) {
    if (Date.now() > deadline) throw new Error(`our crawl timed out: ${counts.settled}/${counts.total} links settled`);
    if (!procs.alive()) throw new Error(`a crawler process exited during the crawl (${counts.settled}/${counts.total} settled)`);
    await new Promise((r) => setTimeout(r, 250));
    counts = await countLinks(db, t0);
  }
  const observedWallMs = performance.now() - wallStart;
  const after = await Promise.all(pids.map(readProcStat));
  const cpuOf = (i: number): number => (after[i]?.cpuMs ?? 0) - (before[i]?.cpuMs ?? 0);
  const [span] = await db.$queryRawUnsafe<{ first: Date; last: Date }[]>(
    `SELECT min(created_at) AS first, max(updated_at) AS last FROM links WHERE created_at >= $1`,
    t0,
  );
  const [dec] = await db.$queryRawUnsafe<{ attempts: bigint; probe: bigint; learned: bigint }[]>(
    `SELECT count(*) AS attempts,
            count(*) FILTER (WHERE a.selection_source = 'probe') AS probe,
            count(*) FILTER (WHERE a.selection_source = 'learned') AS learned
       FROM fetcher_attempts a JOIN links l ON l.id = a.link WHERE l.created_at >= $1`,
    t0,
  );
  const [content] = await db.$queryRawUnsafe<{ n: bigint }[]>(
    `SELECT count(*) AS n FROM fetched_content c JOIN links l ON l.id = c.link WHERE l.created_at >= $1`,
    t0,
  );
  const attempts = Number(dec?.attempts ?? 0);
  const probe = Number(dec?.probe ?? 0);
  const learned = Number(dec?.learned ?? 0);
  return {
    okPages: counts.done,
    failedPages: counts.failed,
    // Our pipeline's parse is internal; its checksum is the stored content instead (see extra.contentRows).
    links: 0,
    textChars: 0,
    elapsedMs: span ? span.last.getTime() - span.first.getTime() : 0,
    cpuMs: pids.reduce((sum, _, i) => sum + cpuOf(i), 0),
    peakRssBytes: after.reduce((sum, s) => sum + s.peakRssBytes, 0),
    extra: {
      attempts,
      probeDecisions: probe,
      learnedDecisions: learned,
      otherDecisions: attempts - probe - learned,
      contentRows: Number(content?.n ?? 0),
      probesPerPage: probe / urls.length,
      observedWallMs,
      routerCpuMsPerPage: cpuOf(0) / urls.length,
      fetcherCpuMsPerPage: cpuOf(1) / urls.length,
    },
  };
}

/**
 * Run our crawler twice over the synthetic web (first crawl: domains unknown; second crawl: other pages on the same,
 * now known, domains) and report both. Creates and drops its own database and Redis keys.
 */
export async function crawlWithOurs(options: OursCrawlOptions): Promise<{ first: OursMeasurement; second: OursMeasurement }> {
  const problem = await oursLaunchProblem();
  if (problem) throw new Error(`our crawler is not runnable: ${problem}`);
  const testing = (await import(TESTING_MODULE)) as { createTestDatabase(label: string): Promise<TestDatabaseLike> };
  const db = await testing.createTestDatabase('bench');
  const prefix = `{crawler-bench-${process.pid}-${randomBytes(3).toString('hex')}}`;
  const timeoutMs = options.timeoutMs ?? 15 * 60_000;
  let procs: OursProcesses | null = null;
  try {
    procs = await startOursProcesses({
      databaseUrl: db.url,
      redisUrl: options.redisUrl,
      queuePrefix: prefix,
      concurrency: options.concurrency,
    });
    const first = await crawlOnce(db.prisma, procs, options.urls, timeoutMs);
    await options.betweenCrawls?.();
    const second = await crawlOnce(db.prisma, procs, options.secondUrls, timeoutMs);
    return { first: { name: 'ours', ...first }, second: { name: 'ours', ...second } };
  } finally {
    await procs?.stop().catch(() => undefined);
    // BENCH_KEEP_DB=1 keeps the crawl's database for inspection (its name is logged).
    if (benchEnv().benchKeepDb) console.error(`kept database: ${db.url}`);
    else await db.drop().catch(() => undefined);
    await clearBenchPrefix(options.redisUrl, prefix).catch(() => undefined);
  }
}
