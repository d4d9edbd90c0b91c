import type { PrismaClient } from '../client.js';
import { withDbErrors } from '../errors.js';
import { sqlOf } from '../sql.js';

/**
 * Where an export stands: the database snapshot it read up to, as Postgres writes a `pg_snapshot`
 * (`xmin:xmax:xip,…`). Every row of a transaction committed before the snapshot is in the export (or filtered out),
 * every other row in a later one. Opaque to users, who hand it back as they got it.
 */
export type ExportCursor = string;

// Postgres caps a snapshot's in-progress list by its connection slots; this bounds what a request can make us parse.
const MAX_CURSOR_LENGTH = 64 * 1024;

/**
 * The cursor as given, if it is one an export hands out: `xmin:xmax:` and the transactions then in progress, in
 * ascending order within [xmin, xmax). Null otherwise, so a caller can answer "bad cursor" instead of a database
 * error.
 */
export function parseExportCursor(text: string): ExportCursor | null {
  if (text.length > MAX_CURSOR_LENGTH || !/^\d{1,20}:\d{1,20}:(\d{1,20}(,\d{1,20})*)?$/.test(text)) return null;
  const [xmin, xmax, list] = text.split(':') as [string, string, string];
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
 * The snapshot an export starting now covers (`pg_current_snapshot()`): take it before the first read, pass it as
 * `upTo`, and hand it out as the next export's `after`. Read on the primary: a standby's snapshot lags it.
 */
export async function currentExportCursor(prisma: PrismaClient): Promise<ExportCursor> {
  const [row] = await withDbErrors('export cursor', () => sqlOf(prisma).query<{ cursor: string }>('SELECT pg_current_snapshot()::text AS cursor'));
  return row!.cursor;
}

/**
 * True when `after` names transactions that had not started by `upTo`: a cursor from another cluster, or from this
 * one before a restore from a dump (whose transaction ids start lower). Resuming from it would pass over every row
 * until the ids caught up, so callers refuse it.
 */
export function isCursorAhead(after: ExportCursor, upTo: ExportCursor): boolean {
  return BigInt(after.split(':')[1]!) > BigInt(upTo.split(':')[1]!);
}
