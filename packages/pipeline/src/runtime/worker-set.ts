import { setMaxListeners } from 'node:events';
import type { Job } from 'bullmq';
import { DelayedError, isRedisConnectionError, type Worker } from '@crawler/queue';
import { ERROR_TYPES, LINK_STATUSES, type Logger, type PipelineMetrics } from '@crawler/core';
import type { LinkRepo } from '../ports.js';
import { delayJob } from '../job-control.js';
import { infraRetryDelayMs, isDatabaseUnavailable, isInfraError, isStalledError } from './infra-errors.js';
import { DatabaseGate } from './database-gate.js';

/** How long past the drain deadline a worker may take to close before its connections are dropped. */
const CLOSE_GRACE_MS = 5_000;

/**
 * During an outage every job of every worker parks, hundreds a second: one warning per this interval says so, with
 * how many parked since the last one; each park is at debug. A worker's own errors are logged at most this often too.
 */
export const PARK_WARNING_EVERY_MS = 10_000;

/** Counts events, and says when one per `everyMs` is due to be logged, with how many happened since the last. */
class LogTally {
  #since = 0;
  #lastAt = Number.NEGATIVE_INFINITY;

  constructor(readonly everyMs: number) {}

  /** Count one: the count since the last report (this one included) when another is due, else null. */
  count(): number | null {
    this.#since += 1;
    const now = performance.now();
    if (now - this.#lastAt < this.everyMs) return null;
    const n = this.#since;
    this.#since = 0;
    this.#lastAt = now;
    return n;
  }
}

/** What the worker set needs. */
export interface WorkerSetDeps {
  links: Pick<LinkRepo, 'updateUnlessFinished'>;
  logger: Logger;
  /** Cap of the doubling delay a job waits out when our own infrastructure was unreachable. */
  infraRetryMaxMs: number;
  /** Names of the queues this process consumes, filled as workers are added (the idle check reads it). */
  served: Set<string>;
  /**
   * Resolves when Postgres takes writes (pingDatabase): with it, jobs wait while Postgres cannot take them
   * (DatabaseGate) instead of running, failing their writes and running again. @defaultValue none: jobs always run
   */
  probeDatabase?: () => Promise<void>;
  /** Where stalled jobs are counted (crawler_jobs_stalled_total). @defaultValue none */
  metrics?: Pick<PipelineMetrics, 'jobStalled'>;
}

/**
 * The BullMQ workers of one process: each added worker's failures are recorded on its link, processors ride out
 * infrastructure outages, and close drains them, aborting in-flight fetches after a deadline.
 */
export class WorkerSet {
  readonly #deps: WorkerSetDeps;
  readonly #workers: Worker[] = [];
  readonly #abort = new AbortController();
  readonly #parked = new LogTally(PARK_WARNING_EVERY_MS);
  readonly #gate: DatabaseGate | null;

  constructor(deps: WorkerSetDeps) {
    this.#deps = deps;
    this.#gate = deps.probeDatabase ? new DatabaseGate({ probe: deps.probeDatabase, logger: deps.logger.child({ component: 'database-gate' }), signal: this.#abort.signal }) : null;
    // Every fetch in flight and every job waiting for a fetch slot listens to this one signal (and stops listening
    // when done): with 32 slots that is dozens of listeners, none leaked, which Node would warn about past 10.
    setMaxListeners(0, this.#abort.signal);
  }

  /** Aborted when a close's drain deadline passes: fetches listen to it. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /**
   * A processor that rides out Postgres and Redis outages: a job that failed because our own infrastructure was
   * unreachable is parked with a doubling delay instead of using up its attempts (and failing its link). When Redis
   * itself is away the job cannot be parked; it stalls, and BullMQ or the reconciler runs it again. While Postgres
   * cannot take writes, jobs wait for it before they start (DatabaseGate).
   */
  guard<T>(processor: (job: Job, token?: string) => Promise<T>): (job: Job, token?: string) => Promise<T> {
    return async (job, token) => {
      try {
        await this.#gate?.pass();
        return await processor(job, token);
      } catch (err) {
        if (err instanceof DelayedError || !isInfraError(err)) throw err;
        if (isDatabaseUnavailable(err)) this.#gate?.close(err);
        const delayMs = infraRetryDelayMs(job.attemptsStarted ?? 1, this.#deps.infraRetryMaxMs);
        this.#noteParked(err, { jobId: job.id, queue: job.queueName, delayMs });
        try {
          return await delayJob(job, token, delayMs);
        } catch (parked) {
          if (parked instanceof DelayedError) throw parked;
          throw err;
        }
      }
    };
  }

  #noteParked(err: unknown, fields: Record<string, unknown>): void {
    const parked = this.#parked.count();
    if (parked === null) this.#deps.logger.debug({ err, ...fields }, 'infrastructure unreachable: job parked for a retry');
    else this.#deps.logger.warn({ err, ...fields, parked }, `infrastructure unreachable: ${parked} jobs parked for a retry since the last warning`);
  }

  add(worker: Worker): void {
    const log = this.#deps.logger.child({ queue: worker.name });
    // An 'error' event without a listener would crash the process; a worker must survive Redis hiccups. BullMQ asks
    // again at once when Redis refuses its fetch of the next job (full: thousands a second), so one line per interval
    // says so, with how many errors since the last one.
    const errors = new LogTally(PARK_WARNING_EVERY_MS);
    worker.on('error', (err) => {
      // Redis away: its connection says so once per outage (createRedisConnection), with the address.
      if (isRedisConnectionError(err)) return;
      const n = errors.count();
      if (n !== null) log.error({ err, errors: n }, 'worker error');
    });
    // A stalled job is a worker that stopped taking part: a process killed mid-job, or one whose event loop was blocked
    // past its lock. The worker that noticed (any of the queue's) counts it, so the fleet's sum is the fleet's stalls.
    const stalls = new LogTally(PARK_WARNING_EVERY_MS);
    worker.on('stalled', (jobId) => {
      this.#deps.metrics?.jobStalled?.(worker.name);
      const n = stalls.count();
      if (n !== null) log.warn({ jobId, stalled: n }, 'job stalled: its worker stopped renewing its lock (died or blocked); it runs again');
    });
    worker.on('failed', (job, err) => {
      log.warn({ jobId: job?.id, err }, 'job failed');
      // BullMQ gave up on the job (crashes exhausted its attempts): record it on the link so it is never silently
      // stuck in routing/fetching. A payload too broken to name a link has nothing to update. A job that died of our
      // own infrastructure (Postgres or Redis away, its worker killed) says nothing about the link: the link stays
      // unfinished and the reconciler gives it a new job.
      const linkId = (job?.data as { linkId?: unknown } | undefined)?.linkId;
      const final = job && job.attemptsMade >= (job.opts.attempts ?? 1);
      if (isInfraError(err) || isStalledError(err)) return;
      if (final && typeof linkId === 'string' && /^[0-9a-f-]{36}$/i.test(linkId)) {
        this.#deps.links
          .updateUnlessFinished(linkId, { status: LINK_STATUSES.failed, lastErrorType: ERROR_TYPES.internal, lastError: `${worker.name} job failed: ${err.message}` })
          .catch((e: unknown) => log.error({ err: e, linkId }, 'could not record a failed job on its link'));
      }
    });
    this.#workers.push(worker);
    this.#deps.served.add(worker.name);
  }

  /** Close every worker, waiting for in-flight jobs; after `drainTimeoutMs` their fetches are aborted. */
  async close(drainTimeoutMs: number): Promise<void> {
    const timer = setTimeout(() => this.#abort.abort(), drainTimeoutMs);
    timer.unref();
    try {
      await Promise.all(this.#workers.map((w) => this.#closeWorker(w, drainTimeoutMs + CLOSE_GRACE_MS)));
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Close one worker, waiting at most `withinMs`; past it, its connections are dropped instead. BullMQ's close waits
   * for its blocking connection's end: a worker whose blocking command never hears back (it did, idle through a Redis
   * Cluster failover, before connections got a client-side deadline for blocking commands) would hold the shutdown
   * forever.
   */
  async #closeWorker(worker: Worker, withinMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), withinMs);
      timer.unref();
    });
    try {
      if ((await Promise.race([worker.close(), late])) !== 'late') return;
    } finally {
      clearTimeout(timer);
    }
    // The prefix names the shard (QUEUE_SHARDS): which shard's worker hung is what an operator asks next.
    const prefix = worker.opts?.prefix;
    this.#deps.logger.warn({ queue: worker.name, prefix, waitedMs: withinMs }, 'worker did not close in time: its connections are dropped');
    // Not awaited: BullMQ's disconnect waits for the same connection's end as its close does.
    void worker.disconnect().catch((err: unknown) => this.#deps.logger.warn({ err, queue: worker.name, prefix }, 'worker disconnect failed'));
  }
}
