import { describe, expect, it } from 'vitest';
import { translateDbError } from '../errors.js';
import { mergeAliases, scoreAggregates } from './find-best-fetcher.js';
import { toAttemptRow } from './log-attempts.js';

describe('scoreAggregates', () => {
  it('scores, merges aliases and orders eligible best first', () => {
    const r = scoreAggregates([
      { fetcher: 'direct_access', sampleSize: 3, decayedSuccesses: 3 },
      { fetcher: 'simple_http', sampleSize: 3, decayedSuccesses: 1.5 },
      { fetcher: 'playwright', sampleSize: 20, decayedSuccesses: 14 },
      { fetcher: 'playwright_stealth', sampleSize: 4, decayedSuccesses: 4 },
    ]);
    expect(r.scores.map((s) => [s.fetcher, s.sampleSize, s.eligible])).toEqual([
      ['playwright', 20, true],
      ['simple_http', 6, true],
      ['playwright_stealth', 4, false],
    ]);
    expect(r.best?.fetcher).toBe('playwright');
    expect(r.best?.confidence).toBeCloseTo(0.7, 12);
    expect(r.scores[1]?.confidence).toBeCloseTo(0.75 * 0.6, 12);
  });

  it('returns no best when nothing is eligible, and honours minSampleSize', () => {
    expect(scoreAggregates([{ fetcher: 'x', sampleSize: 4, decayedSuccesses: 4 }]).best).toBeNull();
    expect(scoreAggregates([{ fetcher: 'x', sampleSize: 4, decayedSuccesses: 4 }], 4).best?.confidence).toBeCloseTo(0.4, 12);
    expect(mergeAliases([])).toEqual([]);
  });
});

describe('toAttemptRow', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  it('canonicalises the fetcher and defaults the time to now', () => {
    const row = toAttemptRow({ url: 'https://a/', fetcher: ' Direct_Access ', success: true, heuristics: [{ type: 'domain', value: 'a' }] }, 0, now);
    expect(row).toMatchObject({ fetcher: 'simple_http', attempted_at: now.toISOString(), is_banned: false, heuristics: [{ t: 'domain', v: 'a', s: null }] });
  });
  it.each([
    [{ url: '', fetcher: 'a', success: true, heuristics: [] }, 'url'],
    [{ url: 'u', fetcher: '', success: true, heuristics: [] }, 'fetcher'],
    [{ url: 'u', fetcher: 'a', success: 'yes', heuristics: [] }, 'success'],
    [{ url: 'u', fetcher: 'a', success: true, linkId: 'nope', heuristics: [] }, 'uuid'],
    [{ url: 'u', fetcher: 'a', success: true, attemptedAt: new Date(Number.NaN), heuristics: [] }, 'date'],
    [{ url: 'u', fetcher: 'a', success: true, heuristics: 'x' }, 'array'],
    [{ url: 'u', fetcher: 'a', success: true, heuristics: [{ type: 'domain' }] }, 'heuristic'],
  ])('rejects %j with invalid_attempt (%s)', (input, why) => {
    expect(() => toAttemptRow(input as never, 3, now)).toThrow(expect.objectContaining({ code: 'invalid_attempt', message: expect.stringMatching(new RegExp(`#3.*${why}`)) }));
  });
});

describe('translateDbError', () => {
  it('maps pg and Prisma codes onto stable db_* codes', () => {
    expect(translateDbError(Object.assign(new Error('dup'), { code: '23505' }), 'x')).toMatchObject({ code: 'db_constraint', retryable: false });
    expect(translateDbError(Object.assign(new Error('gone'), { code: 'P2025' }), 'x')).toMatchObject({ code: 'db_not_found' });
    expect(translateDbError(Object.assign(new Error('dl'), { code: '40P01' }), 'x')).toMatchObject({ code: 'db_conflict', retryable: true });
    expect(translateDbError(new AggregateError([Object.assign(new Error('r'), { code: 'ECONNREFUSED' })], ''), 'x')).toMatchObject({ code: 'db_unavailable', retryable: true });
    expect(translateDbError(new Error('syntax'), 'run')).toMatchObject({ code: 'db_error', message: 'run: syntax' });
  });
});
