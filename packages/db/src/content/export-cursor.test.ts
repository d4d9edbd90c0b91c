import { describe, expect, it } from 'vitest';
import { isCursorAhead, parseExportCursor } from './export-cursor.js';

describe('parseExportCursor', () => {
  it('takes snapshots as Postgres writes them', () => {
    for (const c of ['18675:18675:', '100:110:100,104,109', '4294967296:4294967300:4294967297']) expect(parseExportCursor(c)).toBe(c);
  });

  it('refuses what no export hands out, before Postgres sees it', () => {
    for (const c of ['', '10:9:', '2:5:', '10:20:5', '10:20:20', '10:20:15,12', '10:20:12,12', '10:20', ' 10:20:', '10:20:,', 'x:y:', '18446744073709551616:18446744073709551617:', `10:20:${'1'.repeat(70_000)}`]) {
      expect(parseExportCursor(c), c).toBeNull();
    }
  });
});

describe('isCursorAhead', () => {
  it('is a cursor whose transactions had not started yet (another cluster, a restored dump)', () => {
    expect(isCursorAhead('100:110:104', '105:120:')).toBe(false);
    expect(isCursorAhead('100:110:104', '100:110:104')).toBe(false);
    expect(isCursorAhead('5000:5000:', '120:130:')).toBe(true);
  });
});
