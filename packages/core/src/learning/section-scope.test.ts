import { describe, expect, it } from 'vitest';
import { scoreFetchers } from '../scoring/score-fetchers.js';
import type { DomainAttempt } from './domain-memory.js';
import { attemptsInSection, hasOwnEvidence, scopeLearned, type SectionScore } from './section-scope.js';

const now = new Date('2026-06-01T12:00:00Z');
const score = (...runs: [fetcher: string, n: number][]) =>
  scoreFetchers(runs.flatMap(([fetcher, n]) => Array.from({ length: n }, () => ({ fetcher, success: true, attemptedAt: now }))), { now });
const section = (attempts: number, result = score(['simple_http', attempts])): SectionScore => ({ section: 'shop.test/blog', attempts, result });
// Each attempt's section as the domain-state read returns it: the `section` heuristic logged with the attempt.
const attempt = (section: string | null | undefined, fetcher = 'playwright'): DomainAttempt => ({ fetcher, success: true, isBanned: false, errorType: null, selectionSource: 'probe', attemptedAt: now, ...(section === undefined ? {} : { section }) });

const pooled = score(['playwright', 20]);
const recent = [attempt('shop.test/app'), attempt('shop.test/blog', 'simple_http'), attempt('shop.test/blog'), attempt(undefined), attempt(null)];
const input = { pooled, recent, minSampleSize: 5, confidenceThreshold: 0.6 };

describe('scopeLearned', () => {
  it('judges a URL without a section, or a section with fewer than the minimum sample, by its domain, unchanged', () => {
    for (const s of [undefined, null, section(0), section(4)]) {
      const got = scopeLearned({ ...input, section: s });
      expect(got.scope).toBe('domain');
      expect(got.learned).toBe(pooled);
      expect(got.recent).toBe(recent);
    }
  });

  it("judges a section with the minimum sample by its own confident score, and remembers by its own attempts", () => {
    const own = section(8);
    const got = scopeLearned({ ...input, section: own });
    expect(got.scope).toBe('section');
    expect(got.learned).toBe(own.result);
    expect(got.learned.best?.fetcher).toBe('simple_http');
    // The row's own section decides: /app, the root (null) and rows without one (logged before sections) are not in it.
    expect(got.recent).toEqual([recent[1], recent[2]]);
  });

  it('falls back to the pooled score for a section whose own score is not confident, still with its own memory', () => {
    const own = section(5, score(['simple_http', 3], ['playwright', 2]));
    const got = scopeLearned({ ...input, section: own });
    expect(got.scope).toBe('section');
    expect(got.learned).toBe(pooled);
    expect(got.recent).toHaveLength(2);
  });

  it('tells the minimum sample exactly', () => {
    expect(hasOwnEvidence(section(4), 5)).toBe(false);
    expect(hasOwnEvidence(section(5), 5)).toBe(true);
    expect(hasOwnEvidence(null, 0)).toBe(false);
    expect(attemptsInSection(recent, 'shop.test/app')).toHaveLength(1);
  });

  it("takes an attempt's section from the row, never from parsing its URL", () => {
    // A URL whose own parse would say another section: the section logged with the attempt is what counts.
    const logged = { ...attempt('shop.test/blog'), url: 'https://shop.test/app/1' } as DomainAttempt;
    expect(attemptsInSection([logged], 'shop.test/blog')).toEqual([logged]);
    expect(attemptsInSection([logged], 'shop.test/app')).toEqual([]);
  });
});
