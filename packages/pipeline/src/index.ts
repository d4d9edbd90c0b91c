// The package's public surface, by module: what apps and other packages may import. Anything not listed is internal.
export {
  type FetcherConfig,
  parseFetcherList,
  parseHeuristicTypes,
  type DomainLimits,
  parseDomainLimits,
  MAX_RETENTION_DAYS,
  MAX_TIMER_MS,
  QUEUE_ENV,
  ROUTING_ENV,
  RETRY_ENV,
  FETCHERS_ENV,
  POLITENESS_ENV,
  PROBE_ENV,
  RECONCILE_ENV,
  CRAWL_ENV,
  CRAWLER_ENV,
  CRAWLER,
  type CrawlerConfig,
  CRAWLER_ENV_SCHEMA,
  loadConfig,
  ConfigError,
} from './config/crawler-config.js';
export {
  type EventsConfig,
  EVENTS_ENV,
  MIN_WEBHOOK_SECRET_LENGTH,
  checkEventsEnv,
  eventsConfigOf,
} from './config/events-config.js';
export {
  type AcceptedLink,
  type RejectedLink,
  type EnqueueResult,
  type EnqueueLinksOptions,
  enqueueLinks,
  shownInput,
} from './links/enqueue-links.js';
export { nextStepOf, type NextStep, type NextStepFacts } from './links/next-step.js';
export {
  type StoredProbe,
  type ProbeStoreOptions,
  ProbeStore,
} from './probe/probe-store.js';
export {
  type AttemptRecord,
  type AttemptLog,
  type LearnedSelector,
  type LegacyRoutes,
  type OutcomeSink,
  type FetcherLike,
  type FetcherSource,
  type ProbeFn,
  type LinkRepo,
  type ReconcileLinks,
  type AppliedOutcome,
  type LinkChange,
  type LinkRecord,
  type NewLink,
  type OutcomeHook,
  type OutcomeWrite,
  type StaleLink,
} from './ports.js';
export {
  type JobHandle,
} from './job-control.js';
export {
  analyzeResponse,
  analysisInputOf,
  type ProbeVerdict,
  judgeProbe,
} from './fetch/response-analysis.js';
export { AnalysisPool, type AnalysisPoolOptions } from './fetch/analysis-pool.js';
export {
  type RouterSettings,
  type DomainStateReader,
  type RouterDeps,
  createRouteProcessor,
} from './router/route-processor.js';
export { ProbeWalls, type WallSighting } from './router/probe-walls.js';
export {
  DEFAULT_PLAIN_HTTP_MEMORY_MS,
  type LearnedChoiceInput,
  type LearnedChoice,
  chooseLearned,
} from './router/learned-choice.js';
export {
  type FetchSettings,
  type FetchDeps,
  createFetchProcessor,
} from './fetch/fetch-processor.js';
export {
  type RuntimeParts,
  type StartWorkersOptions,
  CrawlerRuntime,
} from './runtime/crawler-runtime.js';
export {
  type RuntimeOverrides,
  createRuntime,
  startCrawler,
  createCrawlFrontier,
} from './runtime/create-runtime.js';
export {
  type CrawlSpec,
  CrawlSpecError,
  type CreatedCrawl,
  type DiscoveredPage,
  type LinkDiscovery,
  type CrawlFrontierDeps,
  CrawlFrontier,
} from './crawls/crawl-frontier.js';
export {
  type SitemapFetch,
  type SitemapLimits,
  DEFAULT_SITEMAP_LIMITS,
  type SitemapReport,
  readSitemaps,
  looksLikeSitemap,
} from './crawls/sitemaps.js';
export {
  type SeenCache,
  type RedisSeenCacheOptions,
  RedisSeenCache,
} from './crawls/seen-cache.js';
export {
  type ReconcileSettings,
  type ReconcileReport,
  type ReconcilerDeps,
  reconcileLinks,
  unservedAdvice,
  type ReconcileLoopOptions,
  ReconcileLoop,
} from './reconcile/reconciler.js';
export { assertBrowserExecutable } from './runtime/browser-executable.js';
export { onShutdownSignal, exitOnSignals } from './runtime/shutdown-signals.js';
export { FleetClock, type FleetClockOptions } from './runtime/fleet-clock.js';
export { CrawlerStoppedError, IdleCheck, IDLE_DELAY_HORIZON_MS, type IdleCheckDeps } from './runtime/idle-check.js';
export * from './schedule/revisit-scheduler.js';
export * from './pauses/domain-pauses.js';
export { ExitPool, proxyId, type ExitPoolShared } from './exits/exit-pool.js';
export { armPastWall, armView, escalatedArm, hasProxiedTiers, isProbedPlainArm, runnableArm, tiersOf, wallArm, type ArmSettings } from './router/arm-choice.js';
export { SessionJars, type SessionJarsShared } from './exits/session-jars.js';
