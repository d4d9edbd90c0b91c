import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ERROR_TYPES, LINK_STATUSES, canonicalFetcherName, resumeFetcherAfterPause, type Clock, type Logger } from '@crawler/core';
import { ROUTE_QUEUE, fetchJobId, fetchQueueName, fetcherOfQueue, routeJobId, type JobPresence, type JobQueues, type JobRef, type RouteJobInput, type UnservedQueue } from '@crawler/queue';
import { IN_PROGRESS_STATUSES } from '@crawler/db';
import type { ReconcileLinks, StaleLink } from '../ports.js';
import { Periodic } from '../periodic.js';

/** Settings of the reconciler. */
export interface ReconcileSettings {
  /** Links updated more recently than this are left alone: their job may be between two queues. */
  graceMs: number;
  /** Links read per statement (and job lookups per Redis round trip). */
  batchSize: number;
  /**
   * New generations a link may get because its job died; at this many, a link whose job failed again fails with
   * `job_lost` instead. @defaultValue unlimited
   */
  maxRescues?: number;
}

/** What one reconcile pass did. */
export interface ReconcileReport {
  /** Unfinished links older than the grace period that were looked at. */
  scanned: number;
  /** Of those, carried by a live job (nothing done). */
  alive: number;
  /** Links given a route job again, by status. */
  requeued: Record<string, number>;
  /** Of the requeued, those whose job id was taken by a dead job: moved to the next generation first. */
  nextGeneration: number;
  /** Paused links among the requeued: their route job waits out the rest of the pause. */
  pausedDelayed: number;
  /** Links failed with `job_lost`: their jobs died more than `maxRescues` times. */
  lost: number;
  /**
   * Queues with jobs ready to run and no worker connected (only when the deps name the queues to check): their links
   * stay where they are, live jobs and all, until a process serves the queue — a reconcile cannot help them.
   */
  unserved?: UnservedQueue[];
  durationMs: number;
}

export interface ReconcilerDeps {
  /** The links table (@crawler/db LinkStore). */
  links: ReconcileLinks;
  queues: JobQueues;
  clock: Clock;
  logger: Logger;
  settings: ReconcileSettings;
  /** Queues to check for ready jobs that no worker serves (the route queue and the fleet's fetch queues). */
  queueNames?: readonly string[];
}



/**
 * Postgres is the truth, Redis a cache of work: every unfinished link (queued, routing, fetching, paused) that no live
 * job carries gets a route job again. Run after Redis lost its data, after jobs failed while Postgres was away, or
 * after a crash between a link's write and its next job. Idempotent: the job id is derived from the link id and its
 * generation, so a job that exists is never doubled; when that id is taken by a dead (completed or failed) job, the
 * link moves to the next generation first. A paused link's job waits out the rest of its pause.
 */
export async function reconcileLinks(deps: ReconcilerDeps): Promise<ReconcileReport> {
  const started = performance.now();
  const report: ReconcileReport = { scanned: 0, alive: 0, requeued: {}, nextGeneration: 0, pausedDelayed: 0, lost: 0, durationMs: 0 };
  const cutoff = new Date(deps.clock.now().getTime() - deps.settings.graceMs);
  for (const status of IN_PROGRESS_STATUSES) {
    let after: { updatedAt: Date; id: string } = { updatedAt: new Date(0), id: '00000000-0000-0000-0000-000000000000' };
    for (;;) {
      const batch = await deps.links.staleUnfinished(status, cutoff, after, deps.settings.batchSize);
      if (batch.length === 0) break;
      report.scanned += batch.length;
      await reconcileBatch(deps, batch, report);
      // The cursor is the last row as scanned; a link requeued meanwhile moved past the cutoff and is not seen again.
      const last = batch[batch.length - 1]!;
      after = { updatedAt: last.updatedAt, id: last.id };
      if (batch.length < deps.settings.batchSize) break;
    }
  }
  if (deps.queueNames && deps.queueNames.length > 0) report.unserved = await deps.queues.unservedQueues(deps.queueNames);
  report.durationMs = Math.round(performance.now() - started);
  return report;
}

/** What to do about a queue nobody serves, in a sentence for the log and `crawl reconcile`. */
export function unservedAdvice(u: UnservedQueue): string {
  const fetcher = fetcherOfQueue(u.queue);
  const who = fetcher
    ? `a fetcher with ${fetcher} in FETCHERS (node apps/fetcher/dist/main.js, crawl run); their links stay 'fetching' until one runs`
    : `a router (node apps/router/dist/main.js, crawl run); their links stay 'queued' until one runs`;
  return `${u.ready} jobs wait on ${u.label} and no worker is connected to it: start ${who}`;
}

async function reconcileBatch(deps: ReconcilerDeps, links: StaleLink[], report: ReconcileReport): Promise<void> {
  // Every job that may carry a link: its current route job and the fetch jobs its router or a switch would create, on
  // the link's shard. A job left on another shard by a change of QUEUE_SHARDS is not seen: the link gets a new
  // generation on its shard, and the old job is skipped as stale wherever it runs. Looked up in bulk (one pipeline per
  // queue), and the jobs given back are added in bulk (one MULTI per shard): a pass is a few round trips per batch.
  const refs: JobRef[] = [];
  const owner: number[] = [];
  for (const [i, link] of links.entries()) {
    for (const [queue, jobId] of candidateJobs(link)) {
      refs.push({ queue, url: link.url, jobId });
      owner.push(i);
    }
  }
  const states = await deps.queues.jobStates(refs);
  const found = links.map((): JobPresence[] => []);
  for (const [k, state] of states.entries()) found[owner[k]!]!.push(state);
  const now = deps.clock.now().getTime();
  const requeue: Array<{ link: StaleLink; job: RouteJobInput; delayMs: number }> = [];
  for (const [i, link] of links.entries()) {
    const jobs = found[i]!;
    if (jobs.includes('live')) {
      report.alive += 1;
      continue;
    }
    let generation = link.generation;
    const jobFailed = jobs.includes('failed');
    if (jobFailed && deps.settings.maxRescues !== undefined && link.rescues >= deps.settings.maxRescues) {
      // Its jobs died again and again (each failed with a crash or a stall): the page is what kills its workers.
      const message = `the jobs carrying this link died ${link.rescues + 1} times (worker crash, out-of-memory kill or stall); not retried`;
      if (await deps.links.failIfGeneration(link.id, link.generation, ERROR_TYPES.jobLost, message)) {
        report.lost += 1;
        deps.logger.warn({ linkId: link.id, url: link.url, rescues: link.rescues }, 'reconcile: link failed, its jobs keep dying');
      }
      continue;
    }
    if (jobs.some((s) => s !== 'missing')) {
      // A dead job holds the id: a new id means a new generation (a stale job of the old one is then ignored).
      const moved = await deps.links.nextGeneration(link.id, link.generation, jobFailed);
      if (moved === null) continue;
      generation = moved;
      report.nextGeneration += 1;
    }
    const delayMs = link.pausedUntil ? link.pausedUntil.getTime() - now : 0;
    requeue.push({ link, job: { linkId: link.id, url: link.url, generation, reason: 'reroute', ...resumeEscalation(link), ...(link.priority !== null && link.priority !== undefined ? { priority: link.priority } : {}) }, delayMs });
  }
  await deps.queues.enqueueRoutes(
    requeue.map((r) => r.job),
    requeue.map((r) => ({ delayMs: r.delayMs })),
  );
  for (const { link, job, delayMs } of requeue) {
    if (delayMs > 0) report.pausedDelayed += 1;
    report.requeued[link.status] = (report.requeued[link.status] ?? 0) + 1;
    deps.logger.debug({ linkId: link.id, status: link.status, generation: job.generation, delayMs: Math.max(0, delayMs) }, 'reconcile: link requeued');
  }
}

/**
 * A paused link's resume carries what the fetch worker's own resume would have: after a block the next tool and the
 * refused one (asking the learned store again would hand back the fetcher the site just blocked), after a rate limit
 * the same fetcher.
 */
function resumeEscalation(link: StaleLink): { nextFetcher?: string; blockedFetcher?: string } {
  if (link.status !== LINK_STATUSES.paused || !link.fetcher || !link.lastErrorType) return {};
  const fetcher = canonicalFetcherName(link.fetcher);
  const next = resumeFetcherAfterPause(link.lastErrorType, fetcher);
  return next ? { nextFetcher: next, ...(next !== fetcher ? { blockedFetcher: fetcher } : {}) } : {};
}

/** [queue, job id] of every job that may carry the link now. */
function candidateJobs(link: StaleLink): Array<[string, string]> {
  const out: Array<[string, string]> = [[ROUTE_QUEUE, routeJobId(link.id, link.generation)]];
  if (link.fetcher) {
    const fetcher = canonicalFetcherName(link.fetcher);
    let queue: string;
    try {
      queue = fetchQueueName(fetcher);
    } catch {
      return out; // a fetcher name no queue can have: no fetch job exists for it
    }
    // The router's fetch job, and a switched-fetcher retry's (which carries `.retry`).
    out.push([queue, fetchJobId(link.id, link.attemptCount, fetcher, false, link.generation)]);
    out.push([queue, fetchJobId(link.id, link.attemptCount, fetcher, true, link.generation)]);
  }
  return out;
}

/** Options for {@link ReconcileLoop}. */
export interface ReconcileLoopOptions extends ReconcilerDeps {
  redis: Redis;
  /** Key of the fleet-wide lease. */
  leaseKey: string;
  /** Time between passes; 0 runs only the pass at start. */
  intervalMs: number;
  /**
   * A queue found unserved is looked at again after this long before it is reported: a worker restarting somewhere
   * in the fleet leaves its queue without a connection for a moment. @defaultValue 2000
   */
  unservedConfirmMs?: number;
}

/**
 * Runs {@link reconcileLinks} when a worker process starts and then every `intervalMs`, under a Redis lease so one
 * process in the fleet reconciles at a time (the others skip their turn). A failed pass (Redis or Postgres away) is
 * logged and tried again at the next tick.
 */
export class ReconcileLoop {
  readonly #opts: ReconcileLoopOptions;
  readonly #token = randomUUID();
  readonly #periodic: Periodic<ReconcileReport | null>;
  /** Passes this process ran: the first, at start, may find this process's own workers not yet connected. */
  #passes = 0;

  constructor(opts: ReconcileLoopOptions) {
    this.#opts = opts;
    this.#periodic = new Periodic(() => this.#pass(), opts.intervalMs);
  }

  /** Run a first pass now and schedule the next ones. */
  start(): void {
    this.#periodic.start({ now: true });
  }

  /** One pass if this process gets the lease; null when another process holds it (or a pass is running here). */
  runOnce(): Promise<ReconcileReport | null> {
    return this.#periodic.runOnce();
  }

  async #pass(): Promise<ReconcileReport | null> {
    const { redis, leaseKey, logger } = this.#opts;
    // The lease outlives a pass by far; a process that dies mid-pass frees it when it expires.
    const leaseMs = Math.max(60_000, this.#opts.intervalMs * 2);
    try {
      const got = await redis.set(leaseKey, this.#token, 'PX', leaseMs, 'NX');
      if (got !== 'OK') return null;
      try {
        const report = await reconcileLinks(this.#opts);
        const requeued = Object.values(report.requeued).reduce((a, b) => a + b, 0);
        if (requeued > 0) logger.warn({ report }, `reconcile: ${requeued} unfinished links had no live job and were requeued`);
        else logger.debug({ report }, 'reconcile: every unfinished link has a live job');
        const first = this.#passes++ === 0;
        if (!first) for (const u of await this.#confirmUnserved(report.unserved ?? [])) logger.warn({ queue: u.label, ready: u.ready }, `queue unserved: ${unservedAdvice(u)}`);
        return report;
      } finally {
        // Released only if still ours (the lease may have expired and been taken meanwhile).
        await redis.eval(RELEASE_LUA, 1, leaseKey, this.#token);
      }
    } catch (err) {
      logger.warn({ err }, 'reconcile pass failed; will try again');
      return null;
    }
  }

  /** The queues of `found` still unserved after a short wait (a worker of the fleet may have been restarting). */
  async #confirmUnserved(found: UnservedQueue[]): Promise<UnservedQueue[]> {
    if (found.length === 0) return [];
    await new Promise((resolve) => setTimeout(resolve, this.#opts.unservedConfirmMs ?? 2_000).unref());
    const again = await this.#opts.queues.unservedQueues([...new Set(found.map((u) => u.queue))], [...new Set(found.map((u) => u.shard))]);
    return again.filter((a) => found.some((u) => u.label === a.label));
  }

  /** Stop scheduling and wait for a running pass. Idempotent. */
  stop(): Promise<void> {
    return this.#periodic.stop();
  }
}

const RELEASE_LUA = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
