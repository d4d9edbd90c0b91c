import { canonicalFetcherName, type DomainAttempt } from '@crawler/core';
import type { PrismaClient } from '../client.js';
import { withDbErrors } from '../errors.js';
import { sqlOf } from '../sql.js';

/** Attempts read per domain: enough for every fetcher's latest outcome and its last verification on a busy domain. */
export const DOMAIN_STATE_WINDOW = 200;

// The domain's latest attempts newest first: a backward range scan of idx_heur_type_value on ('domain', value) ordered
// by attempt id (ids follow insertion, which is the order attempts happen in), then a primary-key probe per row for
// the columns the heuristics index does not carry. Bounded by the window, whatever the domain's history, with a
// plan for the values or a generic one (the test checks both, without statistics).
export const DOMAIN_STATE_SQL = `
SELECT fa.fetcher, fa.success, fa.is_banned, fa.error_type, fa.selection_source, fa.attempted_at
FROM (
  SELECT ah.attempt FROM attempt_heuristics ah
  WHERE ah.heuristic_type = 'domain' AND ah.heuristic_value = $1
  ORDER BY ah.attempt DESC
  LIMIT $2
) AS recent
JOIN fetcher_attempts fa ON fa.id = recent.attempt
WHERE fa.selection_source IS DISTINCT FROM 'prior'
ORDER BY fa.attempted_at DESC, fa.id DESC`;

interface Row {
  fetcher: string;
  success: boolean;
  is_banned: boolean;
  error_type: string | null;
  selection_source: string | null;
  attempted_at: Date;
}

/**
 * A domain's latest attempts (newest first, synthetic priors left out), for the router's per-domain policy in
 * @crawler/core (`summarizeDomainAttempts`, `isDisqualified`, `rememberedFetcher`). One indexed query.
 */
export class DomainStateStore {
  readonly #prisma: PrismaClient;

  constructor(deps: { prisma: PrismaClient }) {
    this.#prisma = deps.prisma;
  }

  /** Up to `limit` latest attempts on `domain` (lower-case host as the `domain` heuristic stores it). */
  async recentDomainAttempts(domain: string, limit: number = DOMAIN_STATE_WINDOW): Promise<DomainAttempt[]> {
    const rows = await withDbErrors('domain state', () => sqlOf(this.#prisma).query<Row>(DOMAIN_STATE_SQL, [domain, Math.max(1, Math.floor(limit))]));
    return rows.map((r) => ({
      fetcher: canonicalFetcherName(r.fetcher),
      success: r.success,
      isBanned: r.is_banned,
      errorType: r.error_type,
      selectionSource: r.selection_source,
      attemptedAt: r.attempted_at,
    }));
  }
}
