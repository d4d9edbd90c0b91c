import type { Logger } from '@crawler/core';
import type { LinkStore } from '@crawler/db';
import type { JobQueues } from '@crawler/queue';
import type { ReconcileReport } from '../reconcile/reconciler.js';

/** Delayed jobs due within this window keep the runtime from being idle: politeness gaps and Crawl-delays (≤ 60 s). */
export const IDLE_DELAY_HORIZON_MS = 65_000;

/**
 * The crawler was shut down (a SIGTERM or SIGINT, runtime.close()) while something waited for it to be idle: the work
 * is not done, and the clients the wait reads through are closed. Named so the CLI, which does not load this package
 * for every command, can tell it by its name.
 */
export class CrawlerStoppedError extends Error {
  override name = 'CrawlerStoppedError';
  constructor() {
    super('the crawler was shut down before its work was done');
  }
}

/** What the idle check reads. */
export interface IdleCheckDeps {
  queues: JobQueues;
  /** Every queue of the crawler (the route queue and one per configured fetcher). */
  queueNames(): string[];
  /** The queues this process consumes (empty before any worker starts). */
  served: ReadonlySet<string>;
  /** The shards this process consumes (every shard before any worker starts). */
  servedShards(): readonly number[];
  linkStore: Pick<LinkStore, 'anyInFlight'>;
  /** Requeue unfinished links no job carries (the reconciler, with no grace period). */
  reconcileNow(): Promise<ReconcileReport>;
  logger: Logger;
}

/** `--until-idle`: whether a crawler process has work left, and waiting until it has none. */
export class IdleCheck {
  readonly #deps: IdleCheckDeps;
  /** When the current infrastructure outage began (first failed check), for one log line per outage. */
  #outageSince: number | null = null;

  constructor(deps: IdleCheckDeps) {
    this.#deps = deps;
  }

  /**
   * True when nothing is waiting or running on the queues this process serves. Delayed jobs (paused links, politeness
   * waits) do not count: a paused link must not keep `--until-idle` alive for hours. A process that serves every
   * queue also asks Postgres: links still queued, routing or fetching with no job to carry them (Redis lost its data,
   * a job died while Postgres was away) are reconciled at once and keep it waiting.
   */
  async isIdle(): Promise<boolean> {
    const { queues, served } = this.#deps;
    // A process serving some queues must not wait forever on jobs only other processes (or fetchers) will take.
    const names = served.size > 0 ? [...served] : this.#deps.queueNames();
    const shards = this.#deps.servedShards();
    const c = await queues.countJobs(names, shards);
    if (c.waiting + c.active + c.prioritized > 0) return false;
    // A job parked for a politeness gap or a Crawl-delay (capped at a minute) is still work in progress: its link stays
    // routing/fetching. A paused link's delayed re-route is not, whatever its length (a Retry-After can be short), and
    // must not keep `--until-idle` alive: its link is `paused`.
    const parkedSoon = c.delayed > 0 && (await queues.countDelayedDueWithin(names, IDLE_DELAY_HORIZON_MS, Date.now(), shards)) > 0;
    const servesAll = this.#deps.queueNames().every((q) => served.has(q)) && shards.length === queues.shards;
    if (!parkedSoon && !servesAll) return true;
    if (!(await this.#deps.linkStore.anyInFlight())) return true;
    if (parkedSoon) return false;
    // Unfinished links and no job anywhere: the work was lost, not finished. Rebuild it from Postgres.
    const report = await this.#deps.reconcileNow();
    this.#deps.logger.info({ report }, 'idle check: unfinished links without jobs were requeued');
    return false;
  }

  /**
   * Resolve once the queues are idle on two checks in a row (a job between queues is never missed: the router adds
   * the fetch job before its own job completes, so a check can only miss a link in the microseconds between reading
   * one queue and the next, and the confirming check `confirmMs` later reads both again). Through a Postgres or Redis
   * outage it keeps waiting (one warning per outage), and goes on when the service is back. Once `stopped()` says the
   * crawler is shutting down it rejects with CrawlerStoppedError instead of polling closed clients forever.
   */
  async waitUntilIdle(opts: { pollMs?: number; confirmMs?: number; onTick?: () => void | Promise<void>; stopped?: () => boolean } = {}): Promise<void> {
    // Each check is one Redis round trip (and a Postgres one once the queues are empty): polling often costs nothing
    // next to a crawl's thousands of commands a second, and a crawl ends when its last page is done, not a poll later.
    // The confirmation only has to outlast the gap between reading one queue and the next (microseconds).
    const pollMs = opts.pollMs ?? 50;
    const confirmMs = opts.confirmMs ?? 20;
    const log = this.#deps.logger;
    let quiet = 0;
    while (quiet < 2) {
      await new Promise((r) => setTimeout(r, quiet === 1 ? confirmMs : pollMs));
      if (opts.stopped?.()) throw new CrawlerStoppedError();
      try {
        await opts.onTick?.();
        quiet = (await this.isIdle()) ? quiet + 1 : 0;
        if (this.#outageSince !== null) {
          log.info({ outageMs: Date.now() - this.#outageSince }, 'idle check: Postgres and Redis answer again');
          this.#outageSince = null;
        }
      } catch (err) {
        quiet = 0;
        if (this.#outageSince === null) {
          this.#outageSince = Date.now();
          log.warn({ err }, 'idle check failed (Postgres or Redis unreachable?); waiting for it to come back');
        }
      }
    }
  }
}
