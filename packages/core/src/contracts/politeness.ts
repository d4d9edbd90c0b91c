/**
 * Fleet-wide politeness, as the fetch workers see it. Implemented over Redis by @crawler/politeness so that every
 * worker process on every machine shares one view of each domain.
 */

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
  /** Stop every worker from requesting `domain` until `untilMs` (epoch ms); a later pause extends, an earlier one never shortens. */
  pauseDomain(domain: string, untilMs: number, reason: string): Promise<void>;
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
}

export interface RobotsPolicy {
  check(url: string): Promise<RobotsVerdict>;
}

/** A gate that always grants: for single-process tools and tests that do not exercise politeness. */
export const openGate: PolitenessGate = {
  acquire: async () => ({ granted: true, permit: { release: async () => {} } }),
  pauseDomain: async () => {},
  domainPausedUntil: async () => null,
};

/** A robots policy that allows everything (robots.txt switched off). */
export const allowAllRobots: RobotsPolicy = { check: async () => ({ allowed: true, crawlDelayMs: null }) };
