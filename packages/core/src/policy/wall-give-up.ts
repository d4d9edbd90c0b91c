import { pauseDurationMs, type PauseOptions } from '../backoff/pause-duration.js';

/**
 * How long a site's links wait on a bot wall that refused the strongest tool the fleet has before they fail: long
 * enough for a wall that was put up for an attack or a deploy to come down again (and be crawled), short enough that
 * a producer feeding the site for good sees its links end instead of piling up paused.
 */
export const DEFAULT_WALL_MAX_WAIT_MS = 6 * 3600_000;

/**
 * A site's refusals in a row (blocks and challenges, not rate limits), as the fleet remembers them: one streak per
 * domain, ended by any page the site serves.
 */
export interface WallStreak {
  /** Refusals in a row, any tool. */
  refusals: number;
  /** When the strongest tool the fleet can send (the top of the ladder) was first refused in this streak; null: not yet. */
  topSinceMs: number | null;
  /** The latest refusal's error type (`blocked_captcha`, `blocked_403`). */
  errorType: string;
  /** The latest refusal's reason (`blocked_captcha:cloudflare`). */
  reason: string;
  /** The latest refused tool (an arm key: `playwright_stealth`, `simple_http@residential`). */
  fetcher: string;
}

/** What a link waiting on its walled site does: wait (at most until `untilMs`, when its wait is spent) or fail. */
export type WallVerdict = { kind: 'wait'; untilMs: number } | { kind: 'fail'; errorType: string; message: string };

/**
 * The verdict on a link of a site whose wall stands: none while the wall has not refused the top of the ladder (a
 * stronger tool may pass), `wait` until `maxWaitMs` after that first refusal (the wall may come down), then `fail`
 * with the wall's error type and a message that says which tool it refused, since when and how often.
 */
export function wallVerdict(streak: WallStreak | null, nowMs: number, maxWaitMs = DEFAULT_WALL_MAX_WAIT_MS): WallVerdict | null {
  if (!streak || streak.topSinceMs === null) return null;
  const untilMs = streak.topSinceMs + maxWaitMs;
  if (nowMs < untilMs) return { kind: 'wait', untilMs };
  const waitedS = Math.round((nowMs - streak.topSinceMs) / 1000);
  return {
    kind: 'fail',
    errorType: streak.errorType,
    message:
      `${streak.reason}: the site's wall refused every tool of the fleet up to ${streak.fetcher} ` +
      `(${streak.refusals} refusals in a row, the strongest tool refused for ${waitedS} s; WALL_MAX_WAIT_MS ${maxWaitMs} ms); ` +
      'not retried: the wall has stood longer than links wait on it',
  };
}

/**
 * How long the whole site pauses after its `refusals`-th refusal in a row: the block table by the site's streak
 * (10, 20, 40 min… capped), not by the refused link's own risk level, so a site fed new links (each at risk 0) still
 * backs off.
 */
export function wallPauseMs(refusals: number, errorType: string, opts: PauseOptions = {}): number {
  return pauseDurationMs(Math.max(0, refusals - 1), errorType, opts);
}
