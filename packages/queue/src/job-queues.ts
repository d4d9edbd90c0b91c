import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { ROUTE_QUEUE, DEFAULT_QUEUE_PREFIX, assertQueuePrefix, fetchQueueName } from './catalog/queue-names.js';
import { DEFAULT_JOB_OPTIONS, fetchJobId, routeJobId } from './catalog/job-options.js';
import { FetchJobSchema, RouteJobSchema, type FetchJobInput, type RouteJobInput } from './catalog/payloads.js';

export interface JobQueuesOptions {
  /** A shared ioredis client (see createRedisConnection). The caller owns it and closes it after `close()`. */
  connection: Redis;
  /** Redis key prefix. @defaultValue `{crawler}` */
  prefix?: string;
  /** Overrides of the default job options. */
  jobOptions?: JobsOptions;
  /**
   * Called with a queue's connection errors (Redis away or restarting). Without it BullMQ prints them to stderr.
   * @defaultValue ignore them: the connection retries by itself
   */
  onError?: (err: Error, queue: string) => void;
}

/** Options for one enqueue: a delay (for paused links) on top of the catalog defaults. */
export interface EnqueueOptions {
  /** Wait this many milliseconds before the job becomes available. */
  delayMs?: number;
}

/**
 * The producer side of the catalog: lazily created BullMQ queues, and typed enqueue helpers that validate payloads
 * and derive deterministic job ids (so the same link is never queued twice for the same step).
 */
export class JobQueues {
  readonly prefix: string;
  readonly #connection: Redis;
  readonly #jobOptions: JobsOptions;
  readonly #onError: (err: Error, queue: string) => void;
  readonly #queues = new Map<string, Queue>();

  constructor(opts: JobQueuesOptions) {
    this.#connection = opts.connection;
    this.prefix = assertQueuePrefix(opts.prefix ?? DEFAULT_QUEUE_PREFIX);
    this.#jobOptions = { ...DEFAULT_JOB_OPTIONS, ...opts.jobOptions };
    this.#onError = opts.onError ?? (() => {});
  }

  /** The BullMQ queue called `name`, created on first use. */
  queue(name: string): Queue {
    let q = this.#queues.get(name);
    if (!q) {
      q = new Queue(name, { connection: this.#connection, prefix: this.prefix, defaultJobOptions: this.#jobOptions });
      q.on('error', (err) => this.#onError(err, name));
      this.#queues.set(name, q);
    }
    return q;
  }

  /** The router's queue. */
  routeQueue(): Queue {
    return this.queue(ROUTE_QUEUE);
  }

  /** A fetcher's queue. */
  fetchQueue(fetcher: string): Queue {
    return this.queue(fetchQueueName(fetcher));
  }

  /** Add one route job; a job with the same id that still exists makes this a no-op. */
  async enqueueRoute(input: RouteJobInput, opts: EnqueueOptions = {}): Promise<string> {
    const data = RouteJobSchema.parse(input);
    const jobId = routeJobId(data.linkId, data.generation);
    await this.routeQueue().add('route', data, { jobId, delay: positiveDelay(opts.delayMs), priority: data.priority });
    return jobId;
  }

  /** Add many first-generation route jobs in one round trip. */
  async enqueueRoutes(inputs: RouteJobInput[]): Promise<string[]> {
    if (inputs.length === 0) return [];
    const jobs = inputs.map((input) => {
      const data = RouteJobSchema.parse(input);
      return { name: 'route', data, opts: { jobId: routeJobId(data.linkId, data.generation), priority: data.priority } };
    });
    await this.routeQueue().addBulk(jobs);
    return jobs.map((j) => j.opts.jobId);
  }

  /** Add one fetch job to its fetcher's queue. */
  async enqueueFetch(input: FetchJobInput, opts: EnqueueOptions = {}): Promise<string> {
    const data = FetchJobSchema.parse(input);
    const jobId = fetchJobId(data.linkId, data.attemptsBefore, data.fetcher, data.retryOf !== undefined, data.generation);
    await this.fetchQueue(data.fetcher).add('fetch', data, { jobId, delay: positiveDelay(opts.delayMs), priority: data.priority });
    return jobId;
  }

  /** Jobs waiting, active, delayed or prioritized on the given queues (all created queues when omitted). */
  async countJobs(names: string[] = [...this.#queues.keys()]): Promise<QueueCounts> {
    const total: QueueCounts = { waiting: 0, active: 0, delayed: 0, prioritized: 0 };
    for (const name of names) {
      const c = await this.queue(name).getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      total.waiting += c.waiting ?? 0;
      total.active += c.active ?? 0;
      total.delayed += c.delayed ?? 0;
      total.prioritized += c.prioritized ?? 0;
    }
    return total;
  }

  /**
   * Delayed jobs that fall due within `horizonMs` of now. BullMQ scores its delayed set as dueMs × 0x1000 + a counter
   * (commands/includes/getDelayedScore.lua), so one ZCOUNT per queue answers without loading the jobs.
   */
  async countDelayedDueWithin(names: string[], horizonMs: number, nowMs = Date.now()): Promise<number> {
    let total = 0;
    for (const name of names) {
      const key = this.queue(name).keys.delayed ?? `${this.prefix}:${name}:delayed`;
      total += await this.#connection.zcount(key, '-inf', (nowMs + horizonMs + 1) * 0x1000 - 1);
    }
    return total;
  }

  /** Remove every job and key of the given queues: for tests and `crawl reset`-style tooling. */
  async obliterate(names: string[]): Promise<void> {
    for (const name of names) await this.queue(name).obliterate({ force: true });
  }

  /** Close the queue objects (not the shared connection). Idempotent. */
  async close(): Promise<void> {
    const queues = [...this.#queues.values()];
    this.#queues.clear();
    await Promise.allSettled(queues.map((q) => q.close()));
  }
}

/** Job counts by state, summed over queues. */
export interface QueueCounts {
  waiting: number;
  active: number;
  delayed: number;
  prioritized: number;
}

function positiveDelay(ms: number | undefined): number | undefined {
  return ms !== undefined && ms > 0 ? Math.ceil(ms) : undefined;
}
