import { describe, expect, it } from 'vitest';
import { DAY_MS, ManualClock } from '../contracts/clock.js';
import { decayWeight, isConfident, LEARNING_DEFAULTS, scoreFetchers, type ScoredAttempt } from './score-fetchers.js';

const now = new Date('2026-01-31T00:00:00Z');
const ago = (days: number) => new Date(now.getTime() - days * DAY_MS);
const many = (n: number, fetcher: string, success: boolean, days = 0): ScoredAttempt[] =>
  Array.from({ length: n }, () => ({ fetcher, success, attemptedAt: ago(days) }));

describe('decayWeight', () => {
  it.each([
    [0, 1],
    [15, Math.SQRT1_2],
    [30, 0.5],
    [60, 0.25],
    [90, 0.125],
  ])('%d days → %f (30-day half-life)', (days, w) => {
    expect(decayWeight(days * DAY_MS)).toBeCloseTo(w, 10);
  });
  it('honours another half-life and clamps future attempts to weight 1', () => {
    expect(decayWeight(7 * DAY_MS, 7)).toBeCloseTo(0.5, 10);
    expect(decayWeight(-5 * DAY_MS)).toBe(1);
  });
  it('rejects a non-positive half-life and NaN ages', () => {
    expect(() => decayWeight(1, 0)).toThrow(RangeError);
    expect(() => decayWeight(Number.NaN)).toThrow(RangeError);
  });
});

describe('scoreFetchers', () => {
  it("reproduces the design's confidence table", () => {
    const rows: [number, number, number][] = [
      [5, 5, 0.5],
      [10, 8, 0.8],
      [20, 14, 0.7],
    ];
    for (const [n, ok, conf] of rows) {
      const attempts = [...many(ok, 'playwright', true), ...many(n - ok, 'playwright', false)];
      const { best } = scoreFetchers(attempts, { now });
      expect(best?.confidence).toBeCloseTo(conf, 10);
      expect(best?.sampleSize).toBe(n);
    }
  });

  it('never picks a fetcher under the minimum sample but still reports it', () => {
    const r = scoreFetchers(many(3, 'playwright', true), { now });
    expect(r.best).toBeNull();
    expect(r.scores[0]).toMatchObject({ fetcher: 'playwright', eligible: false, confidence: 0.3 });
  });

  it('lets fresh failures outweigh old successes (time decay)', () => {
    const attempts = [...many(5, 'playwright', true, 60), ...many(2, 'playwright', false, 0)];
    const { best } = scoreFetchers(attempts, { now });
    expect(best?.successRate).toBeCloseTo((5 * 0.25) / 7, 10);
    expect(isConfident(best)).toBe(false);
  });

  it('merges the direct_access alias into simple_http and picks the most confident', () => {
    const attempts = [...many(6, 'direct_access', true), ...many(6, 'simple_http', true), ...many(10, 'playwright', true)];
    const r = scoreFetchers(attempts, { now });
    expect(r.scores.map((s) => s.fetcher)).toEqual(['simple_http', 'playwright']);
    expect(r.best?.sampleSize).toBe(12);
    expect(r.best?.confidence).toBe(1);
  });

  it('breaks ties by sample size, then name, and orders ineligible last', () => {
    const r = scoreFetchers([...many(10, 'b', true), ...many(10, 'a', true), ...many(2, 'c', true)], { now });
    expect(r.scores.map((s) => s.fetcher)).toEqual(['a', 'b', 'c']);
  });

  it('seeded priors of 10 fresh successes clear the threshold (one would not reach 5 samples)', () => {
    const { best } = scoreFetchers(many(10, 'simple_http', true), { now });
    expect(isConfident(best)).toBe(true);
  });

  it('honours options', () => {
    const r = scoreFetchers(many(3, 'x', true, 10), { now, minSampleSize: 3, halfLifeDays: 10, fullSampleSize: 3 });
    expect(r.best?.confidence).toBeCloseTo(0.5, 10);
  });

  it('gives an empty result for no attempts', () => {
    expect(scoreFetchers([], { now })).toEqual({ best: null, scores: [] });
  });
});

describe('isConfident', () => {
  const score = (confidence: number, eligible = true) => ({ fetcher: 'x', sampleSize: 10, decayedSuccesses: 0, successRate: confidence, sampleFactor: 1, confidence, eligible });
  it('is strict at the threshold', () => {
    expect(isConfident(score(0.6))).toBe(false);
    expect(isConfident(score(0.6000001))).toBe(true);
    expect(isConfident(score(0.7), 0.8)).toBe(false);
    expect(isConfident(null)).toBe(false);
    expect(isConfident(score(0.9, false))).toBe(false);
    expect(LEARNING_DEFAULTS).toEqual({ confidenceThreshold: 0.6, minSampleSize: 5, halfLifeDays: 30, fullSampleSize: 10 });
  });
});

describe("the documents' success rate over a long crawl (a measurement of a known limit, not a goal)", () => {
  it('drops a fetcher that never fails below the threshold after about 50 days at 20 pages a day', () => {
    // Decayed successes over UNdecayed attempts: a steady crawl's rate tends to (30 / (D·ln 2))·(1 − 0.5^(D/30)) after
    // D days, whatever the fetcher's real record. Measured here day by day on the injectable clock.
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const attempts: { fetcher: string; success: boolean; attemptedAt: Date }[] = [];
    let firstDayBelow: number | null = null;
    for (let day = 0; day < 120 && firstDayBelow === null; day++) {
      for (let i = 0; i < 20; i++) attempts.push({ fetcher: 'playwright', success: true, attemptedAt: new Date(clock.now().getTime() + (i * DAY_MS) / 20) });
      clock.advance(DAY_MS);
      if (!isConfident(scoreFetchers(attempts, { now: clock.now() }).best)) firstDayBelow = day + 1;
    }
    expect(firstDayBelow).not.toBeNull();
    expect(firstDayBelow!).toBeGreaterThanOrEqual(45);
    expect(firstDayBelow!).toBeLessThanOrEqual(52);
  });
});
