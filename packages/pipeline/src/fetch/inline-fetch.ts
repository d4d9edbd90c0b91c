import type { Redis } from 'ioredis';
import { Semaphore, canonicalFetcherName, type Logger } from '@crawler/core';
import { fetchJobId, fetchQueueName, type FetchJobInput } from '@crawler/queue';
import { DelayedError } from '../job-control.js';
import { isInfraError } from '../runtime/infra-errors.js';
import type { LinkRecord, LinkRepo, OutcomeLinkChange } from '../ports.js';
import type { FetchHooks, FetchJobHandle, PendingLinkWrite } from './fetch-processor.js';

/**
 * The fetch slots of one process, per fetcher: its fetch workers' jobs and the router's inline fetches share them, so a
 * fetcher's configured concurrency bounds both together.
 */
export class FetchSlots {
  readonly #slots = new Map<string, Semaphore>();

  constructor(limits: Iterable<readonly [fetcher: string, concurrency: number]>) {
    for (const [fetcher, n] of limits) this.#slots.set(canonicalFetcherName(fetcher), new Semaphore(Math.max(1, n)));
  }

  has(fetcher: string): boolean {
    return this.#slots.has(canonicalFetcherName(fetcher));
  }

  /** A slot of `fetcher` when one is free right now (its release), else null; null too for a fetcher without slots. */
  tryTake(fetcher: string): (() => void) | null {
    const s = this.#slots.get(canonicalFetcherName(fetcher));
    return s?.tryAcquire() ? once(() => s.release()) : null;
  }

  /** Wait for a slot of `fetcher` (its release): a fetch worker's job; a fetcher without slots is not limited here. */
  async take(fetcher: string, signal?: AbortSignal): Promise<() => void> {
    const s = this.#slots.get(canonicalFetcherName(fetcher));
    if (!s) return () => undefined;
    await s.acquire(signal);
    return once(() => s.release());
  }

  /** Slots in use, per fetcher (tests, diagnostics). */
  inUse(fetcher: string): number {
    return this.#slots.get(canonicalFetcherName(fetcher))?.inUse ?? 0;
  }
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}

/** What an inline fetch needs. */
export interface InlineFetchDeps {
  /** Shared with the fetch workers of this process. */
  slots: FetchSlots;
  /** The fetch workers' processor (createFetchProcessor), run here on a job of our own. */
  processFetch(job: FetchJobHandle, token?: string, hooks?: FetchHooks): Promise<unknown>;
  /** Add the fetch job the router would have added, optionally delayed (JobQueues.enqueueFetch). */
  enqueueFetch(input: FetchJobInput, delayMs?: number): Promise<unknown>;
  /** Writes the router's decision on the link when a fetch goes to the fetch queue before its outcome carried it. */
  links: Pick<LinkRepo, 'updateUnlessFinished'>;
  /**
   * Claim a fetch job id for one owner fleet-wide (true when `owner` holds it: claimed now, or by this same owner
   * before), and give it back. What the fetch job's deterministic id does in the queue: two route jobs of one link (a
   * resubmission racing a resume) fetch it once. Without it, only this process's inline fetches are told apart.
   */
  claims?: InlineClaims;
  logger: Logger;
  /**
   * Inline fetches at once, at most, waiting for a fetch slot included: each holds a route job's slot for as long as
   * it runs, so no more than the route worker's slots the other fetchers leave (inlineFetchLimit).
   */
  maxInFlight: number;
  /** Aborted on shutdown: an inline fetch still waiting for a slot hands its link to the fetch queue. */
  signal?: AbortSignal;
}

/** Fleet-wide claims of fetch job ids (see InlineFetchDeps.claims; redisInlineClaims). `url`: the link's. */
export interface InlineClaims {
  claim(jobId: string, owner: string, url: string): Promise<boolean>;
  release(jobId: string, owner: string, url: string): Promise<void>;
}

/**
 * Claims in Redis: `SET NX` with a time to live (a process killed mid-fetch leaves one behind; its route job, run
 * again by BullMQ, is the same owner and takes it back), DEL by its owner to give it back. Each under the key
 * prefix `prefixOf` gives the link's URL: its queue shard's, so a shard's master going away stalls only its own links.
 */
export function redisInlineClaims(redis: Redis, prefixOf: (url: string) => string, ttlMs = 10 * 60_000): InlineClaims {
  const key = (jobId: string, url: string) => `${prefixOf(url)}:inline:${jobId}`;
  return {
    async claim(jobId, owner, url) {
      if ((await redis.set(key(jobId, url), owner, 'PX', ttlMs, 'NX')) === 'OK') return true;
      return (await redis.get(key(jobId, url))) === owner;
    },
    async release(jobId, _owner, url) {
      // A plain DEL: only the owner releases, and its claim cannot have passed to another owner while it fetched (the
      // time to live is far longer than a fetch's timeout).
      await redis.del(key(jobId, url));
    },
  };
}

/** A fetch the router runs itself: run it once. */
export interface InlineFetch {
  /**
   * `owner`: the route job's id (its own retry after a crash is the same owner). `link`: the link as the router just
   * read it, its decision applied, which the fetch then does not read again. `decision`: the router's change to the
   * link (status `fetching`, the fetcher), not written yet: the fetch's outcome carries it in its own statement, and a
   * fetch handed to the fetch queue before an outcome writes it first.
   */
  run(input: FetchJobInput, owner: string, link?: LinkRecord, decision?: OutcomeLinkChange): Promise<void>;
}

/**
 * Fetches the router runs itself instead of adding a fetch job (FETCH_INLINE): a page costs one job instead of two
 * (a fetch job's add, its move to active and its completion are Redis scripts and events of their own). Only when a
 * slot of the fetcher is free right now, so the fetch workers' concurrency holds, and while fewer than `maxInFlight`
 * run; otherwise the router adds the job as before. An inline fetch holds its route job's slot, so a router busy
 * fetching routes less: it cannot run ahead of the fetchers, which is what keeps most pages on the one-job path.
 *
 * The fetch runs inside the route job, which stays active until it has finished: a process killed meanwhile leaves
 * a stalled route job that BullMQ runs again, and the link (still unfinished) is routed again. The router's decision is
 * not written before the fetch: the outcome's statement carries it, so a page costs one update of its link, not two.
 * Until then the link stays as the route job found it (`queued`), carried by that active route job. Whatever the fetch
 * processor would have parked on its job (a politeness wait, a paused link) becomes the fetch job the router would
 * have added, delayed by as much; anything else it throws hands the link to the fetch queue, which records failures
 * on the link, except our own infrastructure failing (Postgres or Redis away): that fails the route job, which rides
 * the outage out as every job does (WorkerSet.guard).
 */
export class InlineFetcher {
  readonly #deps: InlineFetchDeps;
  readonly #inFlight: Semaphore;
  /** Fetch job ids this process is fetching inline. */
  readonly #running = new Set<string>();

  constructor(deps: InlineFetchDeps) {
    this.#deps = deps;
    this.#inFlight = new Semaphore(Math.max(1, deps.maxInFlight));
  }

  /**
   * One inline fetch of `fetcher`, or null: the router adds a fetch job (as many inline fetches running or waiting as
   * the router may hold, or not a fetcher run inline here). The fetch waits for a slot of the fetcher, shared with the
   * fetch workers, and gives it back once its request is done (the outcome is written without it): a slot counts a
   * request in flight, and the route slots beyond the fetch slots are pages being written while the next requests go.
   */
  claim(fetcher: string): InlineFetch | null {
    if (!this.#deps.slots.has(fetcher) || !this.#inFlight.tryAcquire()) return null;
    let started = false;
    return {
      run: async (input, owner, link, decision) => {
        if (started) throw new Error('an inline fetch runs once');
        started = true;
        try {
          await this.#run(input, owner, link, decision);
        } finally {
          this.#inFlight.release();
        }
      },
    };
  }

  async #run(input: FetchJobInput, owner: string, link: LinkRecord | undefined, decision: OutcomeLinkChange | undefined): Promise<void> {
    const { logger, claims } = this.#deps;
    // The id the fetch job would have had: the fetch's log lines carry it as they would, and duplicates share it.
    const id = fetchJobId(input.linkId, input.attemptsBefore ?? 0, input.fetcher, input.retryOf !== undefined, input.generation ?? 0);
    if (this.#running.has(id) || (claims && !(await claims.claim(id, owner, input.url)))) {
      logger.debug({ linkId: input.linkId, jobId: id }, 'inline fetch: another route job of this link is fetching it');
      return;
    }
    this.#running.add(id);
    try {
      await this.#fetch(input, id, link, decision);
    } finally {
      this.#running.delete(id);
      // Not awaited: the route job need not wait for it, and a claim left behind expires.
      void claims?.release(id, owner, input.url).catch((err: unknown) => logger.warn({ err, jobId: id }, 'inline fetch: could not release its claim (it expires)'));
    }
  }

  async #fetch(input: FetchJobInput, id: string, link: LinkRecord | undefined, decision: OutcomeLinkChange | undefined): Promise<void> {
    const { processFetch, logger, slots, signal } = this.#deps;
    // The router's decision, until a write of the link carries it (the fetch processor clears it then).
    const pendingLink: PendingLinkWrite | undefined = decision ? { change: decision } : undefined;
    const job: FetchJobHandle & { queueName: string } = {
      id,
      data: input,
      ...(link ? { link } : {}),
      ...(pendingLink ? { pendingLink } : {}),
      queueName: fetchQueueName(input.fetcher),
      timestamp: Date.now(),
      attemptsStarted: 1,
      moveToDelayed: async (timestamp) => {
        await this.#handOff(job.data as FetchJobInput, pendingLink, Math.max(1, timestamp - Date.now()));
      },
      // What the processor keeps for the job's next run (a count of waits) goes with the job it hands off.
      updateData: async (data) => {
        job.data = data;
      },
    };
    let release: (() => void) | null = null;
    try {
      release = slots.tryTake(input.fetcher) ?? (await slots.take(input.fetcher, signal));
      await processFetch(job, undefined, { onRequestDone: release });
    } catch (err) {
      if (err instanceof DelayedError) return;
      // Postgres or Redis away: the fetch worker would meet the same outage at once, fetching the page again for
      // nothing. The route job is parked instead (and Postgres waited for) like any job that met it.
      if (isInfraError(err)) throw err;
      logger.warn({ err, linkId: input.linkId, jobId: job.id }, 'inline fetch failed: the link goes to the fetch queue');
      await this.#handOff(input, pendingLink);
    } finally {
      release?.();
    }
  }

  /**
   * The fetch job the router would have added, after the router's decision is written on the link as it would have
   * been (status `fetching`, the fetcher: what the reconciler and the status counts read) unless a write already
   * carried it. A link finished meanwhile gets no job. A decision that cannot be written (Postgres away) does not keep
   * the link from its job: the fetch worker rides out the outage, and the link still names its route job's generation.
   */
  async #handOff(input: FetchJobInput, pendingLink: PendingLinkWrite | undefined, delayMs?: number): Promise<void> {
    const { enqueueFetch, links, logger } = this.#deps;
    const change = pendingLink?.change;
    if (change) {
      let unfinished = true;
      try {
        unfinished = await links.updateUnlessFinished(input.linkId, change);
        pendingLink.change = null;
      } catch (err) {
        logger.warn({ err, linkId: input.linkId }, 'inline fetch: could not write the router\'s decision on the link; its fetch job is added all the same');
      }
      if (!unfinished) {
        logger.debug({ linkId: input.linkId }, 'inline fetch: the link finished meanwhile; no fetch job');
        return;
      }
    }
    await enqueueFetch(input, delayMs);
  }
}
