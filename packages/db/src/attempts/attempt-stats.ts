import { canonicalFetcherName, DAY_MS } from '@crawler/core';
import type { PrismaClient } from '../client.js';
import { sqlOf, withTransaction } from '../sql.js';
import type { AttemptStats, ProxyStats, PruneResult, VelocityBucket } from './types.js';

interface StatsRow {
  key: string;
  attempts: number;
  successes: number;
  banned: number;
}

function toStats(rows: readonly StatsRow[], canonical: boolean): AttemptStats[] {
  const merged = new Map<string, StatsRow>();
  for (const r of rows) {
    const key = canonical ? canonicalFetcherName(r.key) : r.key;
    const m = merged.get(key) ?? { key, attempts: 0, successes: 0, banned: 0 };
    m.attempts += Number(r.attempts);
    m.successes += Number(r.successes);
    m.banned += Number(r.banned);
    merged.set(key, m);
  }
  return [...merged.values()]
    .map((m) => ({ ...m, successRate: m.attempts ? m.successes / m.attempts : 0, banRate: m.attempts ? m.banned / m.attempts : 0 }))
    .sort((a, b) => b.attempts - a.attempts || (a.key < b.key ? -1 : 1));
}

/**
 * Share of a domain's attempts in the last `days` that were banned (the domain's ban risk); 0 when there were
 * none, rather than a division by zero.
 */
export async function domainBanRate(prisma: PrismaClient, domain: string, days: number, now: Date): Promise<number> {
  const since = new Date(now.getTime() - days * DAY_MS);
  const [row] = await prisma.$queryRawUnsafe<{ total: number; banned: number }[]>(
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE fa.is_banned)::int AS banned
     FROM fetcher_attempts fa
     WHERE fa.attempted_at > $2::timestamptz
       AND (fa.id, fa.attempted_at) IN (
         SELECT ah.attempt, ah.attempted_at FROM attempt_heuristics ah
         WHERE ah.heuristic_type = 'domain' AND ah.heuristic_value = $1 AND ah.attempted_at > $2::timestamptz)`,
    domain,
    since.toISOString(),
  );
  return row && row.total > 0 ? row.banned / row.total : 0;
}

/** Attempts, successes and bans since `since` grouped by one column of the attempt log; synthetic priors left out. */
async function statsBy(prisma: PrismaClient, column: 'fetcher' | 'exit_tier' | 'error_type', since: Date, failedOnly = false): Promise<StatsRow[]> {
  return prisma.$queryRawUnsafe<StatsRow[]>(
    `SELECT ${column} AS key, count(*)::int AS attempts, count(*) FILTER (WHERE success)::int AS successes,
            count(*) FILTER (WHERE is_banned)::int AS banned
     FROM fetcher_attempts
     WHERE attempted_at >= $1::timestamptz AND selection_source IS DISTINCT FROM 'prior'${failedOnly ? ' AND NOT success' : ''}
     GROUP BY ${column}`,
    since.toISOString(),
  );
}

/** Attempts, success and ban rates per canonical fetcher since `since`; synthetic priors are left out. */
export async function fetcherStats(prisma: PrismaClient, since: Date): Promise<AttemptStats[]> {
  return toStats(await statsBy(prisma, 'fetcher', since), true);
}

/** Failed attempts per error type since `since` (an attempt that failed without one counts as `unknown`), most first. */
export async function errorTypeStats(prisma: PrismaClient, since: Date): Promise<AttemptStats[]> {
  return toStats((await statsBy(prisma, 'error_type', since, true)).map((r) => ({ ...r, key: r.key ?? 'unknown' })), false);
}

/** The same per exit tier (`direct` or a PROXY_TIERS name) since `since`; synthetic priors are left out. */
export async function tierStats(prisma: PrismaClient, since: Date): Promise<AttemptStats[]> {
  return toStats(await statsBy(prisma, 'exit_tier', since), false);
}

/** The same per proxy of each tier since `since` (proxied attempts that named their proxy), busiest first. */
export async function proxyStats(prisma: PrismaClient, since: Date): Promise<ProxyStats[]> {
  const rows = await prisma.$queryRawUnsafe<(StatsRow & { tier: string })[]>(
    `SELECT exit_tier AS tier, exit_proxy AS key, count(*)::int AS attempts, count(*) FILTER (WHERE success)::int AS successes,
            count(*) FILTER (WHERE is_banned)::int AS banned
     FROM fetcher_attempts
     WHERE attempted_at >= $1::timestamptz AND exit_proxy IS NOT NULL AND selection_source IS DISTINCT FROM 'prior'
     GROUP BY exit_tier, exit_proxy
     ORDER BY attempts DESC, exit_tier, exit_proxy`,
    since.toISOString(),
  );
  return rows.map((r) => {
    const [attempts, successes, banned] = [Number(r.attempts), Number(r.successes), Number(r.banned)];
    return { tier: r.tier, key: r.key, attempts, successes, banned, successRate: attempts ? successes / attempts : 0, banRate: attempts ? banned / attempts : 0 };
  });
}

/** The same per domain (from the `domain` heuristic), busiest first, at most `limit`. */
export async function domainStats(prisma: PrismaClient, since: Date, limit: number): Promise<AttemptStats[]> {
  const rows = await prisma.$queryRawUnsafe<StatsRow[]>(
    `SELECT ah.heuristic_value AS key, count(DISTINCT fa.id)::int AS attempts,
            count(DISTINCT fa.id) FILTER (WHERE fa.success)::int AS successes,
            count(DISTINCT fa.id) FILTER (WHERE fa.is_banned)::int AS banned
     FROM attempt_heuristics ah JOIN fetcher_attempts fa ON fa.id = ah.attempt AND fa.attempted_at = ah.attempted_at
     WHERE ah.heuristic_type = 'domain' AND fa.attempted_at >= $1::timestamptz AND ah.attempted_at >= $1::timestamptz
       AND fa.selection_source IS DISTINCT FROM 'prior'
     GROUP BY ah.heuristic_value
     ORDER BY attempts DESC, key
     LIMIT $2`,
    since.toISOString(),
    limit,
  );
  return toStats(rows, false);
}

/**
 * Per hour (or day): attempts, how many were routed by learned data, and how many by a probe. A `domain_memory`
 * decision (the domain's last working browser) is learned too: it skipped the probe on the strength of the log.
 */
export async function velocity(prisma: PrismaClient, since: Date, bucket: 'hour' | 'day'): Promise<VelocityBucket[]> {
  const rows = await prisma.$queryRawUnsafe<{ bucket_start: Date; attempts: number; learned: number; probes: number }[]>(
    `SELECT date_trunc($2, attempted_at, 'UTC') AS bucket_start, count(*)::int AS attempts,
            count(*) FILTER (WHERE selection_source IN ('learned', 'domain_memory'))::int AS learned,
            count(*) FILTER (WHERE selection_source = 'probe')::int AS probes
     FROM fetcher_attempts
     WHERE attempted_at >= $1::timestamptz AND selection_source IS DISTINCT FROM 'prior'
     GROUP BY 1 ORDER BY 1`,
    since.toISOString(),
    bucket,
  );
  return rows.map((r) => ({
    bucketStart: new Date(r.bucket_start),
    attempts: r.attempts,
    learned: r.learned,
    probes: r.probes,
    learnedShare: r.attempts ? r.learned / r.attempts : 0,
  }));
}

/**
 * Retention. Every day partition of the attempt log that ends at or before `before` is dropped whole (its attempts
 * taken out of the rollups first, by attempt_log_drop_partition), which leaves no dead rows behind and costs the
 * same whatever the day held. Attempts older than `before` that sit in the default partition (dated outside every
 * day partition) are deleted in batches as before, with their heuristics (cascade) and their rollup counts
 * (trigger). Attempts of the day `before` falls in stay until a later run drops that day: retention is rounded
 * up to the whole UTC day.
 */
export async function pruneBefore(prisma: PrismaClient, before: Date, batchSize: number): Promise<PruneResult> {
  const total: PruneResult = { attempts: 0, heuristics: 0 };
  const sql = sqlOf(prisma);
  const doomed = await sql.query<{ partition: string }>(
    `SELECT partition FROM attempt_log_partitions
     WHERE parent = 'fetcher_attempts' AND range_to IS NOT NULL AND range_to <= $1::timestamptz
     ORDER BY range_from`,
    [before.toISOString()],
  );
  for (const { partition } of doomed) {
    const [row] = await withTransaction(prisma, async (tx) => {
      // A pass that cannot get the parents' locks soon (a long report reading the log) gives up rather than make the
      // fleet's writers queue behind it; the next run drops the day.
      await tx.query("SELECT set_config('lock_timeout', '10000', true)");
      return tx.query<{ attempts: string; heuristics: string }>('SELECT attempts::text, heuristics::text FROM attempt_log_drop_partition($1)', [partition]);
    });
    total.attempts += Number(row?.attempts ?? 0);
    total.heuristics += Number(row?.heuristics ?? 0);
  }
  for (;;) {
    const [row] = await sql.query<{ attempts: number; heuristics: number }>(
      `WITH doomed AS (
         SELECT id, attempted_at FROM fetcher_attempts_default WHERE attempted_at < $1::timestamptz ORDER BY attempted_at LIMIT $2
       ), heur AS (
         SELECT count(*)::int AS n FROM attempt_heuristics_default WHERE (attempt, attempted_at) IN (SELECT id, attempted_at FROM doomed)
       ), gone AS (
         DELETE FROM fetcher_attempts WHERE attempted_at < $1::timestamptz AND (id, attempted_at) IN (SELECT id, attempted_at FROM doomed) RETURNING 1
       )
       SELECT (SELECT count(*)::int FROM gone) AS attempts, (SELECT n FROM heur) AS heuristics`,
      [before.toISOString(), batchSize],
    );
    const attempts = row?.attempts ?? 0;
    total.attempts += attempts;
    total.heuristics += row?.heuristics ?? 0;
    if (attempts < batchSize) return total;
  }
}
