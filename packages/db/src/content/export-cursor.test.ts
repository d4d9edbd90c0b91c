import { describe, expect, it } from 'vitest';
import { cursorTimeline, isCursorForeign, parseExportCursor } from './export-cursor.js';

describe('parseExportCursor', () => {
  it('takes snapshots as Postgres writes them', () => {
    for (const c of ['18675:18675:', '100:110:100,104,109', '4294967296:4294967300:4294967297']) expect(parseExportCursor(c)).toBe(c);
    // With the database it comes from: the server's system identifier and the database's oid.
    for (const c of ['18675:18675:@7312830474560972949.16384', '100:110:104@1.1']) expect(parseExportCursor(c)).toBe(c);
    // And the timeline the server was writing on.
    for (const c of ['18675:18675:@7312830474560972949.16384.1', '100:110:104@1.1.12']) expect(parseExportCursor(c)).toBe(c);
  });

  it('refuses what no export hands out, before Postgres sees it', () => {
    for (const c of ['', '10:9:', '2:5:', '10:20:5', '10:20:20', '10:20:15,12', '10:20:12,12', '10:20', ' 10:20:', '10:20:,', 'x:y:', '18446744073709551616:18446744073709551617:', `10:20:${'1'.repeat(70_000)}`, '10:20:@', '10:20:@1', '10:20:@1.', '10:20:@.1', '10:20:@x.1', '10:20:@1.2.', '10:20:@1.2.3.4', '10:20:@1.2.x', '10:20:@1.2@1.2']) {
      expect(parseExportCursor(c), c).toBeNull();
    }
  });
});

describe('isCursorForeign', () => {
  it('is a cursor whose transactions had not started yet (another cluster, a restored dump)', () => {
    expect(isCursorForeign('100:110:104', '105:120:')).toBe(false);
    expect(isCursorForeign('100:110:104', '100:110:104')).toBe(false);
    expect(isCursorForeign('5000:5000:', '120:130:')).toBe(true);
    expect(isCursorForeign('100:110:104@7.16384', '105:120:@7.16384')).toBe(false);
    expect(isCursorForeign('5000:5000:@7.16384', '120:130:@7.16384')).toBe(true);
  });

  it('is a cursor from another database, or another server, however its transactions compare', () => {
    expect(isCursorForeign('100:110:104@7.16385', '105:120:@7.16384')).toBe(true);
    expect(isCursorForeign('100:110:104@8.16384', '105:120:@7.16384')).toBe(true);
    // One handed out before cursors named their database: only its transactions can be checked.
    expect(isCursorForeign('100:110:104', '105:120:@7.16384')).toBe(false);
  });

  it('takes a cursor from an earlier timeline of this database, ahead or not, and refuses one from a later timeline', () => {
    // A promoted standby gives out again the transaction ids its old primary used last: the old primary's cursor can be
    // ahead of the new one's, and the rows written since are told apart by their timeline.
    expect(isCursorForeign('5000:5000:@7.16384.1', '120:130:@7.16384.2')).toBe(false);
    expect(isCursorForeign('100:110:104@7.16384.1', '120:130:@7.16384.2')).toBe(false);
    // On the same timeline, a cursor ahead is from before a restore.
    expect(isCursorForeign('5000:5000:@7.16384.2', '120:130:@7.16384.2')).toBe(true);
    // From a later timeline: this server was restored from a backup taken before it.
    expect(isCursorForeign('100:110:104@7.16384.3', '120:130:@7.16384.2')).toBe(true);
    // Another database on a timeline of the same number is still another database.
    expect(isCursorForeign('100:110:104@7.16385.2', '120:130:@7.16384.2')).toBe(true);
    // A cursor naming its database and no timeline is on timeline 1 (see cursorTimeline): from an earlier timeline
    // it may be ahead, on the same one it may not.
    expect(isCursorForeign('100:110:104@7.16384', '120:130:@7.16384.2')).toBe(false);
    expect(isCursorForeign('5000:5000:@7.16384', '120:130:@7.16384.2')).toBe(false);
    expect(isCursorForeign('5000:5000:@7.16384', '120:130:@7.16384')).toBe(true);
    expect(isCursorForeign('5000:5000:@7.16384.1', '120:130:@7.16384')).toBe(true);
  });
});

describe('cursorTimeline', () => {
  it('reads a cursor that names its database and no timeline as timeline 1, and one naming neither as unknown', () => {
    expect(cursorTimeline('100:110:104@7.16384.3')).toBe(3);
    expect(cursorTimeline('100:110:104@7.16384')).toBe(1);
    expect(cursorTimeline('100:110:104')).toBeNull();
  });
});
