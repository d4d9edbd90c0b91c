import { createRequire } from 'node:module';
import type { RobotsVerdict } from '@crawler/core';

/** What a robots.txt fetch came back with; null means unreachable (DNS, connection, timeout). */
export interface RobotsFetchResult {
  status: number;
  body: string;
  /** A 429's Retry-After, in milliseconds from now, when it sent one. */
  retryAfterMs?: number | null;
}

/**
 * The fetch could not read robots.txt, but a browser may: the site answered with a head plain HTTP refuses and
 * Chromium reads, or with a bot wall's challenge. `fetcher` is the tool to read it with; `reason` says why.
 */
export interface RobotsBrowserNeeded {
  browser: { fetcher: string; reason: string; status?: number };
}

/** The site could not be reached (DNS, connection, timeout); `reason` is what the network said. */
export interface RobotsUnreachable {
  unreachable: { reason: string };
}

/** How a site's robots.txt is applied, after RFC 9309's status rules. Stored in Redis as JSON. */
export type RobotsRules =
  | { kind: 'allow_all'; status: number | null; expiresAtMs: number }
  /** `error`: why an unreachable site (status null) could not be read, when the reader said. */
  | { kind: 'disallow_all'; status: number | null; expiresAtMs: number; error?: string }
  | { kind: 'parsed'; status: number; body: string; expiresAtMs: number }
  /** Plain HTTP could not read it, a browser may (RobotsBrowserNeeded): disallow until a browser has. */
  | { kind: 'browser_only'; fetcher: string; reason: string; expiresAtMs: number; status?: number }
  /** 429: the site asks for pace; disallow until Retry-After (or `unreachableTtlMs` without one). */
  | { kind: 'rate_limited'; status: number; expiresAtMs: number };

// RFC 9309 §2.5: crawlers must parse at least 500 KiB; anything after that may be ignored.
const MAX_ROBOTS_CHARS = 500 * 1024;

interface ParsedRobots {
  isDisallowed(url: string, ua?: string): boolean | undefined;
  getMatchingLineNumber(url: string, ua?: string): number;
  getCrawlDelay(ua?: string): number | undefined;
}
// robots-parser is CommonJS with `module.exports = fn` but its typings declare an ES default export, which
// NodeNext resolves to `.default`; requiring it gives the real function.
const robotsParser = createRequire(import.meta.url)('robots-parser') as (url: string, body: string) => ParsedRobots;

/**
 * Turn a robots.txt fetch into rules (RFC 9309 §2.3.1): 2xx is parsed; 3xx left unresolved by the fetcher and 4xx
 * mean "no robots.txt", so everything is allowed; 5xx and unreachable mean "assume complete disallow" and are
 * cached for `unreachableTtlMs` only, so the site is asked again soon. 429 is a rate limit, not a missing file
 * (treating it as "allow all" would answer rate limiting with more requests) nor an outage: nothing is fetched until
 * its Retry-After has passed. A read only a browser can make is kept as briefly as an outage's, until one has.
 */
export function rulesFromFetch(result: RobotsFetchResult | RobotsBrowserNeeded | RobotsUnreachable | null, nowMs: number, ttlMs: number, unreachableTtlMs: number): RobotsRules {
  if (result === null) return { kind: 'disallow_all', status: null, expiresAtMs: nowMs + unreachableTtlMs };
  if ('unreachable' in result) return { kind: 'disallow_all', status: null, expiresAtMs: nowMs + unreachableTtlMs, error: result.unreachable.reason.slice(0, 300) };
  if ('browser' in result) {
    const { fetcher, reason, status } = result.browser;
    return { kind: 'browser_only', fetcher, reason, expiresAtMs: nowMs + unreachableTtlMs, ...(status !== undefined ? { status } : {}) };
  }
  const { status } = result;
  if (status >= 200 && status < 300) return { kind: 'parsed', status, body: result.body.slice(0, MAX_ROBOTS_CHARS), expiresAtMs: nowMs + ttlMs };
  if (status === 429) {
    const waitMs = result.retryAfterMs != null && result.retryAfterMs > 0 ? Math.min(result.retryAfterMs, ttlMs) : unreachableTtlMs;
    return { kind: 'rate_limited', status, expiresAtMs: nowMs + waitMs };
  }
  if (status >= 500) return { kind: 'disallow_all', status, expiresAtMs: nowMs + unreachableTtlMs };
  return { kind: 'allow_all', status, expiresAtMs: nowMs + ttlMs };
}

/** A parsed robots.txt ready to answer many URLs of one origin. */
export interface CompiledRobots {
  readonly rules: RobotsRules;
  /** Crawl-delay for our user agent in milliseconds (capped), or null. */
  readonly crawlDelayMs: number | null;
  verdict(url: URL): RobotsVerdict;
}

/** Parse `rules` once for `userAgent`; Crawl-delay is capped at `maxCrawlDelayMs` so one line cannot stall a domain for hours. */
export function compileRobots(origin: string, rules: RobotsRules, userAgent: string, maxCrawlDelayMs: number): CompiledRobots {
  if (rules.kind === 'allow_all') {
    return { rules, crawlDelayMs: null, verdict: () => ({ allowed: true, crawlDelayMs: null }) };
  }
  if (rules.kind === 'browser_only') {
    const reason = `robots.txt of ${origin} can be read only by a browser (${rules.reason}); a ${rules.fetcher} fetch reads it before the site's pages`;
    const browser = { fetcher: rules.fetcher, retryAtMs: rules.expiresAtMs, ...(rules.status !== undefined ? { status: rules.status } : {}) };
    return { rules, crawlDelayMs: null, verdict: () => ({ allowed: false, crawlDelayMs: null, reason, browser }) };
  }
  if (rules.kind === 'rate_limited') {
    const reason = `robots.txt of ${origin} answered ${rules.status} (rate limited); the site is asked again after ${new Date(rules.expiresAtMs).toISOString()}`;
    const rateLimited = { retryAtMs: rules.expiresAtMs };
    return { rules, crawlDelayMs: null, verdict: () => ({ allowed: false, crawlDelayMs: null, reason, rateLimited }) };
  }
  if (rules.kind === 'disallow_all') {
    const why = rules.status !== null ? `answered ${rules.status}` : rules.error ? `unreachable (${rules.error})` : 'unreachable';
    const reason = `robots.txt of ${origin} ${why}; the site is paused until it can be read (RFC 9309: assume complete disallow meanwhile)`;
    const unreachable = { retryAtMs: rules.expiresAtMs };
    return { rules, crawlDelayMs: null, verdict: () => ({ allowed: false, crawlDelayMs: null, reason, unreachable }) };
  }
  const robots = robotsParser(`${origin}/robots.txt`, rules.body);
  const seconds = robots.getCrawlDelay(userAgent);
  const crawlDelayMs = typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0 ? Math.min(Math.round(seconds * 1000), maxCrawlDelayMs) : null;
  return {
    rules,
    crawlDelayMs,
    verdict: (url) => {
      // RFC 9309 §2.2.2: /robots.txt itself is always allowed.
      if (url.pathname === '/robots.txt') return { allowed: true, crawlDelayMs };
      // robots-parser answers undefined for a URL of another origin; we only ask about our own, so undefined means allowed.
      if (robots.isDisallowed(url.href, userAgent) !== true) return { allowed: true, crawlDelayMs };
      const line = robots.getMatchingLineNumber(url.href, userAgent);
      return {
        allowed: false,
        crawlDelayMs,
        reason: `robots.txt of ${origin} disallows ${url.pathname} for user-agent "${userAgent}"${line > 0 ? ` (line ${line})` : ''}`,
      };
    },
  };
}
