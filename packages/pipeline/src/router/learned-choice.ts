import {
  DOMAIN_MEMORY_SOURCE,
  FETCHERS,
  SELECTION_SOURCES,
  canonicalFetcherName,
  isConfident,
  isDisqualified,
  needsReverification,
  rememberedFetcher,
  summarizeDomainAttempts,
  type BestFetcherResult,
  type DomainAttempt,
  type DomainFetcherState,
} from '@crawler/core';

/** How long a probe's finding that a domain serves plain static pages is reused by the router (PLAIN_HTTP_MEMORY_MS). */
export const DEFAULT_PLAIN_HTTP_MEMORY_MS = 3_600_000;

/** The learned step's inputs: the store's score for the routing heuristics, and the domain's latest attempts. */
export interface LearnedChoiceInput {
  learned: BestFetcherResult;
  /** The domain's latest attempts, newest first; empty when domain memory is off. */
  recent: readonly DomainAttempt[];
  now: Date;
  confidenceThreshold: number;
  /** A fetcher this link was just blocked with: never chosen again on its re-route. */
  avoid?: string | null;
  /** Use the domain's own attempts (disqualification, re-verification, latest working browser). @defaultValue true */
  domainMemory?: boolean;
  /**
   * Plain-HTTP domain memory: for this long after a probe last sent one of the domain's pages to plain HTTP and it
   * worked, the domain's new URLs go to plain HTTP without a probe, as long as its latest attempt there was plain
   * HTTP and worked. 0 turns it off. @defaultValue 0
   */
  plainHttpMemoryMs?: number;
}

export type LearnedChoice =
  | { kind: 'learned'; fetcher: string; source: typeof SELECTION_SOURCES.learned; confidence: number }
  | { kind: 'domain_memory'; fetcher: string; source: typeof DOMAIN_MEMORY_SOURCE; verifiedAt: Date | null }
  | { kind: 'probe'; reason: string };

/**
 * The router's learned step (findBestFetcher's confident score, else the domain's own memory), without the probe. Shared
 * by the router and `crawl explain`, so explain shows the decision the router takes.
 */
export function chooseLearned(input: LearnedChoiceInput): LearnedChoice {
  const { learned, now, confidenceThreshold } = input;
  const avoid = input.avoid ? canonicalFetcherName(input.avoid) : null;
  const states = input.domainMemory === false ? new Map() : summarizeDomainAttempts(input.recent);
  const best = learned.best;
  let setAside: string | null = null;
  if (best && isConfident(best, confidenceThreshold)) {
    const name = canonicalFetcherName(best.fetcher);
    const state = states.get(name);
    // A confident score can rest on old evidence: a fetcher this domain just refused, or a browser the domain has not
    // been shown to need for a while, goes back through the probe instead.
    if (name === avoid) setAside = `${name} was just blocked on this link`;
    else if (isDisqualified(state)) setAside = `${name}'s latest attempt on this domain failed (${state?.last.errorType ?? 'banned'})`;
    else if (needsReverification(state, now)) setAside = `${name} has not been shown to be needed on this domain for a while`;
    else {
      // Clamped: the store's rollup branch weighs an attempt stamped up to a minute after `now` slightly above 1
      // (db ROLLUP_FUTURE_TOLERANCE_MS), and a confidence of 1.00001 failed the fetch job's schema and stalled the link.
      return { kind: 'learned', fetcher: best.fetcher, source: SELECTION_SOURCES.learned, confidence: Math.min(1, Math.max(0, best.confidence)) };
    }
  }
  // Too few attempts for a confident score (a site crawled a page at a time): the domain's own latest working browser
  // costs one request where the probe would cost two, or a refused request at a bot wall.
  const remembered = input.domainMemory === false ? null : rememberedFetcher(states, now, { avoid }) ?? plainHttpRemembered(states, now, input.plainHttpMemoryMs ?? 0, avoid);
  if (remembered) return { kind: 'domain_memory', fetcher: remembered.fetcher, source: DOMAIN_MEMORY_SOURCE, verifiedAt: remembered.lastVerifiedAt };
  const why = setAside
    ? `${setAside}: set aside`
    : best
      ? `best confidence ${best.confidence.toFixed(3)} (${best.fetcher}) is not above ${confidenceThreshold}`
      : 'no fetcher has enough matching attempts';
  return { kind: 'probe', reason: why };
}

/**
 * Plain-HTTP domain memory. A site crawled a few pages at a time never reaches a confident score, so without this
 * every one of its pages is probed: the probe's body is reused (one request per static page either way), but each
 * probe costs the router a robots check, a politeness permit, the request and a stored body the fetch worker reads
 * back. Plain HTTP is remembered only while all of these hold:
 * - fresh evidence chose it: a probe (or another non-remembered source) last sent one of the domain's pages to plain
 *   HTTP and it worked within `maxAgeMs`; successes of remembered choices do not extend that, so a domain crawled
 *   continuously is probed again once per period;
 * - the domain's latest attempt, of any fetcher, was plain HTTP and worked: a page that needed a browser (wrong tool),
 *   a block or a timeout sends the next URL back through the probe;
 * - the link was not just blocked with plain HTTP.
 * A page that turns out to need a browser is caught by the fetch worker's validation and switched, as after a probe.
 */
export function plainHttpRemembered(states: ReadonlyMap<string, DomainFetcherState>, now: Date, maxAgeMs: number, avoid: string | null): DomainFetcherState | null {
  if (!(maxAgeMs > 0) || avoid === FETCHERS.simpleHttp) return null;
  const plain = states.get(FETCHERS.simpleHttp);
  if (!plain || !plain.last.success || plain.lastVerifiedAt === null) return null;
  if (now.getTime() - plain.lastVerifiedAt.getTime() > maxAgeMs) return null;
  for (const s of states.values()) {
    if (s !== plain && s.last.attemptedAt.getTime() > plain.last.attemptedAt.getTime()) return null;
  }
  return plain;
}
