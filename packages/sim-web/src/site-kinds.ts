/**
 * What a simulated site is and how it answers, as plain data and pure functions: the server in sim-site.ts only
 * adds sockets and counters around them.
 */

/**
 * The kinds of site the simulated web has. Both walls answer every visitor without a clearance cookie with an
 * interstitial whose script sets the cookie and reloads, as real "Just a moment…" pages do: `interstitial` (503) lets
 * any real browser through, `botwall` (403) refuses a browser that exposes `navigator.webdriver` (only stealth passes).
 * `traps` is a small plain site among crawler traps (traps.ts).
 */
export const SITE_KINDS = ['static', 'spa', 'botwall', 'interstitial', 'ratelimit', 'files', 'traps'] as const;
export type SiteKind = (typeof SITE_KINDS)[number];

/** Who sent a request, judged from its headers (see classifyClient). */
export type ClientClass = 'plain' | 'browser';

/** The cheapest fetcher that gets a page of each kind: what a perfect route table would say. */
export const IDEAL_FETCHER: Readonly<Record<SiteKind, string>> = {
  static: 'simple_http',
  spa: 'playwright',
  botwall: 'playwright_stealth',
  interstitial: 'playwright',
  ratelimit: 'simple_http',
  files: 'simple_http',
  traps: 'simple_http',
};

/** Fetchers that can get a page of each kind at all (a browser renders static pages too, just dearer). */
export const CAPABLE_FETCHERS: Readonly<Record<SiteKind, readonly string[]>> = {
  static: ['simple_http', 'playwright', 'playwright_stealth'],
  spa: ['playwright', 'playwright_stealth'],
  botwall: ['playwright_stealth'],
  interstitial: ['playwright', 'playwright_stealth'],
  ratelimit: ['simple_http', 'playwright', 'playwright_stealth'],
  files: ['simple_http'],
  traps: ['simple_http', 'playwright', 'playwright_stealth'],
};

/** A change of kind: from `atMs` of simulated time, or from the site's `afterRequests`-th page request on. */
export interface KindChange {
  kind: SiteKind;
  /** Simulated epoch milliseconds (the site's clock) from which the new kind holds. */
  atMs?: number;
  /** Number of page requests the site has answered before the new kind holds. */
  afterRequests?: number;
}

/** A rate limit: at most `maxRequests` page requests per window of simulated time, then 429 until the window ends. */
export interface RateLimit {
  /** @defaultValue 10 */
  maxRequests?: number;
  /** Window length in simulated milliseconds, aligned to the epoch. @defaultValue 3600000 (one hour) */
  windowMs?: number;
}

/** The kind that holds at simulated time `nowMs` after `pageRequests` page requests. Later changes win. */
export function kindAt(initial: SiteKind, changes: readonly KindChange[], nowMs: number, pageRequests: number): SiteKind {
  let kind = initial;
  for (const c of changes) {
    const byTime = c.atMs !== undefined && nowMs >= c.atMs;
    const byCount = c.afterRequests !== undefined && pageRequests >= c.afterRequests;
    if (byTime || byCount) kind = c.kind;
  }
  return kind;
}

/**
 * Judge a request's client from its raw headers. Plain HTTP (undici) sends header names exactly as given, all in
 * lower case, even though its values imitate Chrome; Chromium writes HTTP/1.1 header names in canonical case
 * (`User-Agent`, `Accept`). The user agent string alone cannot tell: the plain fetcher borrows Chrome's.
 */
export function classifyClient(rawHeaders: readonly string[]): ClientClass {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.toLowerCase() === 'user-agent') return name === 'user-agent' ? 'plain' : 'browser';
  }
  return 'plain';
}

/** Whether a rate-limited site's window still has room, and when the pause it imposes ends. */
export interface RateDecision {
  allowed: boolean;
  /** Simulated epoch ms until which the site refuses us (only when not allowed). */
  pausedUntilMs?: number;
}

/** Counts page requests per window and decides; state is the caller's, so it can live in a site. */
export class RateLimiter {
  readonly maxRequests: number;
  readonly windowMs: number;
  #windowStart = Number.NEGATIVE_INFINITY;
  #count = 0;

  constructor(limit: RateLimit = {}) {
    this.maxRequests = limit.maxRequests ?? 10;
    this.windowMs = limit.windowMs ?? 3_600_000;
    if (!Number.isInteger(this.maxRequests) || this.maxRequests < 1) throw new RangeError(`rateLimit.maxRequests must be a positive integer, got ${this.maxRequests}`);
    if (!(this.windowMs > 0)) throw new RangeError(`rateLimit.windowMs must be positive, got ${this.windowMs}`);
  }

  /** Record one request at `nowMs` and say whether it is within the limit. */
  take(nowMs: number): RateDecision {
    const start = Math.floor(nowMs / this.windowMs) * this.windowMs;
    if (start !== this.#windowStart) {
      this.#windowStart = start;
      this.#count = 0;
    }
    this.#count += 1;
    if (this.#count <= this.maxRequests) return { allowed: true };
    return { allowed: false, pausedUntilMs: start + this.windowMs };
  }

  /** Whether the site is refusing us at `nowMs` (its window is full), without counting a request. */
  isPausing(nowMs: number): boolean {
    const start = Math.floor(nowMs / this.windowMs) * this.windowMs;
    return start === this.#windowStart && this.#count >= this.maxRequests;
  }
}
