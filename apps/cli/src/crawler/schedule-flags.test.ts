import { describe, expect, it } from 'vitest';
import { UsageError } from '../command.js';
import { parseScheduleFlags } from './schedule-flags.js';

describe('--max-age and --revisit', () => {
  it('reads durations and policies', () => {
    expect(parseScheduleFlags({ 'max-age': '0' }, 60, 'u')).toEqual({ maxAgeSeconds: 0 });
    expect(parseScheduleFlags({ 'max-age': '30m' }, 60, 'u')).toEqual({ maxAgeSeconds: 1_800 });
    expect(parseScheduleFlags({ 'max-age': '7d', revisit: '6h' }, 60, 'u')).toEqual({ maxAgeSeconds: 604_800, revisit: { mode: 'fixed', intervalSeconds: 21_600 } });
    expect(parseScheduleFlags({ revisit: 'adaptive:10m..7d' }, 60, 'u').revisit).toMatchObject({ mode: 'adaptive', minSeconds: 600, maxSeconds: 604_800 });
    expect(parseScheduleFlags({ revisit: 'off' }, 60, 'u')).toEqual({ revisit: null });
    expect(parseScheduleFlags({}, 60, 'u')).toEqual({});
  });

  it('is a usage error naming the flag for negative, unparsable or too-short values', () => {
    for (const [values, flag] of [[{ 'max-age': '-1h' }, '--max-age'], [{ 'max-age': 'yesterday' }, '--max-age'], [{ revisit: '10s' }, '--revisit'], [{ revisit: 'adaptive:1h' }, '--revisit']] as const) {
      expect(() => parseScheduleFlags(values, 60, 'usage: x')).toThrow(UsageError);
      expect(() => parseScheduleFlags(values, 60, 'usage: x')).toThrow(flag);
    }
  });
});
