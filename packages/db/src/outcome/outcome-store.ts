import { archivedResponseHeaders, canonicalFetcherName, systemClock, type Clock, type LinkStatus } from '@crawler/core';
import type { PrismaClient } from '../client.js';
import { withDbErrors } from '../errors.js';
import { withTransaction, sqlOf, type SqlClient } from '../sql.js';
import { ATTEMPT_CTES, ATTEMPT_ROLLUP_DONE, toAttemptRow } from '../attempts/log-attempts.js';
import { prepareContentRow, type ContentInput } from '../content/content-store.js';
import type { AttemptInput, StoreDeps } from '../attempts/types.js';
import type { LinkChange } from '../links/link-store.js';
import { FINISHED_SQL_LIST } from '../sql-lists.js';

/** A fetch outcome's change to its link: the attempt count and time come from the attempts the write logs. */
export type OutcomeLinkChange = Omit<LinkChange, 'attemptsMade' | 'lastAttemptAt'>;


/**
 * Everything one fetch job learned about a link, written at once: the attempts it made (with their heuristics), the
 * link's new state and, on success, the page. After a crash the attempt log and the links agree, because there is
 * no moment where one is written and the other is not.
 *
 * Extension point: `hooks` (here, or on the {@link OutcomeStore} for every write) add rows in the same transaction,
 * after the outcome statement, seeing what it did. An outbox event when a link reaches done/failed, or the links
 * discovered on a stored page, belong there: they commit with the outcome or not at all.
 */
export interface OutcomeWrite {
  linkId: string;
  /** The attempts this job made, in order; they are logged even when the link was already finished. */
  attempts: readonly AttemptInput[];
  /** Applied only while the link is unfinished (not done or failed): a duplicate job cannot reopen or redo a link. */
  link: OutcomeLinkChange;
  /** The page to store; stored only when `link` was applied, so a link never gets two pages from racing jobs. */
  page?: ContentInput;
  /**
   * The visit answered 304 Not Modified to a conditional request: no body, the link's latest version is confirmed
   * (a `not_modified` visit). Ignored when `page` is given.
   */
  notModified?: NotModifiedVisit;
  /** Extra statements for this write only, run in the outcome's transaction after the store's own hooks. */
  hooks?: readonly OutcomeHook[];
}

/** A 304 answer to a conditional request, as the visit log keeps it. */
export interface NotModifiedVisit {
  fetcher: string;
  /** 304. */
  httpStatus: number;
  finalUrl: string;
  /** The 304's headers (lower-case names); stored through archivedResponseHeaders, so never cookies. */
  headers?: Record<string, string> | null;
}

/** What a successful visit did to the link's versions. */
export type VisitKind = 'new' | 'not_modified' | 'identical';

/** What the outcome statement did. */
export interface AppliedOutcome {
  /** The link was unfinished and took `link` (and the page). False: finished already, or gone. */
  linkUpdated: boolean;
  /** The link's status after the write; null when the link does not exist. */
  status: string | null;
  /** The stored page's id, when one was stored. */
  contentId: bigint | null;
  /** The visit this write recorded (a page or a 304 applied to the link), or null. */
  visit: VisitKind | null;
  /** The logged attempts' ids, in input order. */
  attemptIds: bigint[];
}

/**
 * A statement (or several) that must commit with an outcome. `tx` runs inside the outcome's transaction; throwing
 * rolls the whole outcome back (the job is retried).
 */
export type OutcomeHook = (tx: SqlClient, write: OutcomeWrite, applied: AppliedOutcome) => Promise<void>;

/** Options for {@link OutcomeStore}. */
export interface OutcomeStoreDeps extends StoreDeps {
  /** Hooks run for every write, in the outcome's transaction. @defaultValue none: one autocommit statement per outcome */
  hooks?: readonly OutcomeHook[];
  /** Write a `link.unchanged` event for every visit that found the page unchanged. @defaultValue false */
  unchangedEvents?: boolean;
}

// One statement: the attempts and their heuristics (as AttemptStore.logAttempts writes them), the link's change
// while it is unfinished, or else only its attempt count, and the visit when the change applied: a page whose sha256
// differs from the link's latest version is stored (a trigger numbers it, logs the visit and, from version 2 on, writes
// `link.changed`); the same body or a 304 stores no body, only the visit (and `link.unchanged` when asked).
// $1 attempts, $2 now, $3 link change (JSON: a present key sets its column), $4 link id, $5 attempts made,
// $6 last attempt time, $7..$15 the page (prepareContentRow's params after the link; all null without a page),
// $16 a 304's visit (JSON, or null), $17 write link.unchanged events.
const APPLY_OUTCOME_SQL = `
WITH ${ATTEMPT_CTES},
change AS (SELECT $3::jsonb AS p),
prev AS (SELECT id, sha256, version FROM fetched_content WHERE link = $4::uuid ORDER BY version DESC LIMIT 1),
visit AS (
  SELECT CASE
    WHEN $16::jsonb IS NOT NULL THEN CASE WHEN EXISTS (SELECT 1 FROM prev) THEN 'not_modified' END
    WHEN $7::bytea IS NULL THEN NULL
    WHEN $11::text = (SELECT sha256 FROM prev) THEN 'identical'
    ELSE 'new' END AS kind
),
upd AS (
  UPDATE links SET
    status = coalesce(p->>'status', status),
    paused_until = CASE WHEN p ? 'pausedUntil' THEN (p->>'pausedUntil')::timestamptz ELSE paused_until END,
    risk_level = CASE WHEN p ? 'riskLevel' THEN (p->>'riskLevel')::int ELSE risk_level END,
    fetcher = CASE WHEN p ? 'fetcher' THEN p->>'fetcher' ELSE fetcher END,
    selection_source = CASE WHEN p ? 'selectionSource' THEN p->>'selectionSource' ELSE selection_source END,
    last_error_type = CASE WHEN p ? 'lastErrorType' THEN p->>'lastErrorType' ELSE last_error_type END,
    last_error = CASE WHEN p ? 'lastError' THEN p->>'lastError' ELSE last_error END,
    generation = CASE WHEN p ? 'generation' THEN (p->>'generation')::int ELSE generation END,
    last_visit_changed = CASE WHEN visit.kind IS NULL THEN last_visit_changed
      WHEN NOT EXISTS (SELECT 1 FROM prev) THEN NULL ELSE visit.kind = 'new' END,
    attempt_count = attempt_count + $5::int,
    last_attempt_at = coalesce($6::timestamptz, last_attempt_at),
    updated_at = now()
  FROM change, visit
  WHERE id = $4::uuid AND status NOT IN (${FINISHED_SQL_LIST})
  RETURNING links.status, links.url
),
counted AS (
  -- A finished link still counts attempts a late duplicate made: attempt_count stays the number of attempts logged.
  UPDATE links SET attempt_count = attempt_count + $5::int, last_attempt_at = coalesce($6::timestamptz, last_attempt_at)
  WHERE id = $4::uuid AND $5::int > 0 AND NOT EXISTS (SELECT 1 FROM upd)
),
saved AS (
  INSERT INTO fetched_content (link, body, encoding, content_type, http_status, final_url, sha256, size_bytes, fetcher, fetched_at, response_headers)
  SELECT $4::uuid, $7::bytea, 'br', $8::text, $9::int, $10::text, $11::text, $12::int, $13::text, $14::timestamptz, $15::jsonb
  FROM upd, visit WHERE visit.kind = 'new'
  RETURNING id
),
unchanged AS (
  INSERT INTO page_visits (link, content, kind, visited_at, fetcher, http_status, final_url, response_headers)
  SELECT $4::uuid, prev.id, visit.kind,
    coalesce(($16::jsonb->>'visitedAt')::timestamptz, $14::timestamptz), coalesce($16::jsonb->>'fetcher', $13::text),
    coalesce(($16::jsonb->>'httpStatus')::int, $9::int), coalesce($16::jsonb->>'finalUrl', $10::text),
    CASE WHEN $16::jsonb IS NOT NULL THEN $16::jsonb->'headers' ELSE $15::jsonb END
  FROM upd, visit, prev WHERE visit.kind IN ('not_modified', 'identical')
  RETURNING fetcher
),
unchanged_event AS (
  INSERT INTO link_events (type, link, url, status, fetcher, old_sha256, new_sha256, version)
  SELECT 'link.unchanged', $4::uuid, upd.url, upd.status, unchanged.fetcher, prev.sha256, prev.sha256, prev.version
  FROM upd, unchanged, prev WHERE $17::boolean
)
SELECT EXISTS (SELECT 1 FROM upd) AS updated,
  coalesce((SELECT status FROM upd), (SELECT status FROM links WHERE id = $4::uuid)) AS status,
  (SELECT id::text FROM saved) AS content_id,
  CASE WHEN EXISTS (SELECT 1 FROM upd) THEN (SELECT kind FROM visit) END AS visit_kind,
  ARRAY(SELECT id::text FROM input ORDER BY i) AS attempt_ids,
  ${ATTEMPT_ROLLUP_DONE} AS rolled`;

const NO_PAGE = [null, null, null, null, null, null, null, null, null];

/**
 * Writes a fetch job's outcome ({@link OutcomeWrite}): one statement, and one round trip, when no hook is
 * registered; otherwise that statement and the hooks in one transaction.
 */
export class OutcomeStore {
  readonly #prisma: PrismaClient;
  readonly #clock: Clock;
  readonly #hooks: readonly OutcomeHook[];
  readonly #unchangedEvents: boolean;

  constructor(deps: OutcomeStoreDeps) {
    this.#unchangedEvents = deps.unchangedEvents ?? false;
    this.#prisma = deps.prisma;
    this.#clock = deps.clock ?? systemClock;
    this.#hooks = deps.hooks ?? [];
  }

  /** Write `write` atomically; see {@link OutcomeWrite} for what is written when. */
  async apply(write: OutcomeWrite): Promise<AppliedOutcome> {
    const now = this.#clock.now();
    const rows = write.attempts.map((a, i) => toAttemptRow(a, i, now));
    let last: Date | null = null;
    for (const a of write.attempts) {
      const at = a.attemptedAt ?? now;
      if (!last || at > last) last = at;
    }
    const page = write.page ? (await prepareContentRow(write.page, now)).params.slice(1) : NO_PAGE;
    const notModified = !write.page && write.notModified
      ? JSON.stringify({
        fetcher: canonicalFetcherName(write.notModified.fetcher), httpStatus: write.notModified.httpStatus, finalUrl: write.notModified.finalUrl,
        headers: write.notModified.headers ? archivedResponseHeaders(write.notModified.headers) : null, visitedAt: now.toISOString(),
      })
      : null;
    const params = [JSON.stringify(rows), now.toISOString(), JSON.stringify(write.link), write.linkId, rows.length, last, ...page, notModified, this.#unchangedEvents];
    const hooks = [...this.#hooks, ...(write.hooks ?? [])];
    const run = async (sql: SqlClient): Promise<AppliedOutcome> => {
      const [out] = await sql.query<{ updated: boolean; status: string | null; content_id: string | null; visit_kind: VisitKind | null; attempt_ids: string[] }>(APPLY_OUTCOME_SQL, params);
      const applied: AppliedOutcome = {
        linkUpdated: out?.updated ?? false,
        status: out?.status ?? null,
        contentId: out?.content_id ? BigInt(out.content_id) : null,
        visit: out?.visit_kind ?? null,
        attemptIds: (out?.attempt_ids ?? []).map((id) => BigInt(id)),
      };
      for (const hook of hooks) await hook(sql, write, applied);
      return applied;
    };
    return withDbErrors('apply fetch outcome', () => (hooks.length === 0 ? run(sqlOf(this.#prisma)) : withTransaction(this.#prisma, run)));
  }
}
