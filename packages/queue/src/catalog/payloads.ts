import { z } from 'zod';
import { SKIP_REASONS, type SkipReason } from '@crawler/core';

const SkipReasonSchema = z.enum(Object.values(SKIP_REASONS) as [SkipReason, ...SkipReason[]]);

/** BullMQ's largest job priority (2^21); 1 is the most urgent. */
export const MAX_JOB_PRIORITY = 2_097_152;

/**
 * BullMQ job priority of a link's jobs, carried from its route job to its fetch and re-route jobs: 1 runs first among
 * prioritized jobs. Jobs without one run before any prioritized job (BullMQ's order), so a priority is how a
 * producer sends a bulk backfill behind everyday links, and orders backfills among themselves.
 */
/** A job's BullMQ priority as producers give it: 1 (first) to MAX_JOB_PRIORITY, or none. The API, the CLI and the job payloads check it here. */
export const PrioritySchema = z.number().int().min(1).max(MAX_JOB_PRIORITY).optional();

/** Why a route job exists: the first routing of a link, or a re-route after a pause or a crash. */
export const ROUTE_REASONS = ['enqueue', 'resume', 'reroute'] as const;

/** A link to route. `generation` counts re-routes; it makes every job id of the link distinct and deterministic. */
export const RouteJobSchema = z.object({
  linkId: z.guid(),
  url: z.url(),
  generation: z.number().int().min(0).default(0),
  reason: z.enum(ROUTE_REASONS).default('enqueue'),
  /**
   * Set on the re-route of a blocked link: the fetcher the retry policy escalates to (core decideOutcome's
   * `nextFetcher`, e.g. playwright → playwright_stealth after a challenge), or the next arm of the exit ladder as
   * core's armKey (`simple_http@residential`). The router uses it instead of asking the learned store again, which
   * would hand back the fetcher that was just blocked.
   */
  nextFetcher: z.string().trim().min(1).optional(),
  /** Set on the re-route of a blocked link: the fetcher (or arm key) the site just refused, which the router does not pick again. */
  blockedFetcher: z.string().trim().min(1).optional(),
  priority: PrioritySchema,
});
export type RouteJob = z.infer<typeof RouteJobSchema>;
export type RouteJobInput = z.input<typeof RouteJobSchema>;

/** Where a stored probe response is, so the fetch worker can reuse it instead of requesting the page again. */
export const ProbeRefSchema = z.object({
  /** Redis key of the compressed probe response. */
  key: z.string().min(1),
  status: z.number().int(),
  /** Size of the uncompressed body, for logs. */
  bodyBytes: z.number().int().min(0),
});
export type ProbeRef = z.infer<typeof ProbeRefSchema>;

/** A link to fetch with one named fetcher. */
export const FetchJobSchema = z.object({
  linkId: z.guid(),
  url: z.url(),
  fetcher: z.string().min(1),
  /** learned | probe | hard_coded | default | retry: recorded on every attempt. */
  selectionSource: z.string().min(1),
  confidence: z.number().min(0).max(1).optional(),
  generation: z.number().int().min(0).default(0),
  /** The link's attempt_count when this job was created: part of the job id, so duplicates collapse into one job. */
  attemptsBefore: z.number().int().min(0).default(0),
  probe: ProbeRefSchema.optional(),
  /** The exit tier the request leaves from (a PROXY_TIERS name). @defaultValue 'direct' */
  exitTier: z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/).optional(),
  /** Set on a switched-fetcher retry (wrong tool): the error that caused it. */
  retryOf: z.object({ fetcher: z.string(), errorType: z.string() }).optional(),
  /** How many times in a row this job found no proxy of its tier to leave through (each wait longer than the last). */
  exitWaits: z.number().int().min(0).optional(),
  priority: PrioritySchema,
});
export type FetchJob = z.infer<typeof FetchJobSchema>;
export type FetchJobInput = z.input<typeof FetchJobSchema>;

/** What the router returns for a job (visible in Bull Board and job results). */
export const RouteResultSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('routed'), fetcher: z.string(), exitTier: z.string().optional(), source: z.string(), confidence: z.number().optional(), probeReused: z.boolean(),
    /** The router fetched the link itself (FETCH_INLINE) instead of adding a fetch job. */
    inline: z.boolean().optional(),
  }),
  z.object({ kind: z.literal('skipped'), reason: SkipReasonSchema }),
  z.object({ kind: z.literal('failed'), errorType: z.string(), message: z.string() }),
]);
export type RouteResult = z.infer<typeof RouteResultSchema>;

/** What a fetch worker returns for a job. */
export const FetchResultSchema = z.object({
  outcome: z.enum(['done', 'failed', 'paused', 'switched', 'skipped']),
  fetcher: z.string(),
  attempts: z.number().int().min(0),
  errorType: z.string().optional(),
  /** Why an outcome `skipped` job did nothing. */
  skipReason: SkipReasonSchema.optional(),
  httpStatus: z.number().int().optional(),
  pausedUntil: z.string().optional(),
});
export type FetchResult = z.infer<typeof FetchResultSchema>;
