/**
 * Fleet-wide politeness, as the fetch workers see it. Implemented over Redis by @crawler/politeness so that every
 * worker process on every machine shares one view of each domain.
 */
import { FETCHERS, FETCHER_LADDER, canonicalFetcherName, type FetcherName } from './names.js';

/** A granted slot for one request to a domain; release it when the request is over, whatever its outcome. */
export interface DomainPermit {
  release(): Promise<void>;
}

export type GateDecision =
  | { granted: true; permit: DomainPermit }
  | {
      granted: false;
      /** How long to wait before asking again, in milliseconds. */
      retryInMs: number;
      /** Why: the domain is paused after a block, all its slots are taken, or the minimum delay has not passed. */
      reason: 'paused' | 'concurrency' | 'delay';
    };

/** How a caller asks the gate. */
export interface AcquireOptions {
  /**
   * The caller goes away when denied and comes back at `retryInMs` (a job parked on the queue): the hint is then its
   * turn among the domain's other waiters, not the domain's next free start, which every waiter would be told alike.
   * A caller that must decide again on its own (a probe) leaves it out. @defaultValue false
   */
  queued?: boolean;
}

export interface PolitenessGate {
  /** Ask to send one request to `domain` now. */
  acquire(domain: string, options?: AcquireOptions): Promise<GateDecision>;
  /**
   * Stop every worker from requesting `domain` for `durationMs` from now as the gate keeps time (Redis TIME for the
   * fleet's gate); a later pause extends, an earlier one never shortens. A duration, not an instant: an instant from a
   * worker's own clock would stretch or shorten the fleet's pause by that clock's error.
   */
  pauseDomainFor(domain: string, durationMs: number, reason: string): Promise<unknown>;
  /** The epoch ms the domain is paused until, or null when it is not paused. */
  domainPausedUntil(domain: string): Promise<number | null>;
  /** The domain's active pause with its reason (an error code such as `rate_limited`), or null. Optional for simple gates. */
  domainPause?(domain: string): Promise<{ untilMs: number; reason: string } | null>;
}

export interface RobotsVerdict {
  allowed: boolean;
  /** The site's Crawl-delay in milliseconds, when it sets one. */
  crawlDelayMs: number | null;
  /** Why a URL is disallowed, for the link's error. */
  reason?: string;
  /**
   * robots.txt could not be read (unreachable, 5xx, 429): the site is "not now", not "never". The caller pauses the
   * link and the domain and asks again; `retryAtMs` (epoch ms) is when the cached answer expires and robots.txt is
   * fetched afresh.
   */
  unreachable?: { retryAtMs: number };
  /**
   * Plain HTTP could not read robots.txt but a browser may (a head undici refuses, a bot wall in front of it): no
   * request to the site until a `fetcher` fetch has read it in its browser context (RobotsPolicy.checkInBrowser).
   * `retryAtMs`: when the cached answer expires.
   */
  browser?: {
    fetcher: string;
    retryAtMs: number;
    /**
     * The status of the wall's page plain HTTP was given in place of the file, when it was given one. With no browser
     * in the fleet the file is judged by it as RFC 9309 reads any answer (a 2xx or a 4xx other than 429: no rules that
     * can be read, so none apply), not as an outage: see robotsReadableWithoutBrowser.
     */
    status?: number;
  };
  /** robots.txt answered 429: the site is rate limiting; nothing is asked of it before `retryAtMs` (epoch ms). */
  rateLimited?: { retryAtMs: number };
}

/**
 * robots.txt as a browser-bearing fetch worker reads it: the result a browser fetch of `${origin}/robots.txt` gave.
 * `unreachable` (or null): the site could not be reached, with what the network said (DNS, refused, timeout).
 */
export type RobotsRead =
  | { status: number; body: string; retryAfterMs?: number | null }
  | { browser: { fetcher: string; reason: string; status?: number } }
  | { unreachable: { reason: string } }
  | null;

/**
 * Whether a site whose robots.txt only a browser can read may be crawled by a fleet that runs no browser: when plain
 * HTTP was given a wall's page with a 2xx or a 4xx (other than 429), as before browsers read such files (that answer
 * holds no rules, RFC 9309 §2.3.1.3); not when it was given nothing readable (a head undici refuses) or a 5xx.
 */
export function robotsReadableWithoutBrowser(browser: { status?: number }): boolean {
  const s = browser.status;
  return s !== undefined && ((s >= 200 && s < 300) || (s >= 400 && s < 500 && s !== 429));
}

/**
 * The browsers to send a link to when only a browser can read its robots.txt, in order. From plain HTTP, or from the
 * router (no tool yet): the one named, then any browser the fleet runs (a wall a probe would send to stealth may well
 * let a plain browser through, and its fetch worker climbs on if not). From a browser the wall stood in front of: only
 * the one named, the next tool up.
 */
export function robotsReaders(named: string, from?: string): FetcherName[] {
  const first = canonicalFetcherName(named);
  if (from !== undefined && canonicalFetcherName(from) !== FETCHERS.simpleHttp) return [first];
  return [...new Set([first, ...FETCHER_LADDER.filter((f) => f !== FETCHERS.simpleHttp)])];
}

export interface RobotsPolicy {
  check(url: string): Promise<RobotsVerdict>;
  /**
   * check(), except that an origin whose robots.txt only a browser can read is read with `read` (a browser fetch, past
   * its wall) and the result cached for the fleet as a plain read's would be. Policies without it answer as check().
   */
  checkInBrowser?(url: string, read: (origin: string) => Promise<RobotsRead>): Promise<RobotsVerdict>;
}

/** A gate that always grants: for single-process tools and tests that do not exercise politeness. */
export const openGate: PolitenessGate = {
  acquire: async () => ({ granted: true, permit: { release: async () => {} } }),
  pauseDomainFor: async () => {},
  domainPausedUntil: async () => null,
};

/** A robots policy that allows everything (robots.txt switched off). */
export const allowAllRobots: RobotsPolicy = { check: async () => ({ allowed: true, crawlDelayMs: null }) };
