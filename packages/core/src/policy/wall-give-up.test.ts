import { describe, expect, it } from 'vitest';
import { wallPauseMs, wallVerdict, type WallStreak } from './wall-give-up.js';

const MIN = 60_000;
const streak = (over: Partial<WallStreak> = {}): WallStreak => ({
  refusals: 3, topSinceMs: 1_000_000, errorType: 'blocked_captcha', reason: 'blocked_captcha:cloudflare', fetcher: 'playwright_stealth', ...over,
});

describe('wallVerdict', () => {
  it('says nothing until the strongest tool has been refused: a stronger tool may still pass', () => {
    expect(wallVerdict(null, 5_000_000, 60 * MIN)).toBeNull();
    expect(wallVerdict(streak({ topSinceMs: null }), 1e12, 60 * MIN)).toBeNull();
  });

  it('waits until the budget after the first refusal of the top of the ladder, then fails with the wall and why', () => {
    expect(wallVerdict(streak(), 1_000_000 + 60 * MIN - 1, 60 * MIN)).toEqual({ kind: 'wait', untilMs: 1_000_000 + 60 * MIN });
    const v = wallVerdict(streak({ refusals: 7 }), 1_000_000 + 60 * MIN, 60 * MIN);
    expect(v).toMatchObject({ kind: 'fail', errorType: 'blocked_captcha' });
    expect(v?.kind === 'fail' && v.message).toBe(
      "blocked_captcha:cloudflare: the site's wall refused every tool of the fleet up to playwright_stealth (7 refusals in a row, the strongest tool refused for 3600 s; WALL_MAX_WAIT_MS 3600000 ms); not retried: the wall has stood longer than links wait on it",
    );
  });
});

describe('wallPauseMs', () => {
  it('doubles with the site\'s refusals in a row, whatever the refused link\'s own risk, capped', () => {
    expect([1, 2, 3, 4].map((n) => wallPauseMs(n, 'blocked_403', { blockBasePauseMs: 1000 }))).toEqual([1000, 2000, 4000, 8000]);
    expect(wallPauseMs(30, 'blocked_captcha', { blockBasePauseMs: 1000, maxPauseMs: 5000 })).toBe(5000);
  });
});
