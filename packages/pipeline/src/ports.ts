/**
 * What the pipeline needs from the store and the fetchers, as small interfaces: the real @crawler/db and
 * @crawler/fetchers objects satisfy them, and unit tests stub them.
 */
import type { BestFetcherResult, Heuristic } from '@crawler/core';
import type { AppliedOutcome, AttemptInput, OutcomeWrite, RevisitValidators } from '@crawler/db';

export type { AppliedOutcome, LinkChange, OutcomeHook, OutcomeWrite } from '@crawler/db';
import type { FetchRequest, FetchResult } from '@crawler/fetchers';

/** One attempt row with its heuristics: the store's own input type, so the two cannot drift. */
export type AttemptRecord = AttemptInput;

/** The attempt log, written in batches. */
export interface AttemptLog {
  logAttempts(inputs: AttemptRecord[]): Promise<unknown>;
}

/** The learned choice: every fetcher's decayed, sample-weighted score over the attempts matching the heuristics. */
export interface LearnedSelector {
  findBestFetcher(heuristics: Heuristic[], opts: { minSampleSize: number; now: Date }): Promise<BestFetcherResult>;
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

/** The router's cheap probe: a short GET with plain HTTP. Throws a FetchError when it fails. */
export type ProbeFn = (url: string, signal?: AbortSignal) => Promise<FetchResult>;

/**
 * What a revisit knows about the link's stored page (@crawler/db VersionStore and ContentStore): the latest version's
 * validators, for a conditional request, and its body, for a 304 whose page must still be read (a crawl's links).
 */
export interface RevisitSource {
  validators(linkId: string): Promise<RevisitValidators | null>;
  latestPage(linkId: string): Promise<{ body: Uint8Array; contentType: string | null; finalUrl: string; headers: Record<string, string> | null } | null>;
}
