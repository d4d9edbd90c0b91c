import type { JobsOptions } from 'bullmq';

/**
 * Defaults for every job. Processors are idempotent and record failures on the link themselves, so BullMQ's own
 * retries are only for crashes (an exception escaping a processor, Redis or Postgres briefly gone).
 */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 2_000 },
  // Bounded history: enough for Bull Board and debugging without growing Redis forever.
  removeOnComplete: { count: 1_000, age: 24 * 3600 },
  removeOnFail: { count: 5_000, age: 7 * 24 * 3600 },
};

/** Worker lock settings. A SIGKILLed worker's job is found stalled after about `stalledIntervalMs` and re-run. */
export const DEFAULT_WORKER_LOCK = {
  /** Long enough for a browser navigation; the lock is renewed at half this while the job runs. */
  lockDurationMs: 30_000,
  stalledIntervalMs: 15_000,
  /** A job that stalls twice (its worker killed twice) is failed rather than looping forever. */
  maxStalledCount: 2,
} as const;

/** The route job id of a link's `generation`: the link id itself for the first, so enqueueing twice is one job. */
export function routeJobId(linkId: string, generation = 0): string {
  return generation === 0 ? linkId : `${linkId}.g${generation}`;
}

/**
 * The fetch job id: deterministic in the link's generation and attempt count, so a router job re-run after a crash,
 * or two route jobs of one link running at once, enqueue one fetch; after an attempt the count moves on and a new
 * fetch gets a new id, and a link the reconciler moved to a new generation gets new ids even where a dead job of the
 * old one is still kept.
 */
export function fetchJobId(linkId: string, attemptsBefore: number, fetcher: string, retry = false, generation = 0): string {
  return `${linkId}${generation === 0 ? '' : `.g${generation}`}.a${attemptsBefore}.${fetcher}${retry ? '.retry' : ''}`;
}
