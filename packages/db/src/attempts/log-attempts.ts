import { canonicalFetcherName, CrawlerError, DIRECT_TIER, ERROR_TYPES, maskProxyUrl, redactCredentials } from '@crawler/core';
import type { PrismaClient } from '../client.js';
import type { AttemptInput } from './types.js';
import { sqlOf } from '../sql.js';
import { NOT_EVIDENCE_SQL_LIST } from '../sql-lists.js';

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

const TIER_NAME = /^[a-z][a-z0-9_-]{0,31}$/;

/** The exit tier as stored: `direct` when none is named. */
function exitTierOf(tier: unknown, index: number, input: AttemptInput): string {
  if (tier === undefined || tier === null || tier === DIRECT_TIER) return DIRECT_TIER;
  if (typeof tier !== 'string' || !TIER_NAME.test(tier)) throw invalid(index, 'exitTier is not a tier name', input);
  return tier;
}

/** The proxy as stored: masked whatever the caller passed, so a credential never reaches the attempt log. */
function exitProxyOf(proxy: unknown, index: number, input: AttemptInput): string | null {
  if (proxy === undefined || proxy === null || proxy === '') return null;
  if (typeof proxy !== 'string') throw invalid(index, 'exitProxy is not a string', input);
  return maskProxyUrl(proxy).slice(0, 300);
}

/** The longest error message an attempt keeps: enough for a cause chain, not a page someone put in an exception. */
export const ATTEMPT_ERROR_MESSAGE_MAX = 500;

/** The error message as stored: bounded, and any credentials in a URL it quotes (a proxy's) masked. */
function errorMessageOf(message: unknown, index: number, input: AttemptInput): string | null {
  if (message === undefined || message === null || message === '') return null;
  if (typeof message !== 'string') throw invalid(index, 'errorMessage is not a string', input);
  return redactCredentials(message).slice(0, ATTEMPT_ERROR_MESSAGE_MAX);
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
    error_message: errorMessageOf(input.errorMessage, index, input),
    http_status: intOrNull(input.httpStatus),
    response_headers: input.responseHeaders ?? null,
    duration_ms: intOrNull(input.durationMs),
    attempted_at: attemptedAt.toISOString(),
    selection_source: input.selectionSource ?? null,
    exit_tier: exitTierOf(input.exitTier, index, input),
    exit_proxy: exitProxyOf(input.exitProxy, index, input),
    heuristics,
  };
}

// One statement for the whole batch: ids are drawn from the sequence up front so heuristics can reference their
// attempt in the same statement (FK checks run at statement end), and the statement is atomic on its own.
// fetcher/success/attempted_at are copied onto each heuristic row for the covering index findBestFetcher reads; the
// fetcher there and in the rollups is the attempt's arm, attempt_arm(fetcher, exit_tier) (migration 20261129000100).
// $1 is the JSON array of toAttemptRow rows, $2 the heuristics' created_at; `o` (absent here) is the batched outcome
// statement's item an attempt belongs to (OutcomeStore.applyMany). The outcome statement (OutcomeStore)
// starts with the same CTEs, so a page's outcome and its attempts are one write.
//
// The rollups (migration 20261122000300) are kept here rather than by the triggers' refresh: each attempt is inserted
// with its rollup keys (as rollup_keys_of computes them: the heuristics whose type is in heuristic_rollup_types,
// none for a rate-limited attempt) and added to heuristic_rollups in the same statement; the
// transaction-local setting crawler.rollup_keyed names them, so the insert trigger on attempt_heuristics leaves them
// out of its refresh (migration 20261124000100) instead of recomputing every page's keys in a PL/pgSQL call.
// A statement using these CTEs must read ATTEMPT_ROLLUP_DONE, or Postgres skips the CTEs that are no writes.
export const ATTEMPT_CTES = `
input AS MATERIALIZED (
  SELECT nextval(pg_get_serial_sequence('fetcher_attempts', 'id')) AS id, x.*
  FROM (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(
      i int, link uuid, url text, fetcher text, success boolean, is_banned boolean, error_type text, error_message text,
      http_status int, response_headers jsonb, duration_ms int, attempted_at timestamptz, selection_source text,
      exit_tier text, exit_proxy text, heuristics jsonb, o int)
    ORDER BY i
  ) x
),
keyed AS MATERIALIZED (
  SELECT input.id, (
    SELECT array_agg(DISTINCT h.t || chr(31) || h.v COLLATE "C" ORDER BY h.t || chr(31) || h.v COLLATE "C")
    FROM jsonb_to_recordset(input.heuristics) AS h(t text, v text)
    JOIN heuristic_rollup_types AS rt ON rt.heuristic_type = h.t
    WHERE coalesce(input.error_type NOT IN (${NOT_EVIDENCE_SQL_LIST}), true) AND strpos(h.t || h.v, chr(30)) = 0 AND strpos(h.t || h.v, chr(31)) = 0
  ) AS keys
  FROM input
),
attempts AS (
  INSERT INTO fetcher_attempts (id, link, url, fetcher, success, is_banned, error_type, error_message, http_status,
    response_headers, duration_ms, attempted_at, selection_source, exit_tier, exit_proxy, rollup_keys)
  SELECT input.id, link, url, fetcher, success, is_banned, error_type, error_message, http_status,
    response_headers, duration_ms, attempted_at, selection_source, exit_tier, exit_proxy, keyed.keys
  FROM input JOIN keyed ON keyed.id = input.id
),
heuristics AS (
  INSERT INTO attempt_heuristics (attempt, heuristic_type, heuristic_value, importance_score, created_at,
    fetcher, success, attempted_at)
  SELECT input.id, h.t, h.v, h.s, $2::timestamptz, attempt_arm(input.fetcher, input.exit_tier), input.success, input.attempted_at
  FROM input CROSS JOIN LATERAL jsonb_to_recordset(input.heuristics) AS h(t text, v text, s float8)
),
rolled AS (
  -- rollup_apply's upsert (migration 20261124000100) for the new attempts, inline so the prepared statement plans it
  -- once (a SQL function is planned on every call): each subset of an attempt's keys, in its shard (id % 16).
  INSERT INTO heuristic_rollups AS r (subset_key, fetcher, shard, attempts, success_weight, max_attempted_at)
  SELECT s.subset_key, attempt_arm(input.fetcher, input.exit_tier), (input.id % 16)::smallint, count(*), sum(rollup_weight(input.success, input.attempted_at)),
         max(input.attempted_at)
  FROM input JOIN keyed ON keyed.id = input.id
  CROSS JOIN LATERAL (
    SELECT string_agg(u.k, chr(30) ORDER BY u.i) AS subset_key
    FROM generate_series(1, (1 << cardinality(keyed.keys)) - 1) AS m(mask)
    JOIN unnest(keyed.keys) WITH ORDINALITY AS u(k, i) ON (m.mask >> (u.i::int - 1)) & 1 = 1
    GROUP BY m.mask
  ) AS s
  WHERE cardinality(keyed.keys) BETWEEN 1 AND 16
  GROUP BY 1, 2, 3
  -- The order every rollup writer locks rows in, so concurrent writers never deadlock.
  ORDER BY 1, 2, 3
  ON CONFLICT (subset_key, fetcher, shard) DO UPDATE SET
    attempts = r.attempts + EXCLUDED.attempts,
    success_weight = CASE WHEN r.attempts + EXCLUDED.attempts = 0 THEN 0 ELSE r.success_weight + EXCLUDED.success_weight END,
    max_attempted_at = greatest(r.max_attempted_at, EXCLUDED.max_attempted_at)
),
keyed_mark AS (
  SELECT set_config('crawler.rollup_keyed', coalesce(string_agg(keyed.id::text, ','), ''), true) FROM keyed
)`;

/** Read by every statement built on ATTEMPT_CTES: a CTE that is not data-modifying runs only when referenced. */
export const ATTEMPT_ROLLUP_DONE = '(SELECT count(*) FROM keyed_mark)';

const LOG_ATTEMPTS_SQL = `
WITH ${ATTEMPT_CTES}
SELECT i, id FROM input WHERE ${ATTEMPT_ROLLUP_DONE} >= 0 ORDER BY i`;

/** Insert attempts and all their heuristics in one round trip; returns the new attempt ids in input order. */
export async function insertAttempts(prisma: PrismaClient, inputs: readonly AttemptInput[], now: Date): Promise<bigint[]> {
  if (inputs.length === 0) return [];
  const rows = inputs.map((input, i) => toAttemptRow(input, i, now));
  const out = await sqlOf(prisma).query<{ i: number; id: string | bigint }>(LOG_ATTEMPTS_SQL, [JSON.stringify(rows), now.toISOString()]);
  return out.map((r) => BigInt(r.id));
}
