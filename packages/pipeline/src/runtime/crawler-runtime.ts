import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { FETCHERS, canonicalFetcherName, type Clock, type Logger, type PipelineMetrics } from '@crawler/core';
import { JobQueues, ROUTE_QUEUE, Worker, closeRedisConnection, fetchQueueName, fetcherOfQueue, type QueueCounts } from '@crawler/queue';
import { pingDatabase, type CrawlStore, type LinkStore, type PrismaClient, type ScheduleStore } from '@crawler/db';
import type { RevisitPolicy } from '@crawler/core';
import { RevisitScheduler } from '../schedule/revisit-scheduler.js';
import { SitemapRecheck } from '../schedule/sitemap-recheck.js';
import type { CrawlerConfig } from '../config/crawler-config.js';
import type { LinkRepo } from '../ports.js';
import { enqueueLinks, type EnqueueResult } from '../links/enqueue-links.js';
import { createRouteProcessor, type RouterDeps } from '../router/route-processor.js';
import { createFetchProcessor, type FetchDeps } from '../fetch/fetch-processor.js';
import { FetchSlots, InlineFetcher, redisInlineClaims } from '../fetch/inline-fetch.js';
import type { CrawlFrontier } from '../crawls/crawl-frontier.js';
import { ReconcileLoop, reconcileLinks, type ReconcileReport } from '../reconcile/reconciler.js';
import { TableStatsLoop } from './table-stats-loop.js';
import { BackgroundLoops } from './background-loops.js';
import { IdleCheck } from './idle-check.js';
import { WorkerSet } from './worker-set.js';
import { pauseSettingsOf } from '../fetch/site-pause.js';
import { assertBrowserExecutable } from './browser-executable.js';


/** How long a stop may spend setting the links of unserved fetch jobs back to `queued`. */
const RETURN_LINKS_BUDGET_MS = 5_000;
/** Everything a running crawler holds; built by createRuntime. */
export interface RuntimeParts {
  config: CrawlerConfig;
  redis: Redis;
  prisma: PrismaClient;
  queues: JobQueues;
  links: LinkRepo;
  /** The links table itself (the reconciler's scan, the idle check): `links` may be a test's stand-in. */
  linkStore: LinkStore;
  /** Link-following crawls: create, discover. */
  crawls: CrawlFrontier;
  /** Crawls in Postgres: view, cancel. */
  crawlStore: CrawlStore;
  /** Revisit policies, refreshes and the scheduler's claims. */
  schedule: ScheduleStore;
  clock: Clock;
  /** Stops the clock's periodic measurement of its offset to Redis TIME (a FleetClock's), if it has one. */
  stopClock?: () => void;
  logger: Logger;
  metrics: PipelineMetrics;
  routerDeps: Omit<RouterDeps, 'settings'>;
  fetchDeps: Omit<FetchDeps, 'settings' | 'signal'>;
  /** Closes browsers and connection pools of the fetchers. */
  closeFetchers(): Promise<void>;
  /** The Chromium the fetcher registry launches (CHROMIUM_PATH), checked when a browser worker starts; null when the fetchers were handed in. */
  chromiumPath: string | null;
  /** Whether close() also closes prisma / redis (false when the caller handed them in). */
  ownsPrisma: boolean;
  ownsRedis: boolean;
  /** The auto-pipelined connection of the gate, the inline claims and the probe store (create-runtime.ts), or `redis` itself; closed with `redis` when owned. */
  commandRedis: Redis;
}

/** Which workers to start in this process. */
export interface StartWorkersOptions {
  /** Run the router. @defaultValue true */
  router?: boolean;
  /** Fetchers to consume (names from config.fetchers). @defaultValue every configured fetcher */
  fetchers?: string[];
}

/**
 * A crawler in one process: producers, the router worker and fetch workers over shared clients, with an idle check
 * for `--until-idle` and one ordered, idempotent shutdown.
 */
export class CrawlerRuntime {
  readonly config: CrawlerConfig;
  readonly queues: JobQueues;
  readonly links: LinkRepo;
  /** The links table (reports, the idle check, the reconciler). */
  readonly linkStore: LinkStore;
  readonly prisma: PrismaClient;
  readonly redis: Redis;
  readonly logger: Logger;
  readonly crawls: CrawlFrontier;
  readonly crawlStore: CrawlStore;
  readonly schedule: ScheduleStore;
  readonly #parts: RuntimeParts;
  readonly #workers: WorkerSet;
  /** Queues this process consumes; the idle check looks only at these (all queues before any worker starts). */
  readonly #served = new Set<string>();
  #closing: Promise<void> | null = null;
  readonly #loops: BackgroundLoops;
  /** Shards this process consumes (QUEUE_SHARDS_CONSUMED), once workers started. */
  #servedShards: readonly number[] = [];
  readonly #idle: IdleCheck;

  constructor(parts: RuntimeParts) {
    this.#parts = parts;
    this.config = parts.config;
    this.queues = parts.queues;
    this.links = parts.links;
    this.linkStore = parts.linkStore;
    this.prisma = parts.prisma;
    this.redis = parts.redis;
    this.logger = parts.logger;
    this.crawls = parts.crawls;
    this.crawlStore = parts.crawlStore;
    this.schedule = parts.schedule;
    this.#workers = new WorkerSet({ links: parts.links, logger: parts.logger, infraRetryMaxMs: parts.config.infraRetryMaxMs, served: this.#served, probeDatabase: () => this.pingPostgres(), metrics: parts.metrics });
    this.#idle = new IdleCheck({
      queues: parts.queues,
      queueNames: () => this.queueNames(),
      served: this.#served,
      servedShards: () => (this.#served.size > 0 ? this.#servedShards : parts.queues.allShards()),
      linkStore: parts.linkStore,
      reconcileNow: () => this.reconcile({ graceMs: 0 }),
      logger: parts.logger,
    });
    this.#loops = new BackgroundLoops({
      // One process at a time per pass, by lease.
      reconcile: () =>
        new ReconcileLoop({
          ...this.#reconcileDeps(this.config.reconcileGraceMs),
          redis: this.redis,
          leaseKey: `${this.queues.prefix}:reconcile:lease`,
          intervalMs: this.config.reconcileIntervalMs,
        }),
      tableStats: () => new TableStatsLoop({ prisma: this.prisma, intervalMs: this.config.tableStatsIntervalMs, logger: this.logger.child({ component: 'table-stats' }) }),
      scheduler: () =>
        new RevisitScheduler({
          schedule: this.schedule,
          queues: this.queues,
          logger: this.logger.child({ component: 'revisit-scheduler' }),
          settings: { intervalMs: this.config.schedulerIntervalMs, batchSize: this.config.schedulerBatchSize, maxQueued: this.config.schedulerMaxQueued },
        }),
      sitemapRecheck: () =>
        new SitemapRecheck({
          schedule: this.schedule,
          readSitemaps: (crawl, previous) => this.crawls.readCrawlSitemaps(crawl, previous),
          admitNew: (crawlId, urls, maxLinks) => this.crawls.admitSitemapUrls(crawlId, urls, maxLinks),
          redis: this.redis,
          prefix: this.queues.prefix,
          logger: this.logger.child({ component: 'sitemap-recheck' }),
          settings: { intervalMs: this.config.sitemapRecheckIntervalMs, maxLinks: this.config.sitemapRecheckMaxLinks, maxNewLinks: this.config.sitemapRecheckMaxNewLinks },
        }),
    });
  }

  /**
   * Give route jobs back to crawl links left `queued` without one (a process died between admitting them and adding
   * their jobs). Harmless when the jobs exist. Returns how many were re-added.
   */
  async requeueStrandedCrawlLinks(olderThanMs = 60_000): Promise<number> {
    const stranded = await this.crawlStore.stranded(olderThanMs);
    for (let i = 0; i < stranded.length; i += 1_000) await this.queues.enqueueRoutes(stranded.slice(i, i + 1_000));
    return stranded.length;
  }

  /** The queue names this crawler uses: the route queue and one per configured fetcher. */
  queueNames(): string[] {
    return [ROUTE_QUEUE, ...this.config.fetchers.map((f) => fetchQueueName(f.name))];
  }

  /** Enqueue URLs (see enqueueLinks). */
  enqueue(
    urls: readonly string[],
    opts: { learningModeEnabled?: boolean; maxAgeSeconds?: number | ReadonlyArray<number | undefined>; revisit?: RevisitPolicy | null; priority?: number } = {},
  ): Promise<EnqueueResult> {
    return enqueueLinks(urls, { ...opts, links: this.links, queues: this.queues, schedule: this.schedule, ...(this.config.crawlTrackingParams ? { trackingParams: this.config.crawlTrackingParams } : {}) });
  }

  /** The revisit scheduler of this process (started with the workers unless SCHEDULER_INTERVAL_MS=0). */
  scheduler(): RevisitScheduler {
    return this.#loops.scheduler();
  }

  /** The sitemap re-read of continuous crawls in this process (started with the workers unless SITEMAP_RECHECK_INTERVAL_MS=0). */
  sitemapRecheck(): SitemapRecheck {
    return this.#loops.sitemapRecheck();
  }

  /** Start the router and/or fetch workers. */
  startWorkers(opts: StartWorkersOptions = {}): void {
    const { config } = this;
    const fetcherNames = config.fetchers.map((f) => f.name);
    const wanted = new Set((opts.fetchers ?? fetcherNames).map(canonicalFetcherName));
    // Before any worker starts: a Chromium that cannot be launched would fail every browser job, not this start.
    if (this.#parts.chromiumPath !== null) assertBrowserExecutable(this.#parts.chromiumPath, fetcherNames.filter((f) => wanted.has(f)));
    // One BullMQ worker per queue per consumed shard. A queue's concurrency is split over its shards (at least one
    // each), so a process runs about as many jobs at once as with one shard; pin browser workers to fewer shards.
    const shards = config.queueShardsConsumed;
    this.#servedShards = shards;
    const perShard = (n: number) => Math.max(1, Math.ceil(n / shards.length));
    const common = {
      connection: this.redis,
      lockDuration: config.lockDurationMs,
      stalledInterval: config.stalledIntervalMs,
      maxStalledCount: 2,
    };
    const processFetch = createFetchProcessor({
      ...this.#parts.fetchDeps,
      signal: this.#workers.signal,
      settings: {
        fetcherNames,
        maxAttempts: config.maxAttempts,
        pauseMaxMs: config.pauseMaxMs,
        pause: pauseSettingsOf(config),
        fetchTimeoutMs: config.fetchTimeoutMs,
        fetchMaxBytes: config.fetchMaxBytes,
        exitTiers: config.exitTiers,
        proxyUnhealthyMs: config.proxyUnhealthyMs,
        wallMaxWaitMs: config.wallMaxWaitMs,
      },
    });
    if (config.fetchers.some((f) => wanted.has(f.name))) this.#parts.fetchDeps.analyzer?.warm?.();
    const router = opts.router ?? true;
    // FETCH_INLINE: this process's router fetches the plain-HTTP links it routes itself while this process's plain-HTTP
    // workers have a slot free (inline-fetch.ts). Browser fetches stay jobs: a page takes long enough there that a job
    // more costs nothing, and their queues are what Bull Board shows of them.
    const inlined = router && config.fetchInline ? config.fetchers.filter((f) => wanted.has(f.name) && f.name === FETCHERS.simpleHttp) : [];
    const maxInline = inlineFetchLimit(config, inlined);
    const slots = inlined.length > 0 && maxInline > 0 ? new FetchSlots(inlined.map((f) => [f.name, f.concurrency] as const)) : null;
    if (router) {
      const processRoute = createRouteProcessor({
        ...this.#parts.routerDeps,
        ...(slots
          ? {
              inline: new InlineFetcher({
                slots,
                processFetch,
                enqueueFetch: (input, delayMs) => this.queues.enqueueFetch(input, { delayMs }),
                links: this.#parts.routerDeps.links,
                claims: redisInlineClaims(this.#parts.commandRedis, (url) => this.queues.prefixOf(this.queues.shardOf(url))),
                logger: this.logger,
                maxInFlight: maxInline,
                signal: this.#workers.signal,
              }),
            }
          : {}),
        settings: {
          learningModeEnabled: config.learningModeEnabled,
          defaultFetcher: config.defaultFetcher,
          fetcherNames,
          confidenceThreshold: config.confidenceThreshold,
          minSampleSize: config.minSampleSize,
          routingHeuristicTypes: config.routingHeuristicTypes,
          domainMemoryEnabled: config.domainMemoryEnabled,
          plainHttpMemoryMs: config.plainHttpMemoryMs,
          probeWallMemoryMs: config.probeWallMemoryMs,
          decisionCacheMs: config.routerDecisionCacheMs,
          pauseMaxMs: config.pauseMaxMs,
          maxAttempts: config.maxAttempts,
          pause: pauseSettingsOf(config),
          exitTiers: config.exitTiers,
          wallMaxWaitMs: config.wallMaxWaitMs,
        },
      });
      const route = this.#workers.guard((job: Job, token?: string) => processRoute(job, token));
      for (const shard of shards) {
        this.#workers.add(new Worker(ROUTE_QUEUE, route, { ...common, prefix: this.queues.prefixOf(shard), concurrency: perShard(config.routerConcurrency) }));
      }
    }
    for (const f of config.fetchers) {
      if (!wanted.has(f.name)) continue;
      // A fetch job takes a slot of its fetcher that the router's inline fetches share (it waits for one while the
      // router's fetches hold them all).
      const fetch = this.#workers.guard(
        slots?.has(f.name)
          ? async (job: Job, token?: string) => {
              const release = await slots.take(f.name, this.#workers.signal);
              try {
                return await processFetch(job, token, { onRequestDone: release });
              } finally {
                release();
              }
            }
          : (job: Job, token?: string) => processFetch(job, token),
      );
      for (const shard of shards) {
        this.#workers.add(new Worker(fetchQueueName(f.name), fetch, { ...common, prefix: this.queues.prefixOf(shard), concurrency: perShard(f.concurrency) }));
      }
    }
    // Every worker process rebuilds lost work from Postgres, keeps the planner's statistics and enqueues due revisits.
    this.#loops.start();
  }

  #reconcileDeps(graceMs: number) {
    return {
      links: this.#parts.linkStore,
      queues: this.queues,
      clock: this.#parts.clock,
      logger: this.logger.child({ component: 'reconciler' }),
      settings: { graceMs, batchSize: this.config.reconcileBatchSize, maxRescues: this.config.reconcileMaxRescues },
      queueNames: this.queueNames(),
    };
  }

  /**
   * Re-enqueue every unfinished link that no live job carries (see reconcileLinks), in this process, now.
   * @param opts.graceMs leave links touched more recently alone. @defaultValue config.reconcileGraceMs
   */
  reconcile(opts: { graceMs?: number } = {}): Promise<ReconcileReport> {
    return reconcileLinks(this.#reconcileDeps(opts.graceMs ?? this.config.reconcileGraceMs));
  }

  /** Jobs waiting, active, prioritized and delayed over this crawler's queues. */
  counts(): Promise<QueueCounts> {
    return this.queues.countJobs(this.queueNames());
  }

  /** See {@link IdleCheck.isIdle}. */
  isIdle(): Promise<boolean> {
    return this.#idle.isIdle();
  }

  /** See {@link IdleCheck.waitUntilIdle}; rejects with CrawlerStoppedError once close() was called. */
  waitUntilIdle(opts: { pollMs?: number; confirmMs?: number; onTick?: () => void | Promise<void> } = {}): Promise<void> {
    return this.#idle.waitUntilIdle({ ...opts, stopped: () => this.closed });
  }

  /** Postgres answers a trivial statement (readiness checks); rejects when it does not. */
  pingPostgres(): Promise<void> {
    return pingDatabase(this.prisma);
  }

  /** Whether close() was called (the shutdown may still be under way). */
  get closed(): boolean {
    return this.#closing !== null;
  }

  /**
   * Ordered shutdown, each step on its own so one failure does not skip the rest: workers drain in-flight jobs
   * (fetches are aborted after `drainTimeoutMs`), browsers close, then Redis, then
   * Postgres. Idempotent: a second call waits for the first.
   */
  close(opts: { drainTimeoutMs?: number } = {}): Promise<void> {
    this.#closing ??= this.#close(opts.drainTimeoutMs ?? 30_000);
    return this.#closing;
  }

  /**
   * A link the router handed to a fetcher reads `fetching` while its job waits for a fetch worker. Once this process's
   * fetch workers are closed and no other worker serves that queue, nobody is fetching it: it reads `queued` until a
   * crawler runs again (its job is kept, so that crawler fetches it without routing it again). A queue another process
   * still serves is left as it is: its links are about to be fetched. Bounded by RETURN_LINKS_BUDGET_MS, so a stop
   * with a large backlog still ends within a process manager's grace period: links past the budget keep `fetching`
   * (their jobs are kept either way).
   */
  async #returnUnservedLinks(): Promise<void> {
    const deadline = performance.now() + RETURN_LINKS_BUDGET_MS;
    let returned = 0;
    for (const name of this.#served) {
      if (fetcherOfQueue(name) === null) continue;
      for (const shard of this.#servedShards) {
        if ((await this.queues.queue(name, shard).getWorkersCount()) > 0) continue;
        for await (const ids of this.queues.waitingLinkIds(name, shard)) {
          returned += await this.linkStore.returnToQueued(ids);
          if (performance.now() > deadline) {
            this.logger.info({ links: returned, budgetMs: RETURN_LINKS_BUDGET_MS }, "stopped setting links that wait for a fetcher back to 'queued' at the time budget: the rest read 'fetching' until a crawler fetches them");
            return;
          }
        }
      }
    }
    if (returned > 0) this.logger.info({ links: returned }, 'links waiting for a fetcher no process serves now read queued');
  }

  async #close(drainTimeoutMs: number): Promise<void> {
    const log = this.logger;
    const step = async (name: string, fn: () => Promise<unknown>): Promise<void> => {
      try {
        await fn();
      } catch (err) {
        log.error({ err, step: name }, 'shutdown step failed');
      }
    };
    await step('workers', () => this.#workers.close(drainTimeoutMs));
    await step('links waiting for a fetcher', () => this.#returnUnservedLinks());
    await this.#loops.stop(step);
    await step('fetchers', () => this.#parts.closeFetchers());
    await step('queues', () => this.queues.close());
    this.#parts.stopClock?.();
    if (this.#parts.ownsRedis) await step('redis', () => closeRedisConnection(this.redis));
    const commands = this.#parts.commandRedis;
    if (this.#parts.ownsRedis && commands !== this.redis) await step('redis commands', () => closeRedisConnection(commands));
    if (this.#parts.ownsPrisma) await step('postgres', () => this.prisma.$disconnect());
    log.info('crawler closed');
  }
}

/**
 * How many inline fetches the router may run at once, those waiting for a fetch slot included (FETCH_INLINE; 0: none).
 * An inline fetch holds its route job's slot, which is what keeps the router from running ahead of the fetchers (most
 * pages then take the one-job path). The route slots the other fetchers' concurrency accounts for stay free to route
 * with; every other route slot may carry an inline fetch (with the default ROUTER_CONCURRENCY, half as many again as
 * the plain-HTTP slots: pages whose outcome is being written while the next requests go). A router smaller than the
 * inline fetchers' slots keeps one slot to route with and feeds the fetch workers the rest as jobs.
 */
export function inlineFetchLimit(config: Pick<CrawlerConfig, 'routerConcurrency' | 'fetchers'>, inlined: readonly { name: string; concurrency: number }[]): number {
  const inlineSlots = inlined.reduce((sum, f) => sum + f.concurrency, 0);
  if (inlineSlots === 0) return 0;
  const names = new Set(inlined.map((f) => f.name));
  const others = config.fetchers.filter((f) => !names.has(f.name)).reduce((sum, f) => sum + f.concurrency, 0);
  const free = config.routerConcurrency - others;
  return free >= inlineSlots ? free : Math.max(0, free - 1);
}
