/**
 * What Postgres and Redis spent on a crawl, for the many-domains bench's profile: CPU of process trees read from
 * /proc, pg_stat_statements of the crawl's database (when the server preloads it), and Redis INFO commandstats.
 * Redis and the CPU of shared services count everything on the server, so they are exact only on private instances
 * (the bench's --service-pids and --redis-url point at them).
 */
import { readdir, readFile } from 'node:fs/promises';
import { Redis } from 'ioredis';

const TICK_MS = 1000 / 100;

/** utime + stime (+ cutime + cstime of reaped children) of one process, in ms; 0 when it is gone. */
async function processCpuMs(pid: number, withReaped: boolean): Promise<number> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14-17 of proc(5), counted from the state field (index 0 = field 3).
    const own = Number(f[11]) + Number(f[12]);
    return (own + (withReaped ? Number(f[13]) + Number(f[14]) : 0)) * TICK_MS;
  } catch {
    return 0;
  }
}

/**
 * The whole machine's CPU from /proc/stat, in ms summed over cores: `busy` is every process's (ours, the services,
 * the synthetic web, the bench itself), `total` adds idle and iowait. Their difference across a crawl says whether
 * the crawl was bound by the machine (busy ≈ total) or by something else (one busy thread, waiting).
 */
export async function machineCpuMs(): Promise<{ busy: number; total: number }> {
  const stat = await readFile('/proc/stat', 'utf8');
  return parseMachineCpu(stat);
}

/** The aggregate `cpu` line of /proc/stat: user nice system idle iowait irq softirq steal (guest time is in user). */
export function parseMachineCpu(stat: string): { busy: number; total: number } {
  const line = stat.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) throw new Error('/proc/stat has no cpu line');
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1, 9).map((v) => Number(v) || 0);
  const busy = user! + nice! + system! + irq! + softirq! + steal!;
  return { busy: busy * TICK_MS, total: (busy + idle! + iowait!) * TICK_MS };
}

async function childrenOf(pid: number): Promise<number[]> {
  try {
    const tasks = await readdir(`/proc/${pid}/task`);
    const lists = await Promise.all(tasks.map((t) => readFile(`/proc/${pid}/task/${t}/children`, 'utf8').catch(() => '')));
    return lists.flatMap((l) => l.split(' ').filter(Boolean).map(Number));
  } catch {
    return [];
  }
}

/**
 * CPU of a process tree in ms: the root and every live descendant, each with its reaped children (a Postgres
 * postmaster reaps the backends that exited, so their CPU is in its cutime).
 */
export async function treeCpuMs(root: number): Promise<number> {
  let total = 0;
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    total += await processCpuMs(pid, true);
    stack.push(...(await childrenOf(pid)));
  }
  return total;
}

/** CPU this process's reaped children used (cutime + cstime), in ms: a spawned crawl's CPU, read after it exits. */
export function reapedChildrenCpuMs(): Promise<number> {
  return readFile('/proc/self/stat', 'utf8').then((stat) => {
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[13]) + Number(f[14])) * TICK_MS;
  });
}

/** A local service the bench can read the CPU of: its name and the root of its process tree. */
export interface LocalService {
  name: 'postgres' | 'redis';
  pid: number;
}

/**
 * The process trees of the crawl's Postgres and Redis when they run on this machine: the postmaster (the parent of
 * this connection's backend, which reaps every backend) and the redis-server that answers INFO. A server elsewhere,
 * or one whose process this machine does not show, is left out.
 */
export async function localServices(db: RawQuery, redisUrl: string): Promise<LocalService[]> {
  const out: LocalService[] = [];
  const [backend] = await db.$queryRawUnsafe<{ pid: number }[]>('SELECT pg_backend_pid() AS pid').catch(() => []);
  const postmaster = backend ? await parentOf(Number(backend.pid)) : null;
  if (postmaster !== null && (await commOf(postmaster)) === 'postgres') out.push({ name: 'postgres', pid: postmaster });
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    const pid = Number(/^process_id:(\d+)/m.exec(await redis.info('server'))?.[1]);
    if (Number.isInteger(pid) && (await commOf(pid))?.startsWith('redis-server')) out.push({ name: 'redis', pid });
  } catch {
    // No Redis to read: its CPU is not reported.
  } finally {
    redis.disconnect();
  }
  return out;
}

async function parentOf(pid: number): Promise<number | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return null;
  const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  return Number.isInteger(ppid) && ppid > 1 ? ppid : null;
}

async function commOf(pid: number): Promise<string | null> {
  return readFile(`/proc/${pid}/comm`, 'utf8').then((c) => c.trim(), () => null);
}

/** Redis commandstats: calls and usec per command. */
export type CommandStats = Map<string, { calls: number; usec: number }>;

export async function redisCommandStats(redisUrl: string): Promise<CommandStats> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3, lazyConnect: true });
  try {
    await redis.connect();
    const info = await redis.info('commandstats');
    const out: CommandStats = new Map();
    for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) out.set(m[1]!, { calls: Number(m[2]), usec: Number(m[3]) });
    return out;
  } finally {
    redis.disconnect();
  }
}

/** Commands called between two snapshots, most calls first. */
export function diffCommandStats(before: CommandStats, after: CommandStats): { command: string; calls: number; usec: number }[] {
  const out: { command: string; calls: number; usec: number }[] = [];
  for (const [command, a] of after) {
    const b = before.get(command) ?? { calls: 0, usec: 0 };
    if (a.calls > b.calls) out.push({ command, calls: a.calls - b.calls, usec: a.usec - b.usec });
  }
  return out.sort((x, y) => y.calls - x.calls);
}

/** The slice of a Prisma client the statement profile uses. */
export interface RawQuery {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}

/** Whether pg_stat_statements is loaded on the server and installed in this database (installs it when it can). */
export async function enableStatements(db: RawQuery): Promise<boolean> {
  try {
    await db.$executeRawUnsafe('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await db.$queryRawUnsafe('SELECT pg_stat_statements_reset()::text AS reset');
    return true;
  } catch {
    return false;
  }
}

/** One statement's share of a crawl. */
export interface StatementStat {
  query: string;
  calls: number;
  totalMs: number;
  rows: number;
}

/** Statements run in the current database since the last reset, most total time first. */
export async function readStatements(db: RawQuery, limit = 15): Promise<StatementStat[]> {
  const rows = await db.$queryRawUnsafe<{ query: string; calls: bigint; total: number; rows: bigint }[]>(
    `SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS query, calls, total_exec_time AS total, rows
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
      ORDER BY total_exec_time DESC LIMIT ${Number(limit)}`,
  );
  return rows.map((r) => ({ query: r.query, calls: Number(r.calls), totalMs: Number(r.total), rows: Number(r.rows) }));
}

/** Reset the statement counters (all databases: the call takes no database argument on Postgres 15 here). */
export async function resetStatements(db: RawQuery): Promise<void> {
  await db.$queryRawUnsafe('SELECT pg_stat_statements_reset()::text AS reset');
}

/** Counters of one database and the server's WAL position, diffed around a crawl ({@link diffDbCounters}). */
export interface DbCounters {
  commits: number;
  rollbacks: number;
  inserted: number;
  updated: number;
  /** pg_current_wal_lsn() as bytes: server-wide, exact only on a private server. */
  walLsn: bigint;
  /** Sum of pg_stat_statements calls in this database (0 when the extension is not loaded). */
  statements: number;
}

/** Read {@link DbCounters} (pg_stat_database is what a backend flushed: read after the crawl's processes exited). */
export async function readDbCounters(db: RawQuery, withStatements: boolean): Promise<DbCounters> {
  await db.$queryRawUnsafe('SELECT pg_stat_clear_snapshot()::text AS c');
  const [r] = await db.$queryRawUnsafe<{ commits: bigint; rollbacks: bigint; inserted: bigint; updated: bigint; lsn: string }[]>(
    `SELECT xact_commit AS commits, xact_rollback AS rollbacks, tup_inserted AS inserted, tup_updated AS updated,
            (pg_current_wal_lsn() - '0/0'::pg_lsn)::text AS lsn
       FROM pg_stat_database WHERE datname = current_database()`,
  );
  let statements = 0;
  if (withStatements) {
    const [s] = await db.$queryRawUnsafe<{ calls: bigint | null }[]>(
      `SELECT sum(calls)::bigint AS calls FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    statements = Number(s?.calls ?? 0);
  }
  return { commits: Number(r!.commits), rollbacks: Number(r!.rollbacks), inserted: Number(r!.inserted), updated: Number(r!.updated), walLsn: BigInt(r!.lsn.split('.')[0]!), statements };
}

/** What a crawl did to its database: commits, rows, WAL bytes and statements (the after-side's statements are since the reset). */
export function diffDbCounters(a: DbCounters, b: DbCounters): { commits: number; rollbacks: number; inserted: number; updated: number; walBytes: number; statements: number } {
  return { commits: b.commits - a.commits, rollbacks: b.rollbacks - a.rollbacks, inserted: b.inserted - a.inserted, updated: b.updated - a.updated, walBytes: Number(b.walLsn - a.walLsn), statements: b.statements };
}
