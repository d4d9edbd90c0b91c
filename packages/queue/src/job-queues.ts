import type { JobType, JobsOptions } from 'bullmq';
import { Queue } from './bullmq.js';
import type { Redis } from 'ioredis';
import { ROUTE_QUEUE, DEFAULT_QUEUE_PREFIX, assertQueuePrefix, fetchQueueName } from './catalog/queue-names.js';
import { DEFAULT_JOB_OPTIONS, fetchJobId, routeJobId } from './catalog/job-options.js';
import { FetchJobSchema, RouteJobSchema, type FetchJobInput, type RouteJobInput } from './catalog/payloads.js';
import { MAX_QUEUE_SHARDS, shardOfUrl, shardPrefix } from './shards/queue-shards.js';

export interface JobQueuesOptions {
  /** A shared ioredis client (see createRedisConnection). The caller owns it and closes it after `close()`. */
  connection: Redis;
  /** Redis key prefix (of shard 0, and of the fleet's shared keys). @defaultValue `{crawler}` */
  prefix?: string;
  /**
   * How many shards the queues are split into (`QUEUE_SHARDS`): each has its own hash tag (see shardPrefix) and a
   * link's jobs go to the shard of its registrable domain. 1 is the unsharded layout. @defaultValue 1
   */
  shards?: number;
  /** Overrides of the default job options. */
  jobOptions?: JobsOptions;
  /**
   * Called with a queue's connection errors (Redis away or restarting). Without it BullMQ prints them to stderr.
   * @defaultValue ignore them: the connection retries by itself
   */
  onError?: (err: Error, queue: string) => void;
}

/** A single add waiting for the next bulk add of its queue (JobQueues.#add). */
interface PendingAdd {
  job: { name: string; data: unknown; opts: JobsOptions };
  resolve: () => void;
  reject: (err: unknown) => void;
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
  /** The base prefix: shard 0's queues and the fleet's shared keys (leases, probe store, events) live under it. */
  readonly prefix: string;
  /** How many shards the queues are split into. */
  readonly shards: number;
  /** Every shard's key prefix, by shard number. */
  readonly prefixes: readonly string[];
  readonly #connection: Redis;
  readonly #jobOptions: JobsOptions;
  readonly #onError: (err: Error, queue: string) => void;
  readonly #queues = new Map<string, Queue>();
  #pendingAdds = new Map<Queue, PendingAdd[]>();
  #flushScheduled = false;

  constructor(opts: JobQueuesOptions) {
    this.#connection = opts.connection;
    this.prefix = assertQueuePrefix(opts.prefix ?? DEFAULT_QUEUE_PREFIX);
    this.shards = opts.shards ?? 1;
    if (!Number.isInteger(this.shards) || this.shards < 1 || this.shards > MAX_QUEUE_SHARDS) throw new Error(`invalid shard count ${this.shards}: 1..${MAX_QUEUE_SHARDS}`);
    this.prefixes = Array.from({ length: this.shards }, (_, i) => shardPrefix(this.prefix, i, this.shards));
    this.#jobOptions = { ...DEFAULT_JOB_OPTIONS, ...opts.jobOptions };
    this.#onError = opts.onError ?? (() => {});
  }

  /** Every shard number, 0..shards-1. */
  allShards(): number[] {
    return Array.from({ length: this.shards }, (_, i) => i);
  }

  /** The shard a URL's jobs go to (its registrable domain's). */
  shardOf(url: string): number {
    return shardOfUrl(url, this.shards);
  }

  /** The key prefix of one shard. */
  prefixOf(shard: number): string {
    const p = this.prefixes[shard];
    if (p === undefined) throw new Error(`no shard ${shard} (of ${this.shards})`);
    return p;
  }

  /** The BullMQ queue called `name` on `shard`, created on first use. */
  queue(name: string, shard = 0): Queue {
    const key = `${shard}/${name}`;
    let q = this.#queues.get(key);
    if (!q) {
      q = new Queue(name, { connection: this.#connection, prefix: this.prefixOf(shard), defaultJobOptions: this.#jobOptions });
      q.on('error', (err) => this.#onError(err, name));
      this.#queues.set(key, q);
    }
    return q;
  }

  /** The queue called `name` on the shard of `url`: where that link's job is or would be. */
  queueFor(name: string, url: string): Queue {
    return this.queue(name, this.shardOf(url));
  }

  /** The router's queue on one shard. */
  routeQueue(shard = 0): Queue {
    return this.queue(ROUTE_QUEUE, shard);
  }

  /** A fetcher's queue on one shard. */
  fetchQueue(fetcher: string, shard = 0): Queue {
    return this.queue(fetchQueueName(fetcher), shard);
  }

  /** Add one route job; a job with the same id that still exists makes this a no-op. */
  async enqueueRoute(input: RouteJobInput, opts: EnqueueOptions = {}): Promise<string> {
    const data = RouteJobSchema.parse(input);
    const jobId = routeJobId(data.linkId, data.generation);
    await this.#add(this.routeQueue(this.shardOf(data.url)), 'route', data, { jobId, delay: positiveDelay(opts.delayMs), priority: data.priority });
    return jobId;
  }

  /**
   * Add many route jobs, `opts[i]` applying to `inputs[i]` (a delay for a paused link): one MULTI per shard and chunk
   * of {@link BULK_CHUNK} jobs. A job whose id still exists makes its add a no-op, as with {@link enqueueRoute}.
   */
  async enqueueRoutes(inputs: RouteJobInput[], opts: readonly (EnqueueOptions | undefined)[] = []): Promise<string[]> {
    if (inputs.length === 0) return [];
    const jobs = inputs.map((input, i) => {
      const data = RouteJobSchema.parse(input);
      const delay = positiveDelay(opts[i]?.delayMs);
      return { name: 'route', data, opts: { jobId: routeJobId(data.linkId, data.generation), priority: data.priority, ...(delay !== undefined ? { delay } : {}) } };
    });
    const byShard = new Map<number, typeof jobs>();
    for (const job of jobs) {
      const shard = this.shardOf(job.data.url);
      const batch = byShard.get(shard);
      if (batch) batch.push(job);
      else byShard.set(shard, [job]);
    }
    // addBulk is one MULTI: on a cluster its keys must share a slot, hence one call per shard; chunks keep one MULTI
    // from blocking Redis for long.
    await Promise.all(
      [...byShard].map(async ([shard, batch]) => {
        for (let i = 0; i < batch.length; i += BULK_CHUNK) await this.routeQueue(shard).addBulk(batch.slice(i, i + BULK_CHUNK));
      }),
    );
    return jobs.map((j) => j.opts.jobId);
  }

  /**
   * Where each job is, in bulk: `live` (waiting, active, delayed, prioritized, paused or waiting for children: it will
   * still run), `completed`, `failed`, or `missing` (no such job, or removed). Three O(1)/O(log n) commands per job,
   * pipelined per queue in chunks of {@link BULK_CHUNK}: BullMQ's `getJobState` answers the same question one round
   * trip at a time, and for a job that is waiting or missing it scans the wait list (LPOS, O(queue length)), which
   * made a reconcile pass quadratic in the queue's length. A job's hash (`queue.toKey(id)`) exists from its add to its
   * removal; finished jobs are members of the completed or failed set (`queue.keys`). The test checks every state
   * against `getJobState`, so a change in BullMQ's layout fails there.
   */
  async jobStates(refs: readonly JobRef[]): Promise<JobPresence[]> {
    const out = new Array<JobPresence>(refs.length);
    const byQueue = new Map<Queue, number[]>();
    for (const [i, ref] of refs.entries()) {
      const q = this.queueFor(ref.queue, ref.url);
      const list = byQueue.get(q);
      if (list) list.push(i);
      else byQueue.set(q, [i]);
    }
    await Promise.all(
      [...byQueue].map(async ([q, indexes]) => {
        const { completed, failed } = q.keys;
        if (!completed || !failed) throw new Error(`BullMQ queue ${q.name} has no completed/failed keys`);
        for (let c = 0; c < indexes.length; c += BULK_CHUNK) {
          const chunk = indexes.slice(c, c + BULK_CHUNK);
          const pipeline = this.#connection.pipeline();
          for (const i of chunk) {
            const id = refs[i]!.jobId;
            pipeline.exists(q.toKey(id));
            pipeline.zscore(completed, id);
            pipeline.zscore(failed, id);
          }
          const results = (await pipeline.exec()) ?? [];
          for (const [k, i] of chunk.entries()) {
            const [[e1, exists], [e2, done], [e3, dead]] = [results[3 * k]!, results[3 * k + 1]!, results[3 * k + 2]!];
            const err = e1 ?? e2 ?? e3;
            if (err) throw err;
            out[i] = done !== null ? 'completed' : dead !== null ? 'failed' : exists === 1 ? 'live' : 'missing';
          }
        }
      }),
    );
    return out;
  }

  /** Add one fetch job to its fetcher's queue. */
  async enqueueFetch(input: FetchJobInput, opts: EnqueueOptions = {}): Promise<string> {
    const data = FetchJobSchema.parse(input);
    const jobId = fetchJobId(data.linkId, data.attemptsBefore, data.fetcher, data.retryOf !== undefined, data.generation);
    await this.#add(this.fetchQueue(data.fetcher, this.shardOf(data.url)), 'fetch', data, { jobId, delay: positiveDelay(opts.delayMs), priority: data.priority });
    return jobId;
  }

  /**
   * Single adds made in the same turn of the event loop (a router's decisions, a fetch worker's retries) reach Redis as
   * one addBulk per queue: one round trip and one write instead of one each. Each add still resolves only once its
   * job is in Redis. A bulk add that fails is retried job by job (ids are deterministic: a job already added is a
   * no-op), so one bad job fails alone.
   */
  #add(queue: Queue, name: string, data: unknown, opts: JobsOptions): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const list = this.#pendingAdds.get(queue);
      const add: PendingAdd = { job: { name, data, opts }, resolve, reject };
      if (list) list.push(add);
      else this.#pendingAdds.set(queue, [add]);
      if (!this.#flushScheduled) {
        this.#flushScheduled = true;
        setImmediate(() => this.#flushAdds());
      }
    });
  }

  #flushAdds(): void {
    this.#flushScheduled = false;
    const pending = this.#pendingAdds;
    this.#pendingAdds = new Map();
    const one = (q: Queue, p: PendingAdd) => q.add(p.job.name, p.job.data, p.job.opts).then(() => p.resolve(), p.reject);
    for (const [q, list] of pending) {
      for (let i = 0; i < list.length; i += BULK_CHUNK) {
        const chunk = list.slice(i, i + BULK_CHUNK);
        if (chunk.length === 1) {
          void one(q, chunk[0]!);
          continue;
        }
        void q.addBulk(chunk.map((p) => p.job)).then(
          () => {
            for (const p of chunk) p.resolve();
          },
          () => Promise.all(chunk.map((p) => one(q, p))),
        );
      }
    }
  }

  /** Jobs waiting, active, delayed or prioritized on the given queues (all created queues when omitted), summed over `shards`. */
  async countJobs(names: string[] = this.#createdNames(), shards: readonly number[] = this.allShards()): Promise<QueueCounts> {
    const total: QueueCounts = { waiting: 0, active: 0, delayed: 0, prioritized: 0 };
    for (const shard of shards) {
      for (const name of names) {
        const c = await this.queue(name, shard).getJobCounts('waiting', 'active', 'delayed', 'prioritized');
        total.waiting += c.waiting ?? 0;
        total.active += c.active ?? 0;
        total.delayed += c.delayed ?? 0;
        total.prioritized += c.prioritized ?? 0;
      }
    }
    return total;
  }

  /** Job counts of each queue on each shard (`states` as BullMQ names them): for stats, metrics and Bull Board. */
  async countJobsByShard(names: string[], states: JobType[] = ['waiting', 'active', 'delayed', 'prioritized', 'failed']): Promise<ShardQueueCounts[]> {
    const out: ShardQueueCounts[] = [];
    for (const shard of this.allShards()) {
      for (const name of names) out.push({ shard, queue: name, counts: await this.queue(name, shard).getJobCounts(...states) });
    }
    return out;
  }

  /**
   * Job counts keyed by {@link shardedQueueLabel} (`route`, or `route@s1` when there are several shards): the shape
   * of /metrics' queue gauges and `crawl stats`. `shards` limits it to some shards. @defaultValue every shard
   */
  async queueDepths(names: string[], states: JobType[], shards: readonly number[] = this.allShards()): Promise<Record<string, Record<string, number>>> {
    const out: Record<string, Record<string, number>> = {};
    for (const shard of shards) {
      for (const name of names) out[shardedQueueLabel(name, shard, this.shards)] = await this.queue(name, shard).getJobCounts(...states);
    }
    return out;
  }

  /**
   * Workers connected to each queue, keyed like {@link queueDepths}: BullMQ names each worker's Redis connection after
   * its queue and counts them in CLIENT LIST (on a cluster, on the node with the most). A managed Redis that refuses
   * CLIENT LIST counts as one worker, so nothing is reported unserved there.
   */
  async workerCounts(names: readonly string[], shards: readonly number[] = this.allShards()): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const shard of shards) {
      for (const name of names) out[shardedQueueLabel(name, shard, this.shards)] = await this.queue(name, shard).getWorkersCount();
    }
    return out;
  }

  /**
   * Queues with jobs ready to run (waiting or prioritized) and no worker connected: the links those jobs carry do not
   * move until a process serves the queue. Delayed and active jobs are not counted.
   */
  async unservedQueues(names: readonly string[], shards: readonly number[] = this.allShards()): Promise<UnservedQueue[]> {
    const out: UnservedQueue[] = [];
    for (const shard of shards) {
      for (const name of names) {
        const q = this.queue(name, shard);
        const c = await q.getJobCounts('waiting', 'prioritized');
        const ready = (c.waiting ?? 0) + (c.prioritized ?? 0);
        if (ready > 0 && (await q.getWorkersCount()) === 0) out.push({ queue: name, shard, label: shardedQueueLabel(name, shard, this.shards), ready });
      }
    }
    return out;
  }

  /**
   * The links carried by a queue's jobs that no worker has taken yet (waiting, prioritized or delayed), read
   * `batchSize` jobs at a time.
   */
  async *waitingLinkIds(name: string, shard = 0, batchSize = BULK_CHUNK): AsyncGenerator<string[]> {
    const q = this.queue(name, shard);
    for (let start = 0; ; start += batchSize) {
      const jobs = await q.getJobs(['waiting', 'prioritized', 'delayed'], start, start + batchSize - 1, true);
      const ids = jobs.flatMap((j) => (j && typeof (j.data as { linkId?: unknown }).linkId === 'string' ? [(j.data as { linkId: string }).linkId] : []));
      if (ids.length > 0) yield ids;
      if (jobs.length < batchSize) return;
    }
  }

  #createdNames(): string[] {
    return [...new Set([...this.#queues.keys()].map((k) => k.slice(k.indexOf('/') + 1)))];
  }

  /**
   * Delayed jobs that fall due within `horizonMs` of now. BullMQ scores its delayed set as dueMs × 0x1000 + a counter
   * (commands/includes/getDelayedScore.lua), so one ZCOUNT per queue answers without loading the jobs.
   *
   * This reads BullMQ's internal encoding on purpose: its public API has no due time for a job parked with
   * `moveToDelayed` (the job's `delay` is relative to the unrecorded moment it was parked, `timestamp` is its
   * creation), and loading every delayed job to find out would cost O(delayed jobs) per idle check. The encoding is
   * pinned by a test in job-queues.int.test.ts that fails when a BullMQ upgrade changes it.
   */
  async countDelayedDueWithin(names: string[], horizonMs: number, nowMs = Date.now(), shards: readonly number[] = this.allShards()): Promise<number> {
    let total = 0;
    for (const shard of shards) {
      for (const name of names) {
        const key = this.queue(name, shard).keys.delayed ?? `${this.prefixOf(shard)}:${name}:delayed`;
        total += await this.#connection.zcount(key, '-inf', (nowMs + horizonMs + 1) * 0x1000 - 1);
      }
    }
    return total;
  }

  /** Remove every job and key of the given queues on every shard: for tests and `crawl reset`-style tooling. */
  async obliterate(names: string[]): Promise<void> {
    for (const shard of this.allShards()) for (const name of names) await this.queue(name, shard).obliterate({ force: true });
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

/** A queue's name in metrics, stats and Bull Board: the bare name with one shard (today's labels), `name@s<i>` with several. */
export function shardedQueueLabel(name: string, shard: number, shards: number): string {
  return shards <= 1 ? name : `${name}@s${shard}`;
}

/** A queue with jobs ready to run and no worker connected (see JobQueues.unservedQueues). */
export interface UnservedQueue {
  queue: string;
  shard: number;
  /** `fetch-playwright`, or `fetch-playwright@s1` when the queues are sharded. */
  label: string;
  /** Jobs waiting or prioritized. */
  ready: number;
}

/** One queue's job counts on one shard. */
export interface ShardQueueCounts {
  shard: number;
  queue: string;
  counts: Record<string, number>;
}

/** Jobs per MULTI or pipeline in the bulk operations. */
export const BULK_CHUNK = 1000;

/** A job to look up with {@link JobQueues.jobStates}: its queue's name, the URL that picks the shard, its id. */
export interface JobRef {
  queue: string;
  url: string;
  jobId: string;
}

/** Where a job is: `live` will still run; `missing` never existed or was removed. */
export type JobPresence = 'live' | 'completed' | 'failed' | 'missing';

function positiveDelay(ms: number | undefined): number | undefined {
  return ms !== undefined && ms > 0 ? Math.ceil(ms) : undefined;
}
