import { describe, expect, it } from 'vitest';
import { UsageError } from '../command.js';
import { parseSinceFlag } from './since-flag.js';

describe('parseSinceFlag', () => {
  it('takes an ISO time, or a date as its UTC midnight', () => {
    expect(parseSinceFlag('2026-11-23T10:00:00Z', 'u').toISOString()).toBe('2026-11-23T10:00:00.000Z');
    expect(parseSinceFlag('2026-11-23T10:00:00+02:00', 'u').toISOString()).toBe('2026-11-23T08:00:00.000Z');
    expect(parseSinceFlag('2028-02-29', 'u').toISOString()).toBe('2028-02-29T00:00:00.000Z');
  });

  it('refuses a day the month does not have, instead of rolling over into the next month', () => {
    for (const bad of ['2026-02-30', '2026-02-29', '2026-04-31T00:00:00Z', '2026-13-01', '2026-00-10'])
      expect(() => parseSinceFlag(bad, 'u'), bad).toThrow(UsageError);
    expect(() => parseSinceFlag('2026-02-30', 'usage: x')).toThrow(/--since must be an ISO time .* \(got "2026-02-30"\); usage: x/);
  });

  it('refuses what is not a time', () => {
    for (const bad of ['yesterday', '1700000000', '', '2026-11-23Tnoon']) expect(() => parseSinceFlag(bad, 'u'), bad).toThrow(UsageError);
  });
});

describe('crawl export --since', () => {
  it('refuses February 30th rather than exporting from March 2nd', async () => {
    const { parseExportArgs } = await import('../commands/export.js');
    expect(parseExportArgs(['--since', '2026-03-02']).since?.toISOString()).toBe('2026-03-02T00:00:00.000Z');
    expect(() => parseExportArgs(['--since', '2026-02-30'])).toThrow(/--since must be an ISO time .*\(got "2026-02-30"\)/);
  });
});
