import { DEFAULT_MAX_ATTEMPTS, ERROR_TYPES, rateLimitPause, siteUnreachablePause, type Clock, type PolitenessGate, type RobotsVerdict, type SiteUnreachableDecision } from '@crawler/core';
import type { CrawlerConfig } from '../config/crawler-config.js';

/** How long sites that push back or cannot be reached are paused (PAUSE_BLOCK_BASE_MS, RATE_LIMIT_MIN_PAUSE_MS, UNREACHABLE_PAUSE_BASE_MS). */
export interface PauseSettings {
  /** First pause after a block; doubles per block in a row. @defaultValue core BLOCK_BASE_PAUSE_MS (10 min) */
  blockBasePauseMs?: number;
  /** Floor under a rate limit's Retry-After. @defaultValue core DEFAULT_RATE_LIMIT_MIN_PAUSE_MS (1 s) */
  rateLimitMinPauseMs?: number;
  /** First pause of an unreachable site; doubles per check in a row. @defaultValue core DEFAULT_UNREACHABLE_BASE_PAUSE_MS (60 s) */
  unreachableBasePauseMs?: number;
}

/** The pause settings of a crawler configuration. */
export function pauseSettingsOf(config: Pick<CrawlerConfig, 'pauseBlockBaseMs' | 'rateLimitMinPauseMs' | 'unreachablePauseBaseMs'>): PauseSettings {
  return { blockBasePauseMs: config.pauseBlockBaseMs, rateLimitMinPauseMs: config.rateLimitMinPauseMs, unreachableBasePauseMs: config.unreachablePauseBaseMs };
}

/** A robots verdict that means "the site cannot be read now" rather than "this URL is forbidden". */
export function isUnreachable(verdict: RobotsVerdict): verdict is RobotsVerdict & { unreachable: { retryAtMs: number } } {
  return !verdict.allowed && verdict.unreachable !== undefined;
}

/** What one more "site unreachable" check means for a link: a pause with backoff, or the end of its budget. */
export function unreachableDecision(
  verdict: RobotsVerdict & { unreachable: { retryAtMs: number } },
  o: { riskLevel: number; now: Date; maxAttempts?: number; pauseMaxMs?: number; pause?: PauseSettings },
): SiteUnreachableDecision {
  return siteUnreachablePause({
    riskLevel: o.riskLevel,
    now: o.now,
    maxAttempts: o.maxAttempts,
    basePauseMs: o.pause?.unreachableBasePauseMs,
    maxPauseMs: o.pauseMaxMs,
    retryAtMs: verdict.unreachable.retryAtMs,
  });
}

/** The message a link failed by an outage carries: what was unreachable, and for how many checks. */
export function unreachableFailure(verdict: RobotsVerdict, checks: number): { errorType: string; message: string } {
  return { errorType: ERROR_TYPES.siteUnreachable, message: `site unreachable on ${checks} checks in a row (${verdict.reason ?? 'robots.txt could not be read'}); re-post the link to try again` };
}

/**
 * Why a link waits on its domain's pause, for the link's last_error_type / last_error: a paused link with a blank
 * error leaves an operator guessing. Empty when the gate cannot say (the pause ended meanwhile, a simple gate).
 */
export async function domainPauseReason(gate: PolitenessGate, domain: string): Promise<{ lastErrorType?: string; lastError?: string }> {
  const pause = await gate.domainPause?.(domain).catch(() => null);
  if (!pause) return {};
  return { lastErrorType: pause.reason, lastError: `domain ${domain} paused (${pause.reason}) until ${new Date(pause.untilMs).toISOString()}` };
}

/**
 * Pause the fleet's requests to `domain` until `until` (an instant of `clock`). The gate is handed the time left, not
 * the instant: it measures from its own time base (Redis TIME), so a worker whose clock is 5 minutes fast does not
 * turn a 20 s Retry-After into a 5 min 20 s pause of the site for the whole fleet, nor one 5 minutes slow into none.
 */
export async function pauseDomainUntil(gate: PolitenessGate, clock: Clock, domain: string, until: Date, reason: string): Promise<void> {
  const leftMs = until.getTime() - clock.now().getTime();
  if (leftMs > 0) await gate.pauseDomainFor(domain, leftMs, reason);
}

/**
 * robots.txt answered 429: the site asks for pace, it is not down. The link and its domain wait until the cached
 * answer expires (its Retry-After, never under RATE_LIMIT_MIN_PAUSE_MS); only the MAX_ATTEMPTS-th such check in a row
 * fails the link, with `rate_limited`, so a site that never lets robots.txt be read does not hold its links for ever.
 */
export function robotsRateLimitDecision(
  verdict: RobotsVerdict & { rateLimited: { retryAtMs: number } },
  o: { riskLevel: number; now: Date; maxAttempts?: number; pauseMaxMs?: number; pause?: PauseSettings },
): { kind: 'pause'; pauseMs: number; pausedUntil: Date; riskLevel: number; errorType: string; reason: string } | { kind: 'fail'; errorType: string; message: string } {
  const checks = Math.max(0, Math.floor(o.riskLevel || 0)) + 1;
  const reason = verdict.reason ?? 'robots.txt answered 429';
  if (checks >= (o.maxAttempts ?? DEFAULT_MAX_ATTEMPTS)) {
    return { kind: 'fail', errorType: ERROR_TYPES.rateLimited, message: `rate limited on ${checks} robots.txt checks in a row (${reason}); re-post the link to try again` };
  }
  const p = rateLimitPause({ riskLevel: o.riskLevel, retryAfterMs: Math.max(0, verdict.rateLimited.retryAtMs - o.now.getTime()), now: o.now, maxPauseMs: o.pauseMaxMs, pause: o.pause });
  return { kind: 'pause', ...p, errorType: ERROR_TYPES.rateLimited, reason };
}
