/**
 * The vocabulary every package shares: fetcher names, selection sources and link statuses (error codes are in
 * error-codes.ts, beside the table that decides them). All are stored as TEXT, so adding a value needs no migration;
 * these constants are the ones the code knows.
 */

/** Canonical fetcher names. Any other registered name is accepted where a fetcher name is read. */
export const FETCHERS = {
  simpleHttp: 'simple_http',
  playwright: 'playwright',
  playwrightStealth: 'playwright_stealth',
} as const;

export type KnownFetcherName = (typeof FETCHERS)[keyof typeof FETCHERS];
/** A fetcher name as stored: open-ended text. */
export type FetcherName = string;

/** The known fetchers from the cheapest to the strongest against a bot wall: the order a block climbs them. */
export const FETCHER_LADDER: readonly KnownFetcherName[] = [FETCHERS.simpleHttp, FETCHERS.playwright, FETCHERS.playwrightStealth];

/**
 * The tools of `known` stronger than `fetcher` on FETCHER_LADDER, cheapest first (every tool of `known` on the ladder
 * when `fetcher` is not on it).
 */
export function fetchersAbove(fetcher: string, known: ReadonlySet<string>): KnownFetcherName[] {
  const rung = FETCHER_LADDER.indexOf(canonicalFetcherName(fetcher) as KnownFetcherName);
  return FETCHER_LADDER.filter((tool, i) => i > rung && known.has(tool));
}

/** Names that mean the same fetcher: `direct_access` is plain HTTP, accepted wherever a fetcher name is read. */
export const FETCHER_ALIASES: Readonly<Record<string, string>> = { direct_access: FETCHERS.simpleHttp };

/** Map an alias onto its canonical fetcher name; other names pass through trimmed and lower-cased. */
export function canonicalFetcherName(name: string): FetcherName {
  const n = name.trim().toLowerCase();
  return FETCHER_ALIASES[n] ?? n;
}

/** Where a routing decision came from; recorded on every attempt so learning velocity can be measured. */
export const SELECTION_SOURCES = {
  learned: 'learned',
  /** The domain's own latest working browser, when there is too little evidence for a confident score. */
  domainMemory: 'domain_memory',
  probe: 'probe',
  hardCoded: 'hard_coded',
  retry: 'retry',
  /**
   * A revisit of a page stored by plain HTTP with an `ETag` or `Last-Modified`: the conditional request is sent
   * instead of a probe (a 304 or the page is the answer; a wall or a shell switches the tool like a probe would).
   */
  revisit: 'revisit',
  prior: 'prior',
  default: 'default',
} as const;

export type SelectionSource = (typeof SELECTION_SOURCES)[keyof typeof SELECTION_SOURCES];

/** Lifecycle of a link row. */
export const LINK_STATUSES = {
  queued: 'queued',
  routing: 'routing',
  fetching: 'fetching',
  paused: 'paused',
  done: 'done',
  failed: 'failed',
} as const;

export type LinkStatus = (typeof LINK_STATUSES)[keyof typeof LINK_STATUSES];

/** One observed feature of a URL or response. Both parts are open-ended text. */
export interface Heuristic {
  type: string;
  value: string;
}

/**
 * Why a route or fetch job did nothing: the link is gone, already finished, or owned by a newer job generation (the
 * reconciler's). A job result field, never an error type: nothing failed.
 */
export const SKIP_REASONS = {
  linkMissing: 'link_missing',
  linkDone: 'link_done',
  linkFailed: 'link_failed',
  /** Finished by a concurrent job between the read and the guarded write. */
  linkFinished: 'link_finished',
  staleGeneration: 'stale_generation',
} as const;

export type SkipReason = (typeof SKIP_REASONS)[keyof typeof SKIP_REASONS];
