import type { PrismaClient } from '../client.js';
import { CrawlerError } from '@crawler/core';
import { DB_ERROR_CODES, withDbErrors } from '../errors.js';
import { sqlOf } from '../sql.js';

/**
 * Where an export stands: the database snapshot it read up to, as Postgres writes a `pg_snapshot`
 * (`xmin:xmax:xip,…`), then `@` and the database it was taken in (the server's system identifier and the database's
 * oid) and the timeline the server was writing then. Every row of a transaction committed before the snapshot is in
 * the export (or filtered out), every other row in a later one; a row written on a later timeline (after a failover,
 * whose new primary gives out again transaction ids the old one had used) is after it whatever its transaction.
 * Opaque to users, who hand it back as they got it.
 */
export type ExportCursor = string;

// Postgres caps a snapshot's in-progress list by its connection slots; this bounds what a request can make us parse.
const MAX_CURSOR_LENGTH = 64 * 1024;

/**
 * The cursor as given, if it is one an export hands out: `xmin:xmax:` and the transactions then in progress, in
 * ascending order within [xmin, xmax), then `@system-identifier.database-oid.timeline` (the cursors exports handed
 * out before name no timeline, or no database: they are still taken). Null otherwise, so a caller can answer
 * "bad cursor" instead of a database error.
 */
export function parseExportCursor(text: string): ExportCursor | null {
  if (text.length > MAX_CURSOR_LENGTH || !/^\d{1,20}:\d{1,20}:(\d{1,20}(,\d{1,20})*)?(@\d{1,20}\.\d{1,10}(\.\d{1,10})?)?$/.test(text)) return null;
  const [xmin, xmax, list] = cursorSnapshot(text).split(':') as [string, string, string];
  const lo = BigInt(xmin);
  const hi = BigInt(xmax);
  // xid8 is unsigned 64-bit; a real snapshot's xmin is a normal transaction id (3 and up).
  if (lo < 3n || hi < lo || hi >= 2n ** 64n) return null;
  let prev = lo - 1n;
  for (const x of list ? list.split(',') : []) {
    const xid = BigInt(x);
    if (xid <= prev || xid >= hi) return null;
    prev = xid;
  }
  return text;
}

/**
 * The timeline a cursor was taken on. A cursor that names its database and no timeline is on timeline 1: exports
 * hand out timeline 1 in that form (the form the code before timelines reads, so an API or CLI of that code takes a
 * cursor of this one during a rolling upgrade or after a rollback), and the cursors handed out before timelines were
 * named are like the rows stored then, which 20261207000200 put on timeline 1 (every row on a later timeline was
 * written after them). Null for a cursor that names no database either: only its transactions can be compared.
 */
export function cursorTimeline(cursor: ExportCursor): number | null {
  const place = cursor.slice(cursorSnapshot(cursor).length + 1).split('.');
  return place.length === 3 ? Number(place[2]) : place.length === 2 ? 1 : null;
}

/** The cursor's snapshot, as Postgres reads a `pg_snapshot`. */
export function cursorSnapshot(cursor: ExportCursor): string {
  const at = cursor.indexOf('@');
  return at === -1 ? cursor : cursor.slice(0, at);
}

// Rows whose xact this cluster has not reached yet: a row the statement sees committed before its snapshot, so its
// transaction is below the snapshot's xmax, unless the row was written elsewhere and restored from a dump (pg_dump
// copies xact as it is). No snapshot of this cluster sees such a row until its transaction ids catch up.
// A row from a later timeline than the server's was restored from another cluster's dump too.
const FOREIGN_XACT_SQL = (table: string) =>
  `SELECT 1 FROM ${table} WHERE xact >= pg_snapshot_xmax(pg_current_snapshot()) UNION ALL SELECT 1 FROM ${table} WHERE tli > export_timeline()`;

/**
 * Marks rows restored from another cluster's dump as committed before any snapshot (FrozenTransactionId, as the
 * migration did for the rows stored before the column): they are in every full export and in no resumed one.
 * `crawl migrate` runs it; returns how many rows it changed.
 */
export const FREEZE_FOREIGN_XACT_SQL = ['fetched_content', 'page_visits'].map(
  (table) => `UPDATE ${table} SET xact = '2'::xid8, tli = 1 WHERE xact >= pg_snapshot_xmax(pg_current_snapshot()) OR tli > export_timeline()`,
);

/**
 * The snapshot an export starting now covers (`pg_current_snapshot()`): take it before the first read, pass it as
 * `upTo`, and hand it out as the next export's `after`. Read on the primary: a standby's snapshot lags it. Refuses
 * (db_migration) while rows restored from another cluster have not been frozen by `crawl migrate`: no snapshot sees
 * them, so an export would silently leave them all out.
 */
export async function currentExportCursor(prisma: PrismaClient): Promise<ExportCursor> {
  const database = await databaseIdentity(prisma);
  const [row] = await withDbErrors('export cursor', () =>
    sqlOf(prisma).query<{ cursor: string; foreign: boolean; tli: number }>(
      `SELECT pg_current_snapshot()::text AS cursor, export_timeline() AS tli,
        EXISTS (${FOREIGN_XACT_SQL('fetched_content')}) OR EXISTS (${FOREIGN_XACT_SQL('page_visits')}) AS foreign`,
    ),
  );
  if (row!.foreign) {
    throw new CrawlerError(
      DB_ERROR_CODES.migration,
      'export cursor: stored pages name transactions this database has not reached (restored from a dump of another server): run `crawl migrate` before exporting',
    );
  }
  // Timeline 1 (a server that never failed over) is left unwritten: see cursorTimeline.
  return row!.tli === 1 ? `${row!.cursor}@${database}` : `${row!.cursor}@${database}.${row!.tli}`;
}

/**
 * `system-identifier.database-oid`. A managed Postgres that does not let its users call pg_control_system() gives 0
 * for the server: the database's oid still tells the databases of one server apart.
 */
async function databaseIdentity(prisma: PrismaClient): Promise<string> {
  const sql = sqlOf(prisma);
  const OID_SQL = '(SELECT oid FROM pg_database WHERE datname = current_database())::text';
  try {
    const [row] = await sql.query<{ id: string }>(`SELECT (SELECT system_identifier FROM pg_control_system())::text || '.' || ${OID_SQL} AS id`);
    return row!.id;
  } catch {
    const [row] = await withDbErrors('export cursor', () => sql.query<{ id: string }>(`SELECT '0.' || ${OID_SQL} AS id`));
    return row!.id;
  }
}

/**
 * True when `after` is not from this database's past: taken in another database (on this server or another, told
 * by the database each cursor names), on a later timeline than `upTo` (before this server was restored from a
 * backup), or naming transactions that had not started by `upTo` on the same timeline (a cursor from before a
 * restore from a dump, whose transaction ids start lower, or one that names no database). Resuming from it would
 * pass over rows this database holds, so callers refuse it. A cursor from an earlier timeline can be ahead: a
 * promoted standby gives out again the transaction ids the old primary used last, and the rows it writes are told
 * apart by their timeline.
 */
export function isCursorForeign(after: ExportCursor, upTo: ExportCursor): boolean {
  const databaseOf = (c: ExportCursor) => c.slice(cursorSnapshot(c).length + 1).split('.').slice(0, 2).join('.') || null;
  const theirs = databaseOf(after);
  const ours = databaseOf(upTo);
  if (theirs !== null && ours !== null && theirs !== ours) return true;
  const theirTimeline = cursorTimeline(after);
  const ourTimeline = cursorTimeline(upTo);
  if (theirTimeline !== null && ourTimeline !== null && theirTimeline !== ourTimeline) return theirTimeline > ourTimeline;
  return BigInt(cursorSnapshot(after).split(':')[1]!) > BigInt(cursorSnapshot(upTo).split(':')[1]!);
}
