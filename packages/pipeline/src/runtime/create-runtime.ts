import { ExitPool } from '../exits/exit-pool.js';
import { SessionJars } from '../exits/session-jars.js';
import type { Redis } from 'ioredis';
import { noopMetrics, silentLogger, systemClock, FETCHERS, type Clock, type Logger, type PipelineMetrics, type PolitenessGate, type RobotsPolicy, allowAllRobots } from '@crawler/core';
import { JobQueues, createRedisConnection, isRedisConnectionError, shardOfDomain } from '@crawler/queue';
import { AttemptStore, ContentStore, CrawlStore, DomainStateStore, LinkStore, OutcomeBatcher, OutcomeStore, RouteStore, ScheduleStore, VersionStore, createPrismaClient, type PrismaClient } from '@crawler/db';
import { createDefaultRegistry, probe as probeWith, RedisClearanceStore } from '@crawler/fetchers';
import { readRobots } from '../fetch/robots-read.js';
import { RedisPolitenessGate, RobotsCache, ShardedPolitenessGate } from '@crawler/politeness';
import type { CrawlerConfig } from '../config/crawler-config.js';
import { BlockedArms } from '../fetch/blocked-arms.js';
import { WallStreaks } from '../fetch/wall-streaks.js';
import { ProbeStore } from '../probe/probe-store.js';
import type { FetcherSource, LearnedSelector, LegacyRoutes, LinkRepo, OutcomeSink, ProbeFn, RevisitSource } from '../ports.js';
import { CrawlerRuntime } from './crawler-runtime.js';
import { CrawlFrontier } from '../crawls/crawl-frontier.js';
import { DomainSetbacks } from '../router/decision-cache.js';
import { politenessPrefix } from '../pauses/domain-pauses.js';
import { RedisSeenCache } from '../crawls/seen-cache.js';
import { AnalysisPool } from '../fetch/analysis-pool.js';
import { FleetClock } from './fleet-clock.js';

/** Replace any part of the crawler: tests inject clocks, stubs and clients; apps usually pass a logger and metrics. */
export interface RuntimeOverrides {
  clock?: Clock;
  logger?: Logger;
  metrics?: PipelineMetrics;
  /** A Prisma client to use (not closed by the runtime). */
  prisma?: PrismaClient;
  /** A worker-grade ioredis client to use (not closed by the runtime). */
  redis?: Redis;
  links?: LinkRepo;
  learning?: LearnedSelector;
  routes?: LegacyRoutes;
  /** Where fetch outcomes (attempts, link state, page) are written. @defaultValue an OutcomeStore on `prisma` behind an OutcomeBatcher (OUTCOME_BATCH_MAX, OUTCOME_BATCH_WAIT_MS) */
  outcomes?: OutcomeSink;
  /** Fetchers by name; `closeAll` is called on shutdown when present. */
  fetchers?: FetcherSource & { closeAll?(): Promise<void> };
  probe?: ProbeFn;
  gate?: PolitenessGate;
  robots?: RobotsPolicy;
}

/**
 * Build a crawler runtime from its configuration: Prisma, Redis, the job queues, the stores, the fetcher registry
 * (lazy: browsers launch on the first browser job), the fleet's politeness gate and robots cache, and the fetch
 * outcome store. Nothing starts consuming until `startWorkers()`.
 */
export function createRuntime(config: CrawlerConfig, o: RuntimeOverrides = {}): CrawlerRuntime {
  const logger = o.logger ?? silentLogger;
  const metrics = o.metrics ?? noopMetrics;
  const prisma = o.prisma ?? createPrismaClient(config.databaseUrl, { maxConnections: config.databasePoolSize });
  // A Redis outage is one warning per connection (its address), and one line when it is back (queue connection.ts).
  const redisLog = { logger: logger.child({ component: 'redis' }) };
  const redis = o.redis ?? createRedisConnection(config.redisTarget, 'worker', {}, redisLog);
  // Times one process writes and another reads are kept by Redis TIME, as the politeness gate keeps its own.
  const fleetClock = o.clock ? null : new FleetClock({ redis, logger: logger.child({ component: 'clock' }) });
  fleetClock?.start();
  const clock: Clock = o.clock ?? fleetClock!;
  // The politeness gate's scripts, the inline fetches' claims and the probe bodies (a few commands per page, each its
  // own round trip) go over a connection of their own with ioredis' auto-pipelining: the commands issued in one tick
  // leave in one write. BullMQ keeps its connection as it was (its maintainers advise against auto-pipelining under
  // it, taskforcesh/bullmq#457). Many-domains bench, 4 rounds: Redis 0.30 → 0.25 ms/page, 252–277 → 265–292 pages/s.
  // Not on a Redis Cluster: ioredis groups a cluster's auto-pipelined commands by the slot of their first argument,
  // which for EVALSHA is the script's hash, not a key (the cluster e2e tests failed with it).
  const clustered = (config.redisTarget.clusterNodes?.length ?? 0) > 0;
  const commands = o.redis ?? (clustered ? redis : createRedisConnection(config.redisTarget, 'worker', { enableAutoPipelining: true }, redisLog));
  const queueLog = logger.child({ component: 'queues' });
  // The queues re-emit their connection's errors: an outage is the connection's one warning, not one per reconnect.
  const queues = new JobQueues({
    connection: redis,
    prefix: config.queuePrefix,
    shards: config.queueShards,
    onError: (err, queue) => (isRedisConnectionError(err) ? undefined : queueLog.warn({ err, queue }, 'queue connection error')),
  });
  const linkStore = o.links instanceof LinkStore ? o.links : new LinkStore(prisma, { batch: { maxBatch: config.linkWriteBatchMax, maxWaitMs: config.outcomeBatchWaitMs }, readBatch: { maxBatch: config.linkReadBatchMax } });
  const links = o.links ?? linkStore;

  const learning: LearnedSelector = o.learning ?? new AttemptStore({ prisma, clock, logger: logger.child({ component: 'attempts' }) });
  const routeStore = o.routes ? null : new RouteStore({ prisma, clock });
  const routes: LegacyRoutes = o.routes ?? {
    fetcherFor: async (domain) => {
      const r: unknown = await routeStore!.get(domain);
      return typeof r === 'string' ? r : ((r as { fetcher?: string } | null)?.fetcher ?? null);
    },
  };
  const outcomeStore = new OutcomeStore({ prisma, clock, unchangedEvents: config.eventsUnchanged, logger: logger.child({ component: 'outcomes' }) });
  const outcomes: OutcomeSink = o.outcomes ?? new OutcomeBatcher(outcomeStore, { maxBatch: config.outcomeBatchMax, maxWaitMs: config.outcomeBatchWaitMs });
  const versionStore = new VersionStore({ prisma, clock });
  const contentStore = new ContentStore({ prisma, clock });
  const revisits: RevisitSource | undefined = config.conditionalRequests
    ? { validators: (id) => versionStore.validators(id), latestPage: (id) => contentStore.latestForLink(id) }
    : undefined;

  const registry =
    o.fetchers ??
    createDefaultRegistry({
      allowPrivateNetworks: config.allowPrivateNetworks,
      allowHosts: config.fetchAllowHosts,
      extraCaCerts: config.nodeExtraCaCerts,
      chromiumPath: config.chromiumPath,
      maxBytes: config.fetchMaxBytes,
      timeoutMs: config.fetchTimeoutMs,
      browser: { challengeWaitMs: config.challengeWaitMs, ...(config.browserPages ? { maxPages: config.browserPages } : {}) },
      logger: logger.child({ component: 'fetchers' }),
    }, {
      // Clearance a browser earns on a wall is the fleet's: every worker's browsers start their site contexts with it.
      clearance: new RedisClearanceStore({ redis, prefix: config.queuePrefix, logger: logger.child({ component: 'clearance' }) }),
    });
  // Proxy health is shared by the fleet: one worker's dead proxy is every worker's.
  const exits = new ExitPool(config.exitTiers, { unhealthyMs: config.proxyUnhealthyMs, clock, shared: { redis, prefix: config.queuePrefix }, logger: logger.child({ component: 'exits' }) });
  // With PROXY_DIRECT=false nothing leaves from the worker's own address: the probe and robots.txt take the cheapest tier.
  const probe: ProbeFn =
    o.probe ??
    ((url, signal) =>
      exits.housekeeping(async (exit) => {
        const res = await probeWith(registry.get(FETCHERS.simpleHttp), url, { timeoutMs: config.probeTimeoutMs, maxBytes: config.probeMaxBytes, signal, exit });
        // Assigned, not spread: a plain-HTTP result decodes its text lazily, on first read.
        return exit?.proxyUrl ? Object.assign(res, { exit: { tier: exit.tier, id: exits.idOf(exit.proxyUrl) } }) : res;
      }));

  // One gate per shard, each under its shard's hash tag: a domain's politeness keys sit in the slot of its jobs.
  const shardGates = queues.prefixes.map(
    (prefix) =>
      new RedisPolitenessGate({
        redis: commands,
        prefix: `${prefix}:polite:`,
        defaults: { maxConcurrency: config.domainMaxConcurrency, minDelayMs: config.domainMinDelayMs },
        overrides: config.domainLimits,
        // A slot is leased as long as a job lock, renewed by a heartbeat every third of it: a SIGKILLed worker's slots
        // are free by the time BullMQ hands its stalled jobs to another worker (the gate's 60 s default held them
        // twice that long), and a worker stalled long enough to lose its slot has already lost its job lock.
        slotTtlMs: config.lockDurationMs,
        clock: o.clock,
        logger: logger.child({ component: 'politeness' }),
      }),
  );
  const gate =
    o.gate ?? (shardGates.length === 1 ? shardGates[0]! : new ShardedPolitenessGate({ gates: shardGates, shardOf: (domain) => shardOfDomain(domain, queues.shards) }));
  const robots =
    o.robots ??
    (config.robotsEnabled
      ? new RobotsCache({
          redis,
          prefix: `${config.queuePrefix}:robots:`,
          userAgent: config.robotsUserAgent,
          unreachableTtlMs: config.robotsUnreachableTtlMs,
          clock,
          logger: logger.child({ component: 'robots' }),
          fetchRobots: (origin) => readRobots(origin, FETCHERS.simpleHttp, (url) => exits.housekeeping((exit) => registry.get(FETCHERS.simpleHttp).fetch({ url, timeoutMs: 10_000, maxBytes: ROBOTS_MAX_BYTES, truncate: true, ...(exit ? { exit } : {}) })), logger),
          onCrawlDelay: gate instanceof RedisPolitenessGate || gate instanceof ShardedPolitenessGate ? (domain, delayMs, ttlMs) => gate.raiseMinDelay(domain, delayMs, ttlMs) : undefined,
        })
      : allowAllRobots);

  const probeStore = new ProbeStore({ redis: commands, prefix: config.queuePrefix, maxCompressedBytes: config.probeStoreMaxBytes, ttlMs: config.probeTtlMs, budgetBytes: config.probeStoreBudgetBytes });
  const fetchers: FetcherSource = registry;
  // This process's fetch workers tell its router which domains just pushed back (decision-cache.ts).
  const setbacks = new DomainSetbacks();
  // The arms sites refused, shared by the fleet's fetch workers and routers (blocked-arms.ts).
  const blockedArms = new BlockedArms({ redis, prefix: config.queuePrefix, logger });
  // A streak outlives its last refusal by the longest wait it decides on: a site left alone longer starts afresh.
  const wallStreaks = new WallStreaks({ redis, prefix: config.queuePrefix, ttlMs: config.wallMaxWaitMs + config.pauseMaxMs, logger });
  // Threads start on the first response analysed, so a process without fetch workers starts none.
  const analyzer = new AnalysisPool({ threads: config.analysisThreads, logger: logger.child({ component: 'analysis' }), metrics });
  const { store: crawlStore, frontier: crawls } = createCrawlFrontier({ prisma, queues, redis, config, logger, fetchers: registry });

  return new CrawlerRuntime({
    config,
    redis,
    commandRedis: commands,
    prisma,
    queues,
    links,
    linkStore,
    crawls,
    crawlStore,
    schedule: new ScheduleStore({ prisma, clock }),
    clock,
    stopClock: () => fleetClock?.stop(),
    logger,
    metrics,
    ownsPrisma: !o.prisma,
    ownsRedis: !o.redis,
    chromiumPath: o.fetchers ? null : config.chromiumPath,
    closeFetchers: async () => {
      await analyzer.close();
      await registry.closeAll?.();
    },
    routerDeps: {
      setbacks,
      // Every router of the fleet stops probing a domain once one probe of it met a bot wall.
      wallsShared: { redis, prefix: config.queuePrefix, logger },
      // ... and the wall sightings whose arm a fetch found refused since.
      blockedArms,
      wallStreaks,
      links,
      enqueueFetch: (input) => queues.enqueueFetch(input),
      learning,
      // The domain's own attempts are part of the learned step: a replaced learned selector replaces both.
      ...(o.learning ? {} : { domainState: new DomainStateStore({ prisma }) }),
      routes,
      probe,
      probeStore,
      gate,
      robots,
      clock,
      logger,
      metrics,
      revisits,
      outcomes,
    },
    fetchDeps: {
      exits,
      jars: new SessionJars({ clock, shared: { redis, prefix: config.queuePrefix }, logger: logger.child({ component: 'exits' }) }),
      links,
      enqueueFetch: (input) => queues.enqueueFetch(input),
      enqueueRoute: (input, opts) => queues.enqueueRoute(input, opts),
      fetchers,
      probeStore,
      outcomes,
      gate,
      robots,
      // A browser fetch worker reads the robots.txt plain HTTP could not (a head undici refuses, a wall in front of it)
      // in its own browser, past the wall, before the page.
      readRobotsInBrowser: (fetcher, origin) =>
        readRobots(origin, fetcher, (url) => exits.housekeeping((exit) => registry.get(fetcher).fetch({ url, timeoutMs: config.fetchTimeoutMs, maxBytes: ROBOTS_MAX_BYTES, ...(exit ? { exit } : {}) })), logger),
      clock,
      logger,
      metrics,
      discovery: crawls,
      setbacks,
      revisits,
      // A site's refusal of an arm reaches the jobs the fleet already routed to it (blocked-arms.ts).
      blockedArms,
      // Each site's refusals in a row: its pause backs off by them, and links of a wall no tool passes end (wall-streaks.ts).
      wallStreaks,
      analyzer,
    },
  });
}

/** A longer robots.txt is read up to its first 512 KiB, as RFC 9309 allows (at least 500 KiB), not refused. */
const ROBOTS_MAX_BYTES = 512 * 1024;

/** createRuntime, then start the router and every configured fetcher in this process. */
export function startCrawler(config: CrawlerConfig, overrides: RuntimeOverrides = {}): CrawlerRuntime {
  const runtime = createRuntime(config, overrides);
  runtime.startWorkers();
  return runtime;
}

/**
 * The crawl store and frontier over a Prisma client and the queues: the crawler runtime's, and the API's (which
 * creates crawls, reading sitemaps with plain HTTP, but fetches nothing else).
 */
export function createCrawlFrontier(o: {
  prisma: PrismaClient;
  queues: JobQueues;
  /** For the seen cache (CRAWL_SEEN_CACHE=redis). */
  redis: Redis;
  config: CrawlerConfig;
  logger: Logger;
  /** Fetchers to read sitemaps with (plain HTTP). @defaultValue a registry of its own */
  fetchers?: FetcherSource;
}): { store: CrawlStore; frontier: CrawlFrontier; close(): Promise<void> } {
  const { config } = o;
  const own = o.fetchers
    ? null
    : createDefaultRegistry({ allowPrivateNetworks: config.allowPrivateNetworks, allowHosts: config.fetchAllowHosts, extraCaCerts: config.nodeExtraCaCerts, chromiumPath: config.chromiumPath, maxBytes: config.fetchMaxBytes, timeoutMs: config.fetchTimeoutMs, logger: o.logger.child({ component: 'fetchers' }) });
  const fetchers: FetcherSource = o.fetchers ?? own!;
  // With PROXY_DIRECT=false sitemaps too leave through the cheapest tier (proxy health shared with the fetchers').
  const exits = new ExitPool(config.exitTiers, { unhealthyMs: config.proxyUnhealthyMs, clock: systemClock, shared: { redis: o.redis, prefix: config.queuePrefix } });
  const store = new CrawlStore(o.prisma);
  const frontier = new CrawlFrontier({
    store,
    enqueueRoutes: (inputs) => o.queues.enqueueRoutes(inputs),
    // Sitemaps come through plain HTTP with its SSRF guard and size cap; a .xml.gz arrives as the gzip bytes.
    fetchSitemap: async (url, headers) => {
      const res = await exits.housekeeping((exit) => fetchers.get(FETCHERS.simpleHttp).fetch({ url, timeoutMs: config.fetchTimeoutMs, maxBytes: config.sitemapMaxBytes ?? config.fetchMaxBytes, ...(headers ? { headers } : {}), ...(exit ? { exit } : {}) }));
      return { status: res.status, body: res.body, headers: res.headers };
    },
    sitemapLimits: { maxFiles: config.sitemapMaxFiles, maxUrls: config.sitemapMaxUrls, maxBytes: config.sitemapMaxBytes },
    maxLinksPerPage: config.crawlMaxLinksPerPage,
    minRevisitIntervalSeconds: config.revisitMinIntervalS,
    defaultTrackingParams: config.crawlTrackingParams,
    seenCache: config.crawlSeenCache === 'off' ? undefined : new RedisSeenCache({ redis: o.redis, prefix: config.queuePrefix }),
    logger: o.logger.child({ component: 'crawls' }),
  });
  return { store, frontier, close: async () => void (await own?.closeAll()) };
}
