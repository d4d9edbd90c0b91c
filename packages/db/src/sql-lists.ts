import { LINK_STATUSES, errorCodesWhere, type ErrorCode, type LinkStatus } from '@crawler/core';

/**
 * Link status lists as the SQL of this package spells them, generated from core's LINK_STATUSES so a renamed or added
 * status cannot leave a statement behind. (Migrations are frozen SQL: sql-lists.test.ts checks their literals.)
 */

/** A quoted, comma-separated SQL list: `'a', 'b'`. Only for our own constants (never user input). */
export function sqlList(values: readonly string[]): string {
  return values.map((v) => `'${v.replace(/'/g, "''")}'`).join(', ');
}

/** A link that reached one of these is never written again by a job. */
export const FINISHED_STATUSES: readonly LinkStatus[] = [LINK_STATUSES.done, LINK_STATUSES.failed];
/** Statuses of a link still in progress: a crawl with any of them is not done. */
export const IN_PROGRESS_STATUSES = [LINK_STATUSES.queued, LINK_STATUSES.routing, LINK_STATUSES.fetching, LINK_STATUSES.paused] as const;
/** Links some worker is about to handle or handling (paused ones wait for time, not for a worker). */
export const IN_FLIGHT_STATUSES: readonly LinkStatus[] = [LINK_STATUSES.queued, LINK_STATUSES.routing, LINK_STATUSES.fetching];

export const FINISHED_SQL_LIST = sqlList(FINISHED_STATUSES);
export const IN_PROGRESS_SQL_LIST = sqlList(IN_PROGRESS_STATUSES);
export const IN_FLIGHT_SQL_LIST = sqlList(IN_FLIGHT_STATUSES);

/**
 * Error codes of attempt rows that are no evidence about their fetcher (ERROR_POLICY toolEvidence: false, among the
 * codes an attempt can carry: rate_limited and tls_error). The partial index idx_attempts_not_evidence holds exactly
 * these, so the exact scan's anti-join reads it (migration 202612100100_tls_error_not_evidence).
 */
export const NOT_EVIDENCE_CODES: readonly ErrorCode[] = [...errorCodesWhere('toolEvidence', false)].filter((c) => errorCodesWhere('loggedAsAttempt').has(c));
export const NOT_EVIDENCE_SQL_LIST = sqlList(NOT_EVIDENCE_CODES);
