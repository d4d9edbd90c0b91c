/**
 * What the pipeline needs from the store and the fetchers, as small interfaces: the real @crawler/db and
 * @crawler/fetchers objects satisfy them, and unit tests stub them.
 */
import type { BestFetcherResult, Heuristic } from '@crawler/core';
import type { AttemptInput } from '@crawler/db';
import type { FetchRequest, FetchResult } from '@crawler/fetchers';

/** One attempt row with its heuristics: the store's own input type, so the two cannot drift. */
export type AttemptRecord = AttemptInput;

/** The attempt log, written in batches. */
export interface AttemptLog {
  logAttempts(inputs: AttemptRecord[]): Promise<unknown>;
}

/** The learned choice (document 001 FindBestFetcher). */
export interface LearnedSelector {
  findBestFetcher(heuristics: Heuristic[], opts: { minSampleSize: number; now: Date }): Promise<BestFetcherResult>;
}

/** The legacy fetcher_router table: the fetcher for a domain, or null. */
export interface LegacyRoutes {
  fetcherFor(domain: string): Promise<string | null>;
}

/** Where fetched pages go (@crawler/db ContentStore). */
export interface ContentSink {
  save(input: ContentRecord): Promise<unknown>;
  /**
   * Store the page and mark its link done (status, cleared pause/risk/errors, its fetcher, `attemptsMade` more
   * attempts) in one write; null when the link no longer exists. Optional: without it the fetch worker saves, then
   * updates the link.
   */
  saveAndComplete?(input: ContentRecord, link: { attemptsMade?: number; lastAttemptAt?: Date }): Promise<unknown>;
}

/** A fetched page to store. */
export interface ContentRecord {
  linkId: string;
  body: Uint8Array;
  contentType: string | null;
  httpStatus: number;
  finalUrl: string;
  fetcher: string;
  /** Response headers as fetched; the store keeps them without cookies. */
  headers?: Record<string, string>;
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
