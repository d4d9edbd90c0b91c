import { canonicalFetcherName, DAY_MS } from '@crawler/core';
import type { PrismaClient } from '../client.js';
import type { AttemptStats, PruneResult, VelocityBucket } from './types.js';

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
       AND fa.id IN (SELECT ah.attempt FROM attempt_heuristics ah WHERE ah.heuristic_type = 'domain' AND ah.heuristic_value = $1)`,
    domain,
    since.toISOString(),
  );
  return row && row.total > 0 ? row.banned / row.total : 0;
}

/** Attempts, success and ban rates per canonical fetcher since `since`; synthetic priors are left out. */
export async function fetcherStats(prisma: PrismaClient, since: Date): Promise<AttemptStats[]> {
  const rows = await prisma.$queryRawUnsafe<StatsRow[]>(
    `SELECT fetcher AS key, count(*)::int AS attempts, count(*) FILTER (WHERE success)::int AS successes,
            count(*) FILTER (WHERE is_banned)::int AS banned
     FROM fetcher_attempts
     WHERE attempted_at >= $1::timestamptz AND selection_source IS DISTINCT FROM 'prior'
     GROUP BY fetcher`,
    since.toISOString(),
  );
  return toStats(rows, true);
}

/** The same per domain (from the `domain` heuristic), busiest first, at most `limit`. */
export async function domainStats(prisma: PrismaClient, since: Date, limit: number): Promise<AttemptStats[]> {
  const rows = await prisma.$queryRawUnsafe<StatsRow[]>(
    `SELECT ah.heuristic_value AS key, count(DISTINCT fa.id)::int AS attempts,
            count(DISTINCT fa.id) FILTER (WHERE fa.success)::int AS successes,
            count(DISTINCT fa.id) FILTER (WHERE fa.is_banned)::int AS banned
     FROM attempt_heuristics ah JOIN fetcher_attempts fa ON fa.id = ah.attempt
     WHERE ah.heuristic_type = 'domain' AND fa.attempted_at >= $1::timestamptz
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

/** Delete attempts older than `before` in batches (heuristics cascade), so retention never holds long locks. */
export async function pruneBefore(prisma: PrismaClient, before: Date, batchSize: number): Promise<PruneResult> {
  const total: PruneResult = { attempts: 0, heuristics: 0 };
  for (;;) {
    const [row] = await prisma.$queryRawUnsafe<{ attempts: number; heuristics: number }[]>(
      `WITH doomed AS (
         SELECT id FROM fetcher_attempts WHERE attempted_at < $1::timestamptz ORDER BY attempted_at LIMIT $2
       ), heur AS (
         SELECT count(*)::int AS n FROM attempt_heuristics WHERE attempt IN (SELECT id FROM doomed)
       ), gone AS (
         DELETE FROM fetcher_attempts WHERE id IN (SELECT id FROM doomed) RETURNING 1
       )
       SELECT (SELECT count(*)::int FROM gone) AS attempts, (SELECT n FROM heur) AS heuristics`,
      before.toISOString(),
      batchSize,
    );
    const attempts = row?.attempts ?? 0;
    total.attempts += attempts;
    total.heuristics += row?.heuristics ?? 0;
    if (attempts < batchSize) return total;
  }
}
