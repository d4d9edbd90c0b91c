import { canonicalFetcherName, type DomainAttempt } from '@crawler/core';
import type { PrismaClient } from '../client.js';
import { withDbErrors } from '../errors.js';
import { sqlOf } from '../sql.js';

/** Attempts read per domain: enough for every fetcher's latest outcome and its last verification on a busy domain. */
export const DOMAIN_STATE_WINDOW = 200;

// The domain's latest attempts newest first: a backward range scan of idx_heur_type_value on ('domain', value) ordered
// by attempt id (ids follow insertion, which is the order attempts happen in), then a primary-key probe per row for
// the columns the heuristics index does not carry. Bounded by the window, whatever the domain's history and whatever
// the statistics say (the tests check plans without statistics, and with one domain holding every attempt):
// - the window is written into the text, not passed as a parameter: a generic plan prices `LIMIT $2` at a tenth of
//   the rows the domain is estimated to have, and for a site crawl (one domain, every attempt) a hash join over every
//   attempt then looked cheaper (100k attempts: 20 ms per read instead of 0.4 ms);
// - the probe is a LATERAL subquery with OFFSET 0, which Postgres does not flatten into a join: it runs once per
//   window row, on the primary key. Flattened, the planner's price for 200 probes beat a hash join over up to ~30k
//   attempts (4 ms per read at 20k).
// - the probe names the attempt's attempted_at too (the heuristics index carries it): the log is partitioned by day,
//   and with the partition key the probe reads one partition's primary key instead of every day's.
// The fetcher read is the attempt's arm (attempt_arm: the fetcher alone for the direct tier, `fetcher@tier` through a
// proxy), so the domain's memory tells "plain HTTP is blocked here" from "plain HTTP through residential works here".
// Each row carries the attempt's section (its `section` heuristic, through the partial index of section rows by
// attempt): the router reads a section's own attempts out of the domain's without parsing their URLs.
export function domainStateSql(limit: number): string {
  return `
SELECT fa.fetcher, fa.success, fa.is_banned, fa.error_type, fa.selection_source, fa.attempted_at,
  (SELECT s.heuristic_value FROM attempt_heuristics s
   WHERE s.heuristic_type = 'section' AND s.attempt = fa.id AND s.attempted_at = fa.attempted_at LIMIT 1) AS section
FROM (
  SELECT ah.attempt, ah.attempted_at FROM attempt_heuristics ah
  WHERE ah.heuristic_type = 'domain' AND ah.heuristic_value = $1
  ORDER BY ah.attempt DESC
  LIMIT ${Number.isFinite(limit) ? Math.max(1, Math.floor(limit)) : DOMAIN_STATE_WINDOW}
) AS recent
CROSS JOIN LATERAL (
  SELECT f.id, attempt_arm(f.fetcher, f.exit_tier) AS fetcher, f.success, f.is_banned, f.error_type, f.selection_source, f.attempted_at
  FROM fetcher_attempts f WHERE f.id = recent.attempt AND f.attempted_at = recent.attempted_at
  OFFSET 0
) AS fa
WHERE fa.selection_source IS DISTINCT FROM 'prior'
ORDER BY fa.attempted_at DESC, fa.id DESC`;
}

/**
 * The read the router makes as a plain statement over the parent tables: what `domain_recent_attempts` (migration
 * 20261206000100) runs. Kept for the plan tests; the store calls the function, whose planner settings keep the read
 * bounded on the partitioned log (see the migration).
 */
export const DOMAIN_STATE_SQL = domainStateSql(DOMAIN_STATE_WINDOW);

/** The store's statement: the function, the window a parameter (inside it, the plan cannot sort the domain's entries). */
export const DOMAIN_STATE_CALL_SQL = 'SELECT fetcher, success, is_banned, error_type, selection_source, attempted_at, section FROM domain_recent_attempts($1, $2::int)';

interface Row {
  fetcher: string;
  success: boolean;
  is_banned: boolean;
  error_type: string | null;
  selection_source: string | null;
  attempted_at: Date;
  section: string | null;
}

/**
 * A domain's latest attempts (newest first, synthetic priors left out), for the router's per-domain policy in
 * @crawler/core (`summarizeDomainAttempts`, `isDisqualified`, `rememberedFetcher`). One call of `domain_recent_attempts`.
 */
export class DomainStateStore {
  readonly #prisma: PrismaClient;

  constructor(deps: { prisma: PrismaClient }) {
    this.#prisma = deps.prisma;
  }

  /** Up to `limit` latest attempts on `domain` (lower-case host as the `domain` heuristic stores it). */
  async recentDomainAttempts(domain: string, limit: number = DOMAIN_STATE_WINDOW): Promise<DomainAttempt[]> {
    const window = Number.isFinite(limit) ? Math.max(1, Math.floor(limit)) : DOMAIN_STATE_WINDOW;
    const rows = await withDbErrors('domain state', () => sqlOf(this.#prisma).query<Row>(DOMAIN_STATE_CALL_SQL, [domain, window]));
    return rows.map((r) => ({
      fetcher: canonicalFetcherName(r.fetcher),
      success: r.success,
      isBanned: r.is_banned,
      errorType: r.error_type,
      selectionSource: r.selection_source,
      attemptedAt: r.attempted_at,
      section: r.section,
    }));
  }
}
