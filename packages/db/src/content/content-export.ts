import { promisify } from 'node:util';
import { brotliDecompress, gunzip } from 'node:zlib';
import type { PrismaClient } from '../client.js';
import { CrawlerError } from '@crawler/core';
import { DB_ERROR_CODES, withDbErrors } from '../errors.js';
import { sqlOf } from '../sql.js';
import { IN_PROGRESS_SQL_LIST } from '../sql-lists.js';
import { cursorSnapshot, cursorTimeline, type ExportCursor } from './export-cursor.js';

const snapshotOf = (cursor: ExportCursor | null | undefined): string | null => (cursor ? cursorSnapshot(cursor) : null);
const timelineOf = (cursor: ExportCursor | null | undefined): number | null => (cursor ? cursorTimeline(cursor) : null);

const decompressBr = promisify(brotliDecompress);
const decompressGzip = promisify(gunzip);

/** Which stored pages an export reads. */
export interface ContentExportFilter {
  /** Pages fetched at or after this instant. */
  since?: Date | null;
  /**
   * Only pages whose link is in this status (`done` for pages still current). A link being fetched again (queued,
   * routing, fetching or paused after a finished visit) also matches the status its last visit ended in.
   */
  linkStatus?: string | null;
  /** Only pages of this domain or its subdomains (a name, not a pattern: `_` is no wildcard). */
  domain?: string | null;
  /**
   * Only the latest version of each page (with `since`: the pages whose latest version is newer than it). False: every
   * stored version. @defaultValue false
   */
  latestOnly?: boolean;
  /**
   * Resume after an earlier export: only rows committed after the snapshot that export covered (its `upTo`), whatever
   * their ids or fetch times. A row that committed late, with an id or a fetch time below what that export read, is
   * still in this one.
   */
  after?: ExportCursor | null;
  /**
   * Only rows committed before this snapshot ({@link currentExportCursor}, taken when the export starts): what
   * commits while it runs is left to the export that resumes from it, so no row is in both.
   */
  upTo?: ExportCursor | null;
}

/** Options for {@link iterateContent}. */
export interface IterateContentOptions extends ContentExportFilter {
  /** Page ids read per keyset step (ids and sizes only, no bodies). @defaultValue 1000 */
  pageSize?: number;
  /** Compressed bytes of bodies fetched per round trip; a bigger page still comes alone. @defaultValue 8 MiB */
  maxBatchBytes?: number;
}

/** One stored page with its link, body decompressed. */
export interface ExportedPage {
  id: bigint;
  linkId: string;
  /** The link's normalized URL. */
  url: string;
  linkStatus: string;
  finalUrl: string;
  httpStatus: number;
  /** Stored MIME type (no parameters). */
  contentType: string | null;
  /** Response headers as fetched, cookies excepted; null for pages stored before headers were kept. */
  headers: Record<string, string> | null;
  fetcher: string;
  fetchedAt: Date;
  /** sha256 hex of the body. */
  sha256: string;
  sizeBytes: number;
  /** 1, 2, … per link in fetch order. */
  version: number;
  body: Uint8Array;
}

// Ids and sizes only: the keyset step never drags bodies along, so a step costs the same whatever the pages weigh.
const IDS_SQL = `
SELECT c.id::text AS id, octet_length(c.body) AS stored
FROM fetched_content c JOIN links l ON l.id = c.link
WHERE c.id > $1::bigint
  AND ($2::timestamptz IS NULL OR c.fetched_at >= $2::timestamptz)
  AND ($3::text IS NULL OR l.status = $3::text OR (l.status IN (${IN_PROGRESS_SQL_LIST}) AND l.settled_status = $3::text))
  AND ($4::text IS NULL OR l.domain = $4::text OR right(l.domain, length($4::text) + 1) = '.' || $4::text)
  AND (NOT $6::boolean OR NOT EXISTS (SELECT 1 FROM fetched_content n WHERE n.link = c.link AND n.version > c.version))
  AND ($7::pg_snapshot IS NULL OR NOT pg_visible_in_snapshot(c.xact, $7::pg_snapshot) OR c.tli > $9::int)
  AND ($8::pg_snapshot IS NULL OR pg_visible_in_snapshot(c.xact, $8::pg_snapshot))
ORDER BY c.id
LIMIT $5::int`;

function afterStartSql(table: string): string {
  return `SELECT (LEAST(
    (SELECT min(id + 0) FROM ${table} WHERE xact >= pg_snapshot_xmin($1::pg_snapshot)),
    CASE WHEN $2::int IS NOT NULL THEN (SELECT min(id + 0) FROM ${table} WHERE tli > $2::int) END
  ) - 1)::text AS id`;
}

// Where a `since` walk starts: no page before the first one fetched at or after it can match, so the keyset walk
// starts there instead of reading every older page through the filter (idx_fetched_content_fetched_at, index only).
// `id + 0`: a bare min(id) is planned as a walk up the primary key until a row matches, the very scan of every older
// page this avoids (recent pages are the last ids, not spread through them as the planner assumes).
export const CONTENT_START_SQL = `SELECT (min(id + 0) - 1)::text AS id FROM fetched_content WHERE fetched_at >= $1::timestamptz`;

// Where an `after` walk starts: a row its snapshot did not see was written by a transaction at or after the
// snapshot's xmin, whatever its id (idx_fetched_content_xact, index only), or on a later timeline than the cursor's
// (idx_fetched_content_tli).
export const CONTENT_AFTER_START_SQL = afterStartSql('fetched_content');

const ROWS_SQL = `
SELECT c.id::text AS id, c.link::text AS "linkId", l.url, l.status AS "linkStatus", c.final_url AS "finalUrl",
  c.http_status AS "httpStatus", c.content_type AS "contentType", c.response_headers AS headers, c.fetcher,
  c.fetched_at AS "fetchedAt", c.sha256, c.size_bytes AS "sizeBytes", c.version, c.encoding, c.body
FROM fetched_content c JOIN links l ON l.id = c.link
WHERE c.id = ANY($1::bigint[])
ORDER BY c.id`;

const COUNT_SQL = `
SELECT count(*)::int AS n
FROM fetched_content c JOIN links l ON l.id = c.link
WHERE ($1::timestamptz IS NULL OR c.fetched_at >= $1::timestamptz)
  AND ($2::text IS NULL OR l.status = $2::text OR (l.status IN (${IN_PROGRESS_SQL_LIST}) AND l.settled_status = $2::text))
  AND ($3::text IS NULL OR l.domain = $3::text OR right(l.domain, length($3::text) + 1) = '.' || $3::text)
  AND (NOT $4::boolean OR NOT EXISTS (SELECT 1 FROM fetched_content n WHERE n.link = c.link AND n.version > c.version))
  AND ($5::pg_snapshot IS NULL OR NOT pg_visible_in_snapshot(c.xact, $5::pg_snapshot) OR c.tli > $7::int)
  AND ($6::pg_snapshot IS NULL OR pg_visible_in_snapshot(c.xact, $6::pg_snapshot))`;

interface Row extends Omit<ExportedPage, 'id' | 'body'> {
  id: string;
  encoding: string;
  body: Buffer;
}

async function decode(row: Row): Promise<ExportedPage> {
  const { encoding, body: stored, id, ...rest } = row;
  let body: Buffer;
  try {
    body = encoding === 'br' ? await decompressBr(stored) : encoding === 'gzip' ? await decompressGzip(stored) : stored;
  } catch (err) {
    // The export stops at it rather than pass over it (its cursor would then be past the page for good): say which.
    throw new CrawlerError(
      DB_ERROR_CODES.other,
      `stored page ${id} (link ${row.linkId}, ${row.url}, version ${row.version}) cannot be decompressed (${encoding}: ${(err as Error).message}): ` +
        `fetch the page again or delete that version (DELETE FROM fetched_content WHERE id = ${id}), then export again`,
      { cause: err },
    );
  }
  return { ...rest, id: BigInt(id), body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength) };
}

/** How many stored pages match `filter` (the export's progress total). */
export async function countContent(prisma: PrismaClient, filter: ContentExportFilter = {}): Promise<number> {
  const [row] = await withDbErrors('count content', () =>
    sqlOf(prisma).query<{ n: number }>(COUNT_SQL, [filter.since ?? null, filter.linkStatus ?? null, filter.domain ?? null, filter.latestOnly ?? false, snapshotOf(filter.after), snapshotOf(filter.upTo), timelineOf(filter.after)]),
  );
  return row?.n ?? 0;
}

/**
 * Where a keyset walk starts: past every row that cannot match `since` or `after` (each start is the id below the
 * first row that can match it, so the later of the two), or null when nothing can match.
 */
async function walkStart(prisma: PrismaClient, filter: ContentExportFilter, sinceSql: string, afterSql: string, what: string): Promise<string | null> {
  const sql = sqlOf(prisma);
  let after = 0n;
  for (const [value, text] of [[filter.since, sinceSql], [filter.after, afterSql]] as const) {
    if (!value) continue;
    const args = typeof value === 'string' ? [cursorSnapshot(value), cursorTimeline(value)] : [value];
    const [start] = await withDbErrors(`export ${what} start`, () => sql.query<{ id: string | null }>(text, args));
    if (!start?.id) return null;
    if (BigInt(start.id) > after) after = BigInt(start.id);
  }
  return after.toString();
}

/**
 * Every stored page matching the filter, in id order, in constant memory: keyset pagination over fetched_content's
 * primary key (never an offset, never the whole table), bodies fetched in batches of at most `maxBatchBytes`
 * compressed and handed out one page at a time. Without `upTo`, pages stored while it runs are included when their
 * id is still ahead of the walk.
 */
export async function* iterateContent(prisma: PrismaClient, options: IterateContentOptions = {}): AsyncGenerator<ExportedPage> {
  const sql = sqlOf(prisma);
  const pageSize = options.pageSize ?? 1_000;
  const maxBatchBytes = options.maxBatchBytes ?? 8 * 1024 * 1024;
  let after = await walkStart(prisma, options, CONTENT_START_SQL, CONTENT_AFTER_START_SQL, 'content');
  if (after === null) return;
  for (;;) {
    const ids = await withDbErrors('export content ids', () =>
      sql.query<{ id: string; stored: number }>(IDS_SQL, [
        after, options.since ?? null, options.linkStatus ?? null, options.domain ?? null, pageSize, options.latestOnly ?? false, snapshotOf(options.after), snapshotOf(options.upTo),
        timelineOf(options.after),
      ]),
    );
    if (ids.length === 0) return;
    let i = 0;
    while (i < ids.length) {
      const batch: string[] = [];
      let bytes = 0;
      while (i < ids.length && (batch.length === 0 || bytes + ids[i]!.stored <= maxBatchBytes)) {
        bytes += ids[i]!.stored;
        batch.push(ids[i++]!.id);
      }
      const rows = await withDbErrors('export content', () => sql.query<Row>(ROWS_SQL, [batch]));
      // A page deleted between the two reads is simply not exported.
      for (const row of rows) yield await decode(row);
    }
    after = ids[ids.length - 1]!.id;
    if (ids.length < pageSize) return;
  }
}

/** A visit that found the page unchanged, with the stored version it confirmed (what a WARC revisit record points at). */
export interface ExportedRevisit {
  visitId: bigint;
  /** `not_modified`: a 304 to a conditional request; `identical`: a 200 with the same body. */
  kind: 'not_modified' | 'identical';
  linkId: string;
  url: string;
  linkStatus: string;
  finalUrl: string;
  httpStatus: number;
  /** This visit's response headers (cookies excepted); null when not kept. */
  headers: Record<string, string> | null;
  fetcher: string;
  visitedAt: Date;
  /** The version the visit confirmed. */
  refersTo: { contentId: bigint; version: number; finalUrl: string; fetchedAt: Date; sha256: string };
}

/** One successful visit: a new version (with its body) or an unchanged revisit. */
export type ExportedVisit = { kind: 'new'; page: ExportedPage } | { kind: 'revisit'; revisit: ExportedRevisit };

const VISIT_IDS_SQL = `
SELECT v.id::text AS id, v.kind, v.content::text AS content, CASE WHEN v.kind = 'new' THEN octet_length(c.body) ELSE 0 END AS stored
FROM page_visits v JOIN links l ON l.id = v.link JOIN fetched_content c ON c.id = v.content
WHERE v.id > $1::bigint
  AND ($2::timestamptz IS NULL OR v.visited_at >= $2::timestamptz)
  AND ($3::text IS NULL OR l.status = $3::text OR (l.status IN (${IN_PROGRESS_SQL_LIST}) AND l.settled_status = $3::text))
  AND ($4::text IS NULL OR l.domain = $4::text OR right(l.domain, length($4::text) + 1) = '.' || $4::text)
  AND ($6::pg_snapshot IS NULL OR NOT pg_visible_in_snapshot(v.xact, $6::pg_snapshot) OR v.tli > $8::int)
  AND ($7::pg_snapshot IS NULL OR pg_visible_in_snapshot(v.xact, $7::pg_snapshot))
ORDER BY v.id
LIMIT $5::int`;

// As CONTENT_START_SQL, for visits (idx_page_visits_time).
export const VISITS_START_SQL = `SELECT (min(id + 0) - 1)::text AS id FROM page_visits WHERE visited_at >= $1::timestamptz`;

// As CONTENT_AFTER_START_SQL, for visits (idx_page_visits_xact, idx_page_visits_tli).
export const VISITS_AFTER_START_SQL = afterStartSql('page_visits');

const REVISITS_SQL = `
SELECT v.id::text AS id, v.kind, v.link::text AS "linkId", l.url, l.status AS "linkStatus", v.final_url AS "finalUrl",
  v.http_status AS "httpStatus", v.response_headers AS headers, v.fetcher, v.visited_at AS "visitedAt",
  c.id::text AS "refId", c.version AS "refVersion", c.final_url AS "refUrl", c.fetched_at AS "refDate", c.sha256 AS "refSha256"
FROM page_visits v JOIN links l ON l.id = v.link JOIN fetched_content c ON c.id = v.content
WHERE v.id = ANY($1::bigint[])`;

const COUNT_VISITS_SQL = `
SELECT count(*)::int AS n
FROM page_visits v JOIN links l ON l.id = v.link
WHERE ($1::timestamptz IS NULL OR v.visited_at >= $1::timestamptz)
  AND ($2::text IS NULL OR l.status = $2::text OR (l.status IN (${IN_PROGRESS_SQL_LIST}) AND l.settled_status = $2::text))
  AND ($3::text IS NULL OR l.domain = $3::text OR right(l.domain, length($3::text) + 1) = '.' || $3::text)
  AND ($4::pg_snapshot IS NULL OR NOT pg_visible_in_snapshot(v.xact, $4::pg_snapshot) OR v.tli > $6::int)
  AND ($5::pg_snapshot IS NULL OR pg_visible_in_snapshot(v.xact, $5::pg_snapshot))`;

interface RevisitRow {
  id: string; kind: 'not_modified' | 'identical'; linkId: string; url: string; linkStatus: string; finalUrl: string; httpStatus: number;
  headers: Record<string, string> | null; fetcher: string; visitedAt: Date; refId: string; refVersion: number; refUrl: string; refDate: Date; refSha256: string;
}

/** How many visits match `filter` (`since` applies to the visit's time). */
export async function countVisits(prisma: PrismaClient, filter: ContentExportFilter = {}): Promise<number> {
  const [row] = await withDbErrors('count visits', () =>
    sqlOf(prisma).query<{ n: number }>(COUNT_VISITS_SQL, [filter.since ?? null, filter.linkStatus ?? null, filter.domain ?? null, snapshotOf(filter.after), snapshotOf(filter.upTo), timelineOf(filter.after)]),
  );
  return row?.n ?? 0;
}

/**
 * Every successful visit matching the filter (`since`: visits at or after it), in the order they were logged, in
 * constant memory like {@link iterateContent}: a new version comes with its body, an unchanged visit with the version
 * it confirmed (no body). An archive writes one record per visit from it.
 */
export async function* iterateVisits(prisma: PrismaClient, options: IterateContentOptions = {}): AsyncGenerator<ExportedVisit> {
  const sql = sqlOf(prisma);
  const pageSize = options.pageSize ?? 1_000;
  const maxBatchBytes = options.maxBatchBytes ?? 8 * 1024 * 1024;
  let after = await walkStart(prisma, options, VISITS_START_SQL, VISITS_AFTER_START_SQL, 'visits');
  if (after === null) return;
  for (;;) {
    const ids = await withDbErrors('export visit ids', () =>
      sql.query<{ id: string; kind: string; content: string; stored: number }>(VISIT_IDS_SQL, [
        after, options.since ?? null, options.linkStatus ?? null, options.domain ?? null, pageSize, snapshotOf(options.after), snapshotOf(options.upTo),
        timelineOf(options.after),
      ]),
    );
    if (ids.length === 0) return;
    let i = 0;
    while (i < ids.length) {
      const batch: typeof ids = [];
      let bytes = 0;
      while (i < ids.length && (batch.length === 0 || bytes + ids[i]!.stored <= maxBatchBytes)) {
        bytes += ids[i]!.stored;
        batch.push(ids[i++]!);
      }
      const fresh = batch.filter((v) => v.kind === 'new').map((v) => v.content);
      const revisits = batch.filter((v) => v.kind !== 'new').map((v) => v.id);
      const [pages, others] = await Promise.all([
        fresh.length ? withDbErrors('export visit pages', () => sql.query<Row>(ROWS_SQL, [fresh])) : Promise.resolve([] as Row[]),
        revisits.length ? withDbErrors('export revisits', () => sql.query<RevisitRow>(REVISITS_SQL, [revisits])) : Promise.resolve([] as RevisitRow[]),
      ]);
      const pageById = new Map(pages.map((p) => [p.id, p]));
      const revisitById = new Map(others.map((r) => [r.id, r]));
      // Rows deleted between the reads (a prune) are simply not exported.
      for (const v of batch) {
        if (v.kind === 'new') {
          const row = pageById.get(v.content);
          if (row) yield { kind: 'new', page: await decode(row) };
          continue;
        }
        const r = revisitById.get(v.id);
        if (!r) continue;
        yield {
          kind: 'revisit',
          revisit: {
            visitId: BigInt(r.id), kind: r.kind, linkId: r.linkId, url: r.url, linkStatus: r.linkStatus, finalUrl: r.finalUrl, httpStatus: r.httpStatus,
            headers: r.headers, fetcher: r.fetcher, visitedAt: r.visitedAt,
            refersTo: { contentId: BigInt(r.refId), version: r.refVersion, finalUrl: r.refUrl, fetchedAt: r.refDate, sha256: r.refSha256 },
          },
        };
      }
    }
    after = ids[ids.length - 1]!.id;
    if (ids.length < pageSize) return;
  }
}
