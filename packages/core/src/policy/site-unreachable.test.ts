import { describe, expect, it } from 'vitest';
import { siteUnreachablePause } from './site-unreachable.js';
import { ERROR_POLICY } from '../contracts/error-codes.js';

const now = new Date('2026-11-30T12:00:00Z');

describe('siteUnreachablePause', () => {
  it('pauses with a doubling backoff, then fails on the last check of the budget', () => {
    const pauses = [0, 1, 2, 3, 4].map((riskLevel) => siteUnreachablePause({ riskLevel, now, maxAttempts: 6, basePauseMs: 1000 }));
    expect(pauses.map((p) => (p.kind === 'pause' ? p.pauseMs : null))).toEqual([1000, 2000, 4000, 8000, 16000]);
    expect(pauses.map((p) => (p.kind === 'pause' ? p.riskLevel : null))).toEqual([1, 2, 3, 4, 5]);
    expect(siteUnreachablePause({ riskLevel: 5, now, maxAttempts: 6 })).toEqual({ kind: 'fail', checks: 6 });
  });

  it('never resumes before the cached unreachable answer expires, and caps the table', () => {
    const p = siteUnreachablePause({ riskLevel: 0, now, basePauseMs: 1000, retryAtMs: now.getTime() + 30_000 });
    expect(p).toMatchObject({ kind: 'pause', pauseMs: 30_000 });
    expect(siteUnreachablePause({ riskLevel: 4, now, basePauseMs: 60_000, maxPauseMs: 90_000 })).toMatchObject({ pauseMs: 90_000 });
  });

  it('is a pause in the error policy, and no evidence about a fetcher', () => {
    expect(ERROR_POLICY.site_unreachable).toMatchObject({ action: 'pause', banRisk: false, toolEvidence: false });
  });
});
