import type { PrismaClient } from '../client.js';
import { withDbErrors } from '../errors.js';
import { withTransaction } from '../sql.js';

/**
 * The tables a crawl grows fast: every page adds rows to most of them. A plan Postgres made while they were nearly
 * empty (a fresh database, the first seconds of a crawl) is a sequential scan, and a prepared statement or a foreign
 * key check keeps that plan until the table's statistics change.
 */
export const GROWING_TABLES = ['links', 'fetcher_attempts', 'attempt_heuristics', 'fetched_content', 'heuristic_rollups', 'link_events'] as const;

/** When a table's statistics count as stale. */
export interface TableStatsOptions {
  /** Tables to watch. @defaultValue {@link GROWING_TABLES} */
  tables?: readonly string[];
  /** Rows changed since the last ANALYZE before a table is analyzed at all. @defaultValue 1000 */
  minChanged?: number;
  /** ...and at least this multiple of the rows the last ANALYZE counted (1: the table changed by what it held). @defaultValue 1 */
  factor?: number;
}

/**
 * A table this pass analyzed: the rows its previous statistics counted (-1: never analyzed) and the rows changed since;
 * for a partitioned table, summed over the partitions analyzed.
 */
export interface AnalyzedTable {
  table: string;
  rowsBefore: number;
  changed: number;
}

// Rows changed since the last ANALYZE against the rows it counted (reltuples; -1 when never analyzed). A partitioned
// table (the attempt log, by day) has no rows of its own: its partitions are checked one by one, under its name.
const STALE_SQL = `
SELECT coalesce(p.relname, s.relname)::text AS "table", s.relname::text AS relation,
       c.reltuples::float8 AS "rowsBefore", s.n_mod_since_analyze::float8 AS changed
FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
LEFT JOIN pg_inherits i ON i.inhrelid = s.relid
LEFT JOIN pg_class p ON p.oid = i.inhparent
WHERE s.schemaname = current_schema() AND coalesce(p.relname, s.relname) = ANY($1::text[])
  AND s.n_mod_since_analyze >= greatest($2::float8, $3::float8 * greatest(c.reltuples, 0))
ORDER BY 1, 2`;

/** One fleet-wide key: a process that finds another analyzing skips its pass. */
const ANALYZE_LOCK_KEY = 0x63726177_6c616e61n; // 'crawlana'

/**
 * ANALYZE the crawl's tables that changed by as much as they held at their last ANALYZE (at least `minChanged` rows):
 * their statistics at 1k, 2k, 4k… rows, a logarithmic number of passes over a table's life. Autovacuum does the same
 * on its own schedule (a minute between visits, 10% growth), which a fresh database filling at hundreds of pages a
 * second outruns: measured on the many-domains bench, one 500-host crawl in two kept the nearly-empty-table plan of the
 * router's domain-state read for the whole run (a sequential scan of every attempt, 20 ms per read) and ran 30% slower.
 * ANALYZE changes the table's statistics, which makes every connection plan its statements on it again.
 *
 * One process at a time (a transaction-scoped advisory lock; the others return []). A role that does not own the
 * tables gets Postgres' "skipping" warning and nothing else.
 */
export async function analyzeStaleTables(prisma: PrismaClient, opts: TableStatsOptions = {}): Promise<AnalyzedTable[]> {
  const tables = [...(opts.tables ?? GROWING_TABLES)];
  return withDbErrors('analyze stale tables', () =>
    withTransaction(prisma, async (sql) => {
      const [lock] = await sql.query<{ got: boolean }>('SELECT pg_try_advisory_xact_lock($1::bigint) AS got', [ANALYZE_LOCK_KEY.toString()]);
      if (!lock?.got) return [];
      const stale = await sql.query<AnalyzedTable & { relation: string }>(STALE_SQL, [tables, opts.minChanged ?? 1000, opts.factor ?? 1]);
      const byTable = new Map<string, AnalyzedTable>();
      for (const t of stale) {
        await sql.query(`ANALYZE ${quoteIdent(t.relation)}`);
        const seen = byTable.get(t.table);
        if (seen) {
          seen.rowsBefore += Math.max(0, t.rowsBefore);
          seen.changed += t.changed;
        } else byTable.set(t.table, { table: t.table, rowsBefore: t.rowsBefore, changed: t.changed });
      }
      return [...byTable.values()];
    }),
  );
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
