import type { Clock, Heuristic, Logger } from '@crawler/core';
import type { PrismaClient } from '../client.js';

/** What every store takes. */
export interface StoreDeps {
  prisma: PrismaClient;
  /** Where "now" comes from (ages, decay, retention). @defaultValue systemClock */
  clock?: Clock;
  logger?: Logger;
}

/** A heuristic as logged: optionally with an importance score (priors, analytics). */
export interface LoggedHeuristic extends Heuristic {
  importanceScore?: number | null;
}

/** One fetch attempt to record, with every heuristic observed for it. */
export interface AttemptInput {
  /** The link fetched; null for synthetic attempts (priors). */
  linkId?: string | null;
  url: string;
  /** Stored canonical (`direct_access` → `simple_http`). */
  fetcher: string;
  success: boolean;
  /** The site pushed back (challenge, 403/429): counts towards the domain's ban rate. @defaultValue false */
  isBanned?: boolean;
  errorType?: string | null;
  /**
   * What went wrong, in words, for an attempt that got no response (`UND_ERR_SOCKET: other side closed (the body ended
   * after 18 of 5000 bytes)`): stored cut to 500 characters, with any `user:password@` in it masked. @defaultValue null
   */
  errorMessage?: string | null;
  httpStatus?: number | null;
  /** Safe response headers only (Server, Content-Type, CF-Ray ...), never cookies. */
  responseHeaders?: Record<string, string> | null;
  durationMs?: number | null;
  /** @defaultValue the store clock's now */
  attemptedAt?: Date;
  /** learned | probe | hard_coded | retry | prior | default */
  selectionSource?: string | null;
  /** The exit tier the request left from (core DIRECT_TIER, or a PROXY_TIERS name). @defaultValue 'direct' */
  exitTier?: string | null;
  /**
   * The proxy that carried the request, as core's maskProxyUrl shows it (`http://***@host:port`); masked again when
   * stored, so a credential never reaches the log. @defaultValue null (direct)
   */
  exitProxy?: string | null;
  heuristics: readonly LoggedHeuristic[];
}

/** Options for findBestFetcher. */
export interface FindBestFetcherOptions {
  /** Fetchers with fewer distinct matching attempts are reported but never chosen. @defaultValue 5 */
  minSampleSize?: number;
  /** The instant ages are measured from. @defaultValue the store clock's now */
  now?: Date;
  /** An attempt this many days old counts half. @defaultValue 30 */
  halfLifeDays?: number;
  /** Sample size at which the sample factor reaches 1. @defaultValue 10 */
  fullSampleSize?: number;
  /**
   * `auto` answers from the exact rollups when every pair's type is listed in heuristic_rollup_types and the
   * half-life is 30 days, else scans; `scan` always scans the matching attempts (same result, for checks).
   * @defaultValue 'auto'
   */
  strategy?: 'auto' | 'scan';
  /**
   * One more heuristic scored by itself as well (the URL's `section`: judged on its own attempts once it has enough),
   * in the same statement. Its score is the answer's `alone`. @defaultValue none
   */
  alone?: Heuristic;
}

/** Attempts, success and ban rates of one group (a fetcher or a domain). */
export interface AttemptStats {
  key: string;
  attempts: number;
  successes: number;
  banned: number;
  successRate: number;
  banRate: number;
}

/** One proxy's attempts (`key` is the proxy as masked in the log, `http://***@host:port`) and its exit tier. */
export interface ProxyStats extends AttemptStats {
  tier: string;
}

/** One time bucket of learning velocity. */
export interface VelocityBucket {
  bucketStart: Date;
  attempts: number;
  learned: number;
  probes: number;
  /** Share of attempts whose fetcher came from learned data. */
  learnedShare: number;
}

/** What a retention run deleted. */
export interface PruneResult {
  attempts: number;
  heuristics: number;
}
