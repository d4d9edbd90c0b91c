import { archivedResponseHeaders, canonicalFetcherName, silentLogger, systemClock, type Clock, type LinkStatus, type Logger } from '@crawler/core';
import type { PrismaClient } from '../client.js';
import { DB_ERROR_CODES, translateDbError, withDbErrors } from '../errors.js';
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
// `link.changed` when it is a change); the same body or a 304 stores no body, only the visit (and `link.unchanged` when
// asked). A stored version is a change when its text fingerprint differs from the previous version's, or, when
// either has none, always (its sha256 differs): bytes that differ only in markup (a CSRF token, a nonce) are a
// version but no change, for links.last_visit_changed (the adaptive schedule) and the events alike, and get
// `link.unchanged` when asked. The trigger applies the same rule to `link.changed`.
// $1 attempts, $2 now, $3 link change (JSON: a present key sets its column), $4 link id, $5 attempts made,
// $6 last attempt time, $7..$15 the page (prepareContentRow's params after the link; all null without a page),
// $16 a 304's visit (JSON, or null), $17 write link.unchanged events, $18 the page's text fingerprint.
const APPLY_OUTCOME_SQL = `
WITH ${ATTEMPT_CTES},
change AS (SELECT $3::jsonb AS p),
prev AS (SELECT id, sha256, text_sha256, version FROM fetched_content WHERE link = $4::uuid ORDER BY version DESC LIMIT 1),
visit AS (
  SELECT kind, kind = 'new' AND ((SELECT text_sha256 FROM prev) IS NULL OR $18::text IS NULL OR (SELECT text_sha256 FROM prev) <> $18::text) AS changed
  FROM (SELECT CASE
    WHEN $16::jsonb IS NOT NULL THEN CASE WHEN EXISTS (SELECT 1 FROM prev) THEN 'not_modified' END
    WHEN $7::bytea IS NULL THEN NULL
    WHEN $11::text = (SELECT sha256 FROM prev) THEN 'identical'
    ELSE 'new' END AS kind) k
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
      WHEN NOT EXISTS (SELECT 1 FROM prev) THEN NULL ELSE visit.changed END,
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
  INSERT INTO fetched_content (link, body, encoding, content_type, http_status, final_url, sha256, size_bytes, fetcher, fetched_at, response_headers, text_sha256)
  SELECT $4::uuid, $7::bytea, 'br', $8::text, $9::int, $10::text, $11::text, $12::int, $13::text, $14::timestamptz, $15::jsonb, $18::text
  FROM upd, visit WHERE visit.kind = 'new'
  RETURNING id, version
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
  UNION ALL
  -- A new version that is no change: the bytes' digests and the version stored.
  SELECT 'link.unchanged', $4::uuid, upd.url, upd.status, $13::text, prev.sha256, $11::text, saved.version
  FROM upd, saved, prev, visit WHERE $17::boolean AND NOT visit.changed
)
SELECT EXISTS (SELECT 1 FROM upd) AS updated,
  coalesce((SELECT status FROM upd), (SELECT status FROM links WHERE id = $4::uuid)) AS status,
  (SELECT id::text FROM saved) AS content_id,
  CASE WHEN EXISTS (SELECT 1 FROM upd) THEN (SELECT kind FROM visit) END AS visit_kind,
  ARRAY(SELECT id::text FROM input ORDER BY i) AS attempt_ids,
  ${ATTEMPT_ROLLUP_DONE} AS rolled`;

// The same write for many links in one statement (OutcomeStore.applyMany): one row per table and item, every table
// written by one multi-row insert or update. The items name distinct links (two writes of one link go in two
// statements). $1 every item's attempts (toAttemptRow rows carrying their item `o`), $2 now, $3 the items (JSON:
// o, link, p = link change, n = attempts made, la = last attempt time, the page's columns and bo/bl = its body's
// offset and length in $4, nm = a 304's visit, tsha = the page's text fingerprint), $4 the items' compressed bodies
// concatenated (bytea, sent binary),
// $5 write link.unchanged events. Items are sorted by link id, the order the links' rows are locked in.
const APPLY_OUTCOMES_SQL = `
WITH ${ATTEMPT_CTES},
item AS MATERIALIZED (
  SELECT r.o, r.link, r.p, r.n, r.la, r.ct, r.hs, r.fu, r.sha, r.sz, r.f, r.fa, r.rh, r.nm, r.tsha,
    CASE WHEN r.bl IS NOT NULL THEN substring($4::bytea FROM r.bo + 1 FOR r.bl) END AS body
  FROM jsonb_to_recordset($3::jsonb) AS r(o int, link uuid, p jsonb, n int, la timestamptz, bo int, bl int, ct text,
    hs int, fu text, sha text, sz int, f text, fa timestamptz, rh jsonb, nm jsonb, tsha text)
),
prev AS MATERIALIZED (
  SELECT item.o, pc.id, pc.sha256, pc.text_sha256, pc.version FROM item
  CROSS JOIN LATERAL (SELECT id, sha256, text_sha256, version FROM fetched_content WHERE link = item.link ORDER BY version DESC LIMIT 1) pc
),
visit AS MATERIALIZED (
  SELECT o, has_prev, kind, kind = 'new' AND (prev_tsha IS NULL OR tsha IS NULL OR prev_tsha <> tsha) AS changed
  FROM (SELECT item.o, prev.o IS NOT NULL AS has_prev, prev.text_sha256 AS prev_tsha, item.tsha, CASE
    WHEN item.nm IS NOT NULL THEN CASE WHEN prev.o IS NOT NULL THEN 'not_modified' END
    WHEN item.body IS NULL THEN NULL
    WHEN item.sha = prev.sha256 THEN 'identical'
    ELSE 'new' END AS kind
  FROM item LEFT JOIN prev ON prev.o = item.o) k
),
upd AS (
  UPDATE links SET
    status = coalesce(item.p->>'status', links.status),
    paused_until = CASE WHEN item.p ? 'pausedUntil' THEN (item.p->>'pausedUntil')::timestamptz ELSE links.paused_until END,
    risk_level = CASE WHEN item.p ? 'riskLevel' THEN (item.p->>'riskLevel')::int ELSE links.risk_level END,
    fetcher = CASE WHEN item.p ? 'fetcher' THEN item.p->>'fetcher' ELSE links.fetcher END,
    selection_source = CASE WHEN item.p ? 'selectionSource' THEN item.p->>'selectionSource' ELSE links.selection_source END,
    last_error_type = CASE WHEN item.p ? 'lastErrorType' THEN item.p->>'lastErrorType' ELSE links.last_error_type END,
    last_error = CASE WHEN item.p ? 'lastError' THEN item.p->>'lastError' ELSE links.last_error END,
    generation = CASE WHEN item.p ? 'generation' THEN (item.p->>'generation')::int ELSE links.generation END,
    last_visit_changed = CASE WHEN visit.kind IS NULL THEN links.last_visit_changed
      WHEN NOT visit.has_prev THEN NULL ELSE visit.changed END,
    attempt_count = links.attempt_count + item.n,
    last_attempt_at = coalesce(item.la, links.last_attempt_at),
    updated_at = now()
  FROM item JOIN visit ON visit.o = item.o
  WHERE links.id = item.link AND links.status NOT IN (${FINISHED_SQL_LIST})
  RETURNING item.o, links.id, links.status, links.url
),
counted AS (
  -- A finished link still counts attempts a late duplicate made: attempt_count stays the number of attempts logged.
  UPDATE links SET attempt_count = links.attempt_count + item.n, last_attempt_at = coalesce(item.la, links.last_attempt_at)
  FROM item WHERE links.id = item.link AND item.n > 0 AND NOT EXISTS (SELECT 1 FROM upd WHERE upd.o = item.o)
),
saved AS (
  INSERT INTO fetched_content (link, body, encoding, content_type, http_status, final_url, sha256, size_bytes, fetcher, fetched_at, response_headers, text_sha256)
  SELECT item.link, item.body, 'br', item.ct, item.hs, item.fu, item.sha, item.sz, item.f, item.fa, item.rh, item.tsha
  FROM upd JOIN item ON item.o = upd.o JOIN visit ON visit.o = item.o WHERE visit.kind = 'new'
  ORDER BY item.o
  RETURNING id, link, version
),
unchanged AS (
  INSERT INTO page_visits (link, content, kind, visited_at, fetcher, http_status, final_url, response_headers)
  SELECT item.link, prev.id, visit.kind,
    coalesce((item.nm->>'visitedAt')::timestamptz, item.fa), coalesce(item.nm->>'fetcher', item.f),
    coalesce((item.nm->>'httpStatus')::int, item.hs), coalesce(item.nm->>'finalUrl', item.fu),
    CASE WHEN item.nm IS NOT NULL THEN item.nm->'headers' ELSE item.rh END
  FROM upd JOIN item ON item.o = upd.o JOIN visit ON visit.o = item.o JOIN prev ON prev.o = item.o
  WHERE visit.kind IN ('not_modified', 'identical')
  ORDER BY item.o
  RETURNING link, fetcher
),
unchanged_event AS (
  INSERT INTO link_events (type, link, url, status, fetcher, old_sha256, new_sha256, version)
  SELECT 'link.unchanged', upd.id, upd.url, upd.status, e.fetcher, e.old_sha256, e.new_sha256, e.version
  FROM upd JOIN LATERAL (
    SELECT unchanged.fetcher, prev.sha256 AS old_sha256, prev.sha256 AS new_sha256, prev.version
    FROM unchanged JOIN prev ON prev.o = upd.o WHERE unchanged.link = upd.id
    UNION ALL
    -- A new version that is no change: the bytes' digests and the version stored.
    SELECT item.f, prev.sha256, item.sha, saved.version
    FROM saved JOIN item ON item.o = upd.o JOIN prev ON prev.o = upd.o JOIN visit ON visit.o = upd.o
    WHERE saved.link = upd.id AND NOT visit.changed
  ) e ON true
  WHERE $5::boolean
  ORDER BY upd.o
)
SELECT item.o, upd.o IS NOT NULL AS updated,
  coalesce(upd.status, (SELECT status FROM links WHERE id = item.link)) AS status,
  (SELECT id::text FROM saved WHERE saved.link = item.link) AS content_id,
  CASE WHEN upd.o IS NOT NULL THEN visit.kind END AS visit_kind,
  ARRAY(SELECT id::text FROM input WHERE input.o = item.o ORDER BY i) AS attempt_ids,
  ${ATTEMPT_ROLLUP_DONE} AS rolled
FROM item JOIN visit ON visit.o = item.o LEFT JOIN upd ON upd.o = item.o
ORDER BY item.o`;

const NO_PAGE = [null, null, null, null, null, null, null, null, null];

/** A row of the outcome statements. */
interface OutcomeRow {
  updated: boolean;
  status: string | null;
  content_id: string | null;
  visit_kind: VisitKind | null;
  attempt_ids: string[];
}

function toApplied(out: OutcomeRow | undefined): AppliedOutcome {
  return {
    linkUpdated: out?.updated ?? false,
    status: out?.status ?? null,
    contentId: out?.content_id ? BigInt(out.content_id) : null,
    visit: out?.visit_kind ?? null,
    attemptIds: (out?.attempt_ids ?? []).map((id) => BigInt(id)),
  };
}

/** One write, validated and compressed, as the outcome statements take it. */
interface PreparedItem {
  write: OutcomeWrite;
  /** Its index in the batch. */
  o: number;
  rows: Record<string, unknown>[];
  last: Date | null;
  page: { body: Uint8Array; ct: string | null; hs: number; fu: string; sha: string; sz: number; f: string; fa: Date; rh: Record<string, string> | null; tsha: string | null } | null;
  nm: Record<string, unknown> | null;
}

/** Validate and compress one write; `base` numbers its attempts after the batch's earlier ones. Throws typed errors. */
async function prepareItem(write: OutcomeWrite, now: Date, o: number, base: number): Promise<PreparedItem> {
  const rows = write.attempts.map((a, i) => ({ ...toAttemptRow(a, base + i, now), o }));
  let last: Date | null = null;
  for (const a of write.attempts) {
    const at = a.attemptedAt ?? now;
    if (!last || at > last) last = at;
  }
  let page: PreparedItem['page'] = null;
  if (write.page) {
    const { params, result } = await prepareContentRow(write.page, now);
    page = {
      body: params[1] as Uint8Array, ct: result.contentType, hs: result.httpStatus, fu: result.finalUrl, sha: result.sha256, sz: result.sizeBytes,
      f: result.fetcher, fa: result.fetchedAt, rh: (result.headers as Record<string, string> | null) ?? null, tsha: result.textSha256,
    };
  }
  const nm = !write.page && write.notModified
    ? {
      fetcher: canonicalFetcherName(write.notModified.fetcher), httpStatus: write.notModified.httpStatus, finalUrl: write.notModified.finalUrl,
      headers: write.notModified.headers ? archivedResponseHeaders(write.notModified.headers) : null, visitedAt: now.toISOString(),
    }
    : null;
  return { write, o, rows, last, page, nm };
}

/**
 * Writes a fetch job's outcome ({@link OutcomeWrite}): one statement, and one round trip, when no hook is
 * registered; otherwise that statement and the hooks in one transaction.
 */
export class OutcomeStore {
  readonly #prisma: PrismaClient;
  readonly #clock: Clock;
  readonly #hooks: readonly OutcomeHook[];
  readonly #unchangedEvents: boolean;
  readonly #logger: Logger;

  constructor(deps: OutcomeStoreDeps) {
    this.#logger = deps.logger ?? silentLogger;
    this.#unchangedEvents = deps.unchangedEvents ?? false;
    this.#prisma = deps.prisma;
    this.#clock = deps.clock ?? systemClock;
    this.#hooks = deps.hooks ?? [];
  }

  /** Write `write` atomically; see {@link OutcomeWrite} for what is written when. */
  async apply(write: OutcomeWrite): Promise<AppliedOutcome> {
    const now = this.#clock.now();
    const item = await prepareItem(write, now, 0, 0);
    const notModified = item.nm ? JSON.stringify(item.nm) : null;
    const page = item.page
      ? [item.page.body, item.page.ct, item.page.hs, item.page.fu, item.page.sha, item.page.sz, item.page.f, item.page.fa, item.page.rh ? JSON.stringify(item.page.rh) : null]
      : NO_PAGE;
    const params = [JSON.stringify(item.rows), now.toISOString(), JSON.stringify(write.link), write.linkId, item.rows.length, item.last, ...page, notModified, this.#unchangedEvents, item.page?.tsha ?? null];
    const hooks = [...this.#hooks, ...(write.hooks ?? [])];
    const run = async (sql: SqlClient): Promise<AppliedOutcome> => {
      const [out] = await sql.query<OutcomeRow>(APPLY_OUTCOME_SQL, params);
      const applied = toApplied(out);
      for (const hook of hooks) await hook(sql, write, applied);
      return applied;
    };
    return withDbErrors('apply fetch outcome', () => (hooks.length === 0 ? run(sqlOf(this.#prisma)) : withTransaction(this.#prisma, run)));
  }

  /**
   * Write many outcomes at once: one statement for all of them (one multi-row insert or update per table), and with
   * hooks, that statement and every write's hooks in one transaction. Each write gets its own result, as
   * {@link apply} would give it: a write that cannot be prepared (an invalid attempt) fails alone, and when the batch
   * fails as a whole (a deadlock, a constraint one write breaks) every write is tried again on its own.
   */
  async applyMany(writes: readonly OutcomeWrite[]): Promise<PromiseSettledResult<AppliedOutcome>[]> {
    const results: PromiseSettledResult<AppliedOutcome>[] = new Array(writes.length);
    const one = async (i: number): Promise<void> => {
      try {
        results[i] = { status: 'fulfilled', value: await this.apply(writes[i]!) };
      } catch (reason) {
        results[i] = { status: 'rejected', reason };
      }
    };
    const distinct = new Set(writes.map((w) => w.linkId)).size === writes.length;
    if (writes.length <= 1 || !distinct) {
      for (let i = 0; i < writes.length; i++) await one(i);
      return results;
    }
    const now = this.#clock.now();
    // Sorted by link id: concurrent batches lock the links' rows in one order.
    const order = writes.map((_, i) => i).sort((a, b) => (writes[a]!.linkId < writes[b]!.linkId ? -1 : writes[a]!.linkId > writes[b]!.linkId ? 1 : 0));
    const items: PreparedItem[] = [];
    const index: number[] = [];
    let base = 0;
    let bodyBytes = 0;
    for (const i of order) {
      try {
        const item = await prepareItem(writes[i]!, now, items.length, base);
        items.push(item);
        index.push(i);
        base += item.rows.length;
        if (item.page) bodyBytes += item.page.body.byteLength;
      } catch (reason) {
        results[i] = { status: 'rejected', reason };
      }
    }
    if (items.length <= 1) {
      for (const i of index) await one(i);
      return results;
    }
    const bodies = Buffer.allocUnsafe(bodyBytes);
    let offset = 0;
    const json = items.map((item) => {
      const p = item.page;
      let bo: number | null = null;
      if (p) {
        bodies.set(p.body, offset);
        bo = offset;
        offset += p.body.byteLength;
      }
      return {
        o: item.o, link: item.write.linkId, p: item.write.link, n: item.rows.length, la: item.last,
        ...(p ? { bo, bl: p.body.byteLength, ct: p.ct, hs: p.hs, fu: p.fu, sha: p.sha, sz: p.sz, f: p.f, fa: p.fa, rh: p.rh, tsha: p.tsha } : {}),
        nm: item.nm,
      };
    });
    const params = [JSON.stringify(items.flatMap((item) => item.rows)), now.toISOString(), JSON.stringify(json), bodies, this.#unchangedEvents];
    const withHooks = this.#hooks.length > 0 || items.some((item) => (item.write.hooks?.length ?? 0) > 0);
    const run = async (sql: SqlClient): Promise<AppliedOutcome[]> => {
      const out = await sql.query<OutcomeRow & { o: number }>(APPLY_OUTCOMES_SQL, params);
      const applied = items.map(() => toApplied(undefined));
      for (const row of out) applied[row.o] = toApplied(row);
      for (const [k, item] of items.entries()) {
        for (const hook of [...this.#hooks, ...(item.write.hooks ?? [])]) await hook(sql, item.write, applied[k]!);
      }
      return applied;
    };
    try {
      const applied = await (withHooks ? withTransaction(this.#prisma, run) : run(sqlOf(this.#prisma)));
      for (const [k, i] of index.entries()) results[i] = { status: 'fulfilled', value: applied[k]! };
    } catch (err) {
      // Postgres cannot take any write now (away, read-only after a failover): each write on its own would meet the
      // same, one round trip and one warning per page; each fails with the batch's error, which its job rides out.
      const translated = translateDbError(err, 'write fetch outcomes');
      if (translated.code === DB_ERROR_CODES.unavailable) {
        for (const i of index) results[i] = { status: 'rejected', reason: translated };
        return results;
      }
      // Nothing of the batch was written (one statement, or one transaction): each write on its own, so only the
      // write at fault fails.
      this.#logger.warn({ err, writes: index.length }, 'outcome batch failed: writing its outcomes one by one');
      for (const i of index) await one(i);
    }
    return results;
  }

}
