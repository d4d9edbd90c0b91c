import { canonicalFetcherName, CrawlerError, ERROR_TYPES } from '@crawler/core';
import type { PrismaClient } from '../client.js';
import type { AttemptInput } from './types.js';
import { sqlOf } from '../sql.js';

/** Stable code for an attempt that cannot be recorded as given. */
export const INVALID_ATTEMPT = ERROR_TYPES.invalidAttempt;

/** Stable code for a batch of which some attempts were written and some rejected. */
export const ATTEMPT_BATCH_PARTIAL = ERROR_TYPES.attemptBatchPartial;

/** Some attempts of a batch were rejected; the others were written (their ids are in `ids`, null where rejected). */
export class AttemptBatchError extends CrawlerError {
  override name = 'AttemptBatchError';
  constructor(
    readonly ids: readonly (bigint | null)[],
    readonly failures: readonly { index: number; error: CrawlerError }[],
  ) {
    super(ATTEMPT_BATCH_PARTIAL, `${failures.length} of ${ids.length} attempts rejected: ${failures.map((f) => `#${f.index} ${f.error.code}`).join(', ')}`, {
      cause: failures[0]?.error,
    });
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function invalid(index: number, why: string, input: Partial<AttemptInput>): CrawlerError {
  return new CrawlerError(INVALID_ATTEMPT, `attempt #${index}: ${why}`, { url: input.url, fetcher: input.fetcher });
}

function intOrNull(v: number | null | undefined): number | null {
  return v === null || v === undefined || !Number.isFinite(v) ? null : Math.round(v);
}

/** The JSON row one attempt becomes; validated so bad input fails with a typed error before touching the db. */
export function toAttemptRow(input: AttemptInput, index: number, now: Date): Record<string, unknown> {
  if (typeof input !== 'object' || input === null) throw invalid(index, 'not an object', {});
  if (typeof input.url !== 'string' || input.url.length === 0) throw invalid(index, 'url is empty', input);
  if (typeof input.fetcher !== 'string' || input.fetcher.trim() === '') throw invalid(index, 'fetcher is empty', input);
  if (typeof input.success !== 'boolean') throw invalid(index, 'success is not a boolean', input);
  if (input.linkId != null && !UUID.test(input.linkId)) throw invalid(index, `linkId ${input.linkId} is not a uuid`, input);
  const attemptedAt = input.attemptedAt ?? now;
  if (!(attemptedAt instanceof Date) || Number.isNaN(attemptedAt.getTime())) throw invalid(index, 'attemptedAt is not a valid date', input);
  if (!Array.isArray(input.heuristics)) throw invalid(index, 'heuristics is not an array', input);
  const heuristics = input.heuristics.map((h) => {
    if (typeof h?.type !== 'string' || h.type === '' || typeof h.value !== 'string') {
      throw invalid(index, `heuristic ${JSON.stringify(h)} needs a non-empty type and a string value`, input);
    }
    const s = h.importanceScore;
    return { t: h.type, v: h.value, s: typeof s === 'number' && Number.isFinite(s) ? s : null };
  });
  return {
    i: index,
    link: input.linkId ?? null,
    url: input.url,
    fetcher: canonicalFetcherName(input.fetcher),
    success: input.success,
    is_banned: input.isBanned ?? false,
    error_type: input.errorType ?? null,
    http_status: intOrNull(input.httpStatus),
    response_headers: input.responseHeaders ?? null,
    duration_ms: intOrNull(input.durationMs),
    attempted_at: attemptedAt.toISOString(),
    selection_source: input.selectionSource ?? null,
    heuristics,
  };
}

// One statement for the whole batch: ids are drawn from the sequence up front so heuristics can reference their
// attempt in the same statement (FK checks run at statement end), and the statement is atomic on its own.
// fetcher/success/attempted_at are copied onto each heuristic row for the covering index findBestFetcher reads.
// $1 is the JSON array of toAttemptRow rows, $2 the heuristics' created_at. The outcome statement (OutcomeStore)
// starts with the same CTEs, so a page's outcome and its attempts are one write.
export const ATTEMPT_CTES = `
input AS MATERIALIZED (
  SELECT nextval(pg_get_serial_sequence('fetcher_attempts', 'id')) AS id, x.*
  FROM (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(
      i int, link uuid, url text, fetcher text, success boolean, is_banned boolean, error_type text,
      http_status int, response_headers jsonb, duration_ms int, attempted_at timestamptz, selection_source text,
      heuristics jsonb)
    ORDER BY i
  ) x
),
attempts AS (
  INSERT INTO fetcher_attempts (id, link, url, fetcher, success, is_banned, error_type, http_status,
    response_headers, duration_ms, attempted_at, selection_source)
  SELECT id, link, url, fetcher, success, is_banned, error_type, http_status,
    response_headers, duration_ms, attempted_at, selection_source
  FROM input
),
heuristics AS (
  INSERT INTO attempt_heuristics (attempt, heuristic_type, heuristic_value, importance_score, created_at,
    fetcher, success, attempted_at)
  SELECT input.id, h.t, h.v, h.s, $2::timestamptz, input.fetcher, input.success, input.attempted_at
  FROM input CROSS JOIN LATERAL jsonb_to_recordset(input.heuristics) AS h(t text, v text, s float8)
)`;

const LOG_ATTEMPTS_SQL = `
WITH ${ATTEMPT_CTES}
SELECT i, id FROM input ORDER BY i`;

/** Insert attempts and all their heuristics in one round trip; returns the new attempt ids in input order. */
export async function insertAttempts(prisma: PrismaClient, inputs: readonly AttemptInput[], now: Date): Promise<bigint[]> {
  if (inputs.length === 0) return [];
  const rows = inputs.map((input, i) => toAttemptRow(input, i, now));
  const out = await sqlOf(prisma).query<{ i: number; id: string | bigint }>(LOG_ATTEMPTS_SQL, [JSON.stringify(rows), now.toISOString()]);
  return out.map((r) => BigInt(r.id));
}
