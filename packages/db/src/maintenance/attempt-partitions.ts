import { DAY_MS } from '@crawler/core';
import type { PrismaClient } from '../client.js';
import { withDbErrors } from '../errors.js';
import { sqlOf, withTransaction } from '../sql.js';

/**
 * Days of attempt-log partitions kept ready ahead of now (whatever the partition length). A week: a fleet whose background loop stops (every
 * worker down) for less than that still writes into day partitions when it comes back; beyond it, attempts land in
 * the default partition and move to their day when the partition is created (see {@link ensureAttemptPartitions}).
 */
export const ATTEMPT_PARTITION_AHEAD_DAYS = 7;

/** One partition of fetcher_attempts or attempt_heuristics; `from`/`to` are null for the default partition. */
export interface AttemptPartition {
  parent: 'fetcher_attempts' | 'attempt_heuristics';
  partition: string;
  from: Date | null;
  to: Date | null;
}

/** Options for {@link ensureAttemptPartitions}. */
export interface EnsurePartitionsOptions {
  /** The instant partitions are made ready around. @defaultValue the current time */
  now?: Date;
  /** Days ahead of `now` that must have their partition. @defaultValue {@link ATTEMPT_PARTITION_AHEAD_DAYS} */
  aheadDays?: number;
  /**
   * How long to wait for the parent tables' locks before giving up this pass (a long report holding them must not
   * make a worker's background loop, or the writers queued behind it, wait). @defaultValue 5000
   */
  lockTimeoutMs?: number;
  /**
   * Length of the partitions created: `day`, `week` or `month`. @defaultValue the database's setting
   * `crawler.attempt_log_partition`, else `week`
   */
  unit?: AttemptPartitionUnit;
}

/** Length of one attempt-log partition (UTC; weeks start on Monday). */
export type AttemptPartitionUnit = 'day' | 'week' | 'month';

/**
 * Create the partitions of the attempt log from yesterday to `aheadDays` ahead where missing (one transaction;
 * the SQL function attempt_log_ensure_partitions of migration 20261128000100 serialises callers fleet-wide and moves
 * a new range's rows out of the default partition). Cheap when nothing is missing: one catalog read. Returns the
 * partitions created.
 */
export async function ensureAttemptPartitions(prisma: PrismaClient, opts: EnsurePartitionsOptions = {}): Promise<number> {
  const now = opts.now ?? new Date();
  const from = new Date(now.getTime() - DAY_MS);
  const to = new Date(now.getTime() + ((opts.aheadDays ?? ATTEMPT_PARTITION_AHEAD_DAYS) + 1) * DAY_MS);
  return withDbErrors('ensure attempt partitions', async () => {
    const [missing] = await sqlOf(prisma).query<{ n: number }>(MISSING_SQL, [from.toISOString(), to.toISOString()]);
    if (!missing || missing.n === 0) return 0;
    return withTransaction(prisma, async (sql) => {
      await sql.query("SELECT set_config('lock_timeout', $1, true)", [String(Math.max(1, Math.round(opts.lockTimeoutMs ?? 5000)))]);
      const [row] = await sql.query<{ created: number }>('SELECT attempt_log_ensure_partitions($1::timestamptz, $2::timestamptz, $3::text) AS created', [
        from.toISOString(),
        to.toISOString(),
        opts.unit ?? null,
      ]);
      return row?.created ?? 0;
    });
  });
}

// Days in [from, to) that no partition of fetcher_attempts covers.
const MISSING_SQL = `
SELECT count(*)::int AS n
FROM generate_series(date_trunc('day', $1::timestamptz, 'UTC'), $2::timestamptz - interval '1 microsecond', interval '1 day') AS d(day)
WHERE NOT EXISTS (
  SELECT 1 FROM attempt_log_partitions p
  WHERE p.parent = 'fetcher_attempts' AND p.range_from < d.day + interval '1 day' AND p.range_to > d.day
)`;

/** Every partition of the attempt log, oldest first, default partitions last. */
export async function listAttemptPartitions(prisma: PrismaClient): Promise<AttemptPartition[]> {
  const rows = await withDbErrors('list attempt partitions', () =>
    sqlOf(prisma).query<{ parent: AttemptPartition['parent']; partition: string; range_from: Date | null; range_to: Date | null }>(
      'SELECT parent, partition, range_from, range_to FROM attempt_log_partitions ORDER BY parent DESC, range_from NULLS LAST, partition',
    ),
  );
  return rows.map((r) => ({ parent: r.parent, partition: r.partition, from: r.range_from, to: r.range_to }));
}
