import { describe, expect, it } from 'vitest';
import { scoreFetchers } from '../scoring/score-fetchers.js';
import type { DomainAttempt } from './domain-memory.js';
import { attemptsInSection, hasOwnEvidence, scopeLearned, type SectionScore } from './section-scope.js';

const now = new Date('2026-06-01T12:00:00Z');
const score = (...runs: [fetcher: string, n: number][]) =>
  scoreFetchers(runs.flatMap(([fetcher, n]) => Array.from({ length: n }, () => ({ fetcher, success: true, attemptedAt: now }))), { now });
const section = (attempts: number, result = score(['simple_http', attempts])): SectionScore => ({ section: 'shop.test/blog', attempts, result });
const attempt = (url: string | undefined, fetcher = 'playwright'): DomainAttempt => ({ fetcher, success: true, isBanned: false, errorType: null, selectionSource: 'probe', attemptedAt: now, ...(url === undefined ? {} : { url }) });

const pooled = score(['playwright', 20]);
const recent = [attempt('https://shop.test/app/1'), attempt('https://www.shop.test/Blog/a', 'simple_http'), attempt('https://shop.test/blog'), attempt(undefined), attempt('https://shop.test/')];
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
    // www. and case are the section's own spelling: the same section; /app, the root and URL-less rows are not.
    expect(got.recent.map((a) => a.url)).toEqual(['https://www.shop.test/Blog/a', 'https://shop.test/blog']);
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
});
