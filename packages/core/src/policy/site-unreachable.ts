import { DEFAULT_MAX_PAUSE_MS } from '../backoff/pause-duration.js';
import { DEFAULT_MAX_ATTEMPTS } from './retry-policy.js';

/** First pause after a site could not be reached: short, because most outages are (a restart, a deploy). */
export const DEFAULT_UNREACHABLE_BASE_PAUSE_MS = 60_000;

export interface SiteUnreachableInput {
  /** Consecutive failures of the link before this check (its risk_level). */
  riskLevel: number;
  now: Date;
  /** Checks a link gets before it fails with `site_unreachable`. @defaultValue DEFAULT_MAX_ATTEMPTS (6) */
  maxAttempts?: number;
  /** First pause; it doubles with every consecutive failure. @defaultValue DEFAULT_UNREACHABLE_BASE_PAUSE_MS */
  basePauseMs?: number;
  /** Cap on one pause. @defaultValue DEFAULT_MAX_PAUSE_MS */
  maxPauseMs?: number;
  /** When the fleet's cached "unreachable" answer expires (epoch ms): resuming earlier would only read it again. */
  retryAtMs?: number;
}

export type SiteUnreachableDecision =
  | { kind: 'pause'; pauseMs: number; pausedUntil: Date; riskLevel: number }
  | { kind: 'fail'; checks: number };

/**
 * What to do with a link whose site cannot be reached right now (its robots.txt unreachable, 5xx or 429): pause it and
 * its domain with backoff (base × 2^riskLevel, capped), and fail it with `site_unreachable` only when this check is
 * the `maxAttempts`-th in a row. Nothing was requested from the page, so no attempt is logged: the budget is the
 * link's run of consecutive failures (risk_level), which a success resets.
 */
export function siteUnreachablePause(input: SiteUnreachableInput): SiteUnreachableDecision {
  const riskLevel = Math.max(0, Math.floor(input.riskLevel || 0));
  const checks = riskLevel + 1;
  if (checks >= (input.maxAttempts ?? DEFAULT_MAX_ATTEMPTS)) return { kind: 'fail', checks };
  const base = input.basePauseMs ?? DEFAULT_UNREACHABLE_BASE_PAUSE_MS;
  const tableMs = Math.min(base * Math.pow(2, Math.min(riskLevel, 64)), input.maxPauseMs ?? DEFAULT_MAX_PAUSE_MS);
  const untilMs = Math.max(input.now.getTime() + tableMs, input.retryAtMs ?? 0);
  return { kind: 'pause', pauseMs: untilMs - input.now.getTime(), pausedUntil: new Date(untilMs), riskLevel: checks };
}
