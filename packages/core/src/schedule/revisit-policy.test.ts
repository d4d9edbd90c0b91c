import { describe, expect, it } from 'vitest';
import { ScheduleInputError, checkMaxAgeSeconds, checkRevisitPolicy, nextAdaptiveInterval, parseDurationSeconds, parseRevisitFlag } from './revisit-policy.js';

describe('parseDurationSeconds', () => {
  it('reads the forms producers write', () => {
    expect(parseDurationSeconds('0', 'f')).toBe(0);
    expect(parseDurationSeconds('90', 'f')).toBe(90);
    expect(parseDurationSeconds('30m', 'f')).toBe(1_800);
    expect(parseDurationSeconds('6h', 'f')).toBe(21_600);
    expect(parseDurationSeconds('7d', 'f')).toBe(604_800);
    expect(parseDurationSeconds('1h30m', 'f')).toBe(5_400);
    expect(parseDurationSeconds('500ms', 'f')).toBe(0.5);
  });

  it('refuses negative and unparsable input, naming the field', () => {
    for (const bad of ['-5m', '-1', 'soon', '', '5x', '5m junk', 'm']) {
      expect(() => parseDurationSeconds(bad, '--max-age')).toThrow(ScheduleInputError);
      expect(() => parseDurationSeconds(bad, '--max-age')).toThrow(/--max-age/);
    }
    expect(() => checkMaxAgeSeconds(-1)).toThrow(/maxAgeSeconds must not be negative/);
    expect(() => checkMaxAgeSeconds('1h')).toThrow(/maxAgeSeconds must be a number/);
  });

  it('refuses an age or interval Postgres could not add to a timestamp, naming the field', () => {
    expect(parseDurationSeconds('5200w', 'f')).toBe(3_144_960_000);
    expect(() => parseDurationSeconds('99999999999d', '--max-age')).toThrow(/--max-age must be at most 3155760000 s/);
    expect(() => checkMaxAgeSeconds(1e300)).toThrow(/maxAgeSeconds must be at most/);
    expect(() => parseRevisitFlag('99999999999d', 60)).toThrow(/--revisit must be at most/);
    expect(() => checkRevisitPolicy({ mode: 'fixed', intervalSeconds: 1e300 }, 60)).toThrow(/revisit\.intervalSeconds must be at most/);
    expect(() => checkRevisitPolicy({ mode: 'adaptive', minSeconds: 600, maxSeconds: 1e16 }, 60)).toThrow(/revisit\.maxSeconds must be at most/);
  });
});

describe('revisit policies', () => {
  it('refuses an interval below the configured minimum, naming the field', () => {
    expect(() => checkRevisitPolicy({ mode: 'fixed', intervalSeconds: 30 }, 60)).toThrow(/revisit\.intervalSeconds must be at least 60/);
    expect(() => checkRevisitPolicy({ mode: 'adaptive', minSeconds: 10, maxSeconds: 600 }, 60)).toThrow(/revisit\.minSeconds/);
    expect(() => checkRevisitPolicy({ mode: 'adaptive', minSeconds: 600, maxSeconds: 60 }, 60)).toThrow(/revisit\.maxSeconds must be ≥/);
    expect(() => checkRevisitPolicy({ mode: 'weekly' }, 60)).toThrow(/revisit\.mode/);
    try {
      checkRevisitPolicy({ mode: 'fixed', intervalSeconds: 'x' }, 60);
    } catch (err) {
      expect((err as ScheduleInputError).field).toBe('revisit.intervalSeconds');
    }
  });

  it('parses --revisit', () => {
    expect(parseRevisitFlag('6h', 60)).toEqual({ mode: 'fixed', intervalSeconds: 21_600 });
    expect(parseRevisitFlag('adaptive:10m..7d', 60)).toEqual({ mode: 'adaptive', intervalSeconds: 600, minSeconds: 600, maxSeconds: 604_800 });
    expect(parseRevisitFlag('adaptive:10m..7d@1h', 60)).toMatchObject({ intervalSeconds: 3_600 });
    expect(() => parseRevisitFlag('adaptive:7d', 60)).toThrow(/--revisit adaptive takes a range/);
    expect(() => parseRevisitFlag('10s', 60)).toThrow(/--revisit.intervalSeconds must be at least 60/);
  });

  it('shrinks on change, grows without, stays on unknown, within min..max', () => {
    const p = { mode: 'adaptive' as const, intervalSeconds: 100, minSeconds: 90, maxSeconds: 130 };
    expect(nextAdaptiveInterval(p, true)).toBe(90);
    expect(nextAdaptiveInterval({ ...p, minSeconds: 10 }, true)).toBe(80);
    expect(nextAdaptiveInterval(p, false)).toBe(130);
    expect(nextAdaptiveInterval({ ...p, maxSeconds: 1_000 }, false)).toBeCloseTo(140);
    expect(nextAdaptiveInterval(p, null)).toBe(100);
  });
});
