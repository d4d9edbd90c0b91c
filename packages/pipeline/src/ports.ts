/**
 * What the pipeline needs from the store and the fetchers, as small interfaces: the real @crawler/db and
 * @crawler/fetchers objects satisfy them, and unit tests stub them.
 */
import type { BestFetcherResult, Heuristic, LinkStatus } from '@crawler/core';
import type { AppliedOutcome, AttemptInput, LinkChange, LinkRecord, NewLink, OutcomeWrite, RevisitValidators, StaleLink } from '@crawler/db';

export type { AppliedOutcome, LinkChange, LinkRecord, NewLink, OutcomeHook, OutcomeLinkChange, OutcomeWrite, StaleLink } from '@crawler/db';
import type { FetchRequest, FetchResult } from '@crawler/fetchers';
import type { ProbeExit } from './probe/probe-store.js';

/** One attempt row with its heuristics: the store's own input type, so the two cannot drift. */
export type AttemptRecord = AttemptInput;

/** The attempt log, written in batches. */
export interface AttemptLog {
  logAttempts(inputs: AttemptRecord[]): Promise<unknown>;
}

/** The learned choice: every fetcher's decayed, sample-weighted score over the attempts matching the heuristics. */
export interface LearnedSelector {
  /**
   * The pooled score over the attempts matching any of `heuristics`; with `opts.alone`, also that heuristic's attempts
   * scored by themselves (the URL's section), as `alone`. A selector without `alone` judges every URL by its domain.
   */
  findBestFetcher(
    heuristics: Heuristic[],
    opts: { minSampleSize: number; now: Date; alone?: Heuristic },
  ): Promise<BestFetcherResult & { alone?: { attempts: number; result: BestFetcherResult } }>;
}

/** The legacy fetcher_router table: the fetcher for a domain, or null. */
export interface LegacyRoutes {
  fetcherFor(domain: string): Promise<string | null>;
}

/**
 * Where a fetch job's outcome goes (@crawler/db OutcomeStore): its attempts, the link's new state and the page, in
 * one atomic write, so the attempt log and the links agree after any crash. The one method production uses; the
 * unit-test fake implements the same contract in memory.
 */
export interface OutcomeSink {
  apply(write: OutcomeWrite): Promise<AppliedOutcome>;
}

/** One fetcher, as the workers use it. */
export interface FetcherLike {
  readonly name: string;
  fetch(req: FetchRequest): Promise<FetchResult>;
  close(): Promise<void>;
}

/** Fetchers by name (@crawler/fetchers FetcherRegistry): lazy, so a browser starts only when a browser job arrives. */
export interface FetcherSource {
  get(name: string): FetcherLike;
}

/**
 * The router's cheap probe: a short GET with plain HTTP. Throws a FetchError when it fails. `exit` names the proxy it
 * left through (none: the worker's own address), so a fetch job reusing its response records that proxy.
 */
export type ProbeFn = (url: string, signal?: AbortSignal) => Promise<FetchResult & { exit?: ProbeExit }>;

/**
 * What a revisit knows about the link's stored page (@crawler/db VersionStore and ContentStore): the latest version's
 * validators, for a conditional request, and its body, for a 304 whose page must still be read (a crawl's links).
 */
export interface RevisitSource {
  validators(linkId: string): Promise<RevisitValidators | null>;
  latestPage(linkId: string): Promise<{ body: Uint8Array; contentType: string | null; finalUrl: string; headers: Record<string, string> | null } | null>;
}

/** Links as the pipeline needs them (@crawler/db LinkStore): a small interface so processors can be tested with a stub. */
export interface LinkRepo {
  /** Insert the links that do not exist yet (by normalized url) and return every one, with whether it was new. */
  upsertMany(links: NewLink[]): Promise<Array<LinkRecord & { created: boolean }>>;
  /**
   * Which of `urls` are stored links' urls. Optional: enqueue uses it to keep a link stored under a spelling it no
   * longer produces (with tracking parameters) instead of storing the page again.
   */
  existingUrls?(urls: readonly string[]): Promise<string[]>;
  get(id: string): Promise<LinkRecord | null>;
  update(id: string, patch: LinkChange): Promise<void>;
  /** Apply `patch` only while the link is not done or failed; false when it already was (a concurrent job finished it). */
  updateUnlessFinished(id: string, patch: LinkChange): Promise<boolean>;
  /** Count `n` attempts made now: attempt_count += n, last_attempt_at = at. */
  countAttempts(id: string, n: number, at: Date): Promise<void>;
  /** The link, when a route job of `generation` may route it now (see LinkStore.readRoutable); null otherwise. */
  readRoutable(id: string, now: Date, generation: number): Promise<LinkRecord | null>;
  /**
   * Back to `queued`, in a new generation, the links of `ids` that are failed with one of `errorTypes`; returns those
   * revived. Optional: without it, a re-posted failed link stays failed.
   */
  reviveFailed?(ids: readonly string[], errorTypes: readonly string[], priority?: number | null): Promise<Array<{ id: string; url: string; generation: number; priority?: number | null }>>;
}

/** What the reconciler reads and writes (@crawler/db LinkStore). */
export interface ReconcileLinks {
  staleUnfinished(status: LinkStatus, cutoff: Date, after: { updatedAt: Date; id: string }, limit: number): Promise<StaleLink[]>;
  failIfGeneration(id: string, generation: number, errorType: string, message: string): Promise<boolean>;
  nextGeneration(id: string, generation: number, rescued: boolean): Promise<number | null>;
}
