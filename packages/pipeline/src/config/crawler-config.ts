import { z } from 'zod';
import { EVENTS_ENV, checkEventsEnv, eventsConfigOf, type EventsConfig } from './events-config.js';
import { CrawlerError, DEFAULT_MAX_ATTEMPTS, ROUTING_HEURISTIC_TYPES, URL_HEURISTIC_EXTRACTORS, canonicalFetcherName } from '@crawler/core';

/** A bad configuration value: the message names the variable and the value it got. */
export class ConfigError extends CrawlerError {
  override name = 'ConfigError';
  constructor(message: string) {
    super('invalid_config', message);
  }
}

const bool = (def: boolean) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return def;
      const s = v.trim().toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(s)) return true;
      if (['false', '0', 'no', 'off'].includes(s)) return false;
      ctx.addIssue({ code: 'custom', message: 'expected true or false' });
      return z.NEVER;
    });

/**
 * An optional integer environment variable: `def` when unset or blank, otherwise an integer within [min, max]; anything
 * else is a zod issue, so the caller's error names the variable and its value. Shared by every app's env schema.
 */
export const intVar = (def: number, min = 0, max?: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return def;
      const n = Number(v.trim());
      if (!Number.isInteger(n) || n < min || (max !== undefined && n > max)) {
        ctx.addIssue({ code: 'custom', message: max === undefined ? `expected an integer >= ${min}` : `expected an integer from ${min} to ${max}` });
        return z.NEVER;
      }
      return n;
    });

/** Like {@link intVar}, but unset or blank is `undefined`: for defaults computed from other variables. */
const optionalIntVar = (min = 0) =>
  z
    .string()
    .optional()
    .transform((v, ctx): number | undefined => {
      if (v === undefined || v.trim() === '') return undefined;
      const n = Number(v.trim());
      if (!Number.isInteger(n) || n < min) {
        ctx.addIssue({ code: 'custom', message: `expected an integer >= ${min}` });
        return z.NEVER;
      }
      return n;
    });

const num01 = (def: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return def;
      const n = Number(v.trim());
      if (!Number.isFinite(n) || n < 0 || n > 1) {
        ctx.addIssue({ code: 'custom', message: 'expected a number between 0 and 1' });
        return z.NEVER;
      }
      return n;
    });

/** One fetcher this process runs, with how many of its jobs run at once. */
export interface FetcherConfig {
  name: string;
  concurrency: number;
}

const FETCHER_ITEM = /^([a-z0-9_.-]+)(?::(\d+))?$/;
const DEFAULT_FETCHER_CONCURRENCY: Record<string, number> = { simple_http: 8, playwright: 2, playwright_stealth: 1 };

/** Parse `simple_http:8,playwright:2,playwright_stealth` (concurrency optional, aliases allowed). */
export function parseFetcherList(value: string): FetcherConfig[] {
  const out = new Map<string, FetcherConfig>();
  for (const raw of value.split(',')) {
    const item = raw.trim().toLowerCase();
    if (item === '') continue;
    const m = FETCHER_ITEM.exec(item);
    const n = m?.[2] === undefined ? undefined : Number(m[2]);
    if (!m || (n !== undefined && n < 1)) throw new Error(`bad fetcher entry '${raw.trim()}' (expected name or name:concurrency)`);
    const name = canonicalFetcherName(m[1]!);
    out.set(name, { name, concurrency: n ?? DEFAULT_FETCHER_CONCURRENCY[name] ?? 2 });
  }
  if (out.size === 0) throw new Error('no fetcher listed');
  return [...out.values()];
}

const fetcherList = z
  .string()
  .optional()
  .transform((v, ctx) => {
    try {
      return parseFetcherList(v === undefined || v.trim() === '' ? 'simple_http,playwright,playwright_stealth' : v);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return z.NEVER;
    }
  });

const HEURISTIC_TYPE = /^[a-z0-9_]+$/;

/**
 * `domain,suffix,...` (the router's learned-query heuristic types), `all` for every URL heuristic (the documents'
 * literal query, which pools sites that share path depths), or unset for core's ROUTING_HEURISTIC_TYPES.
 */
const heuristicTypeList = z
  .string()
  .optional()
  .transform((v, ctx): string[] => {
    if (v === undefined || v.trim() === '') return [...ROUTING_HEURISTIC_TYPES];
    if (v.trim().toLowerCase() === 'all') return URL_HEURISTIC_EXTRACTORS.map((e) => e.type);
    const types = [...new Set(v.split(',').map((t) => t.trim().toLowerCase()).filter((t) => t !== ''))];
    const bad = types.filter((t) => !HEURISTIC_TYPE.test(t));
    if (types.length === 0 || bad.length > 0) {
      ctx.addIssue({ code: 'custom', message: `expected comma-separated heuristic types or "all"${bad.length ? `, got ${bad.join(', ')}` : ''}` });
      return z.NEVER;
    }
    return types;
  });

const url = (protocols: string[]) =>
  z.string().refine((v) => {
    try {
      return protocols.includes(new URL(v).protocol);
    } catch {
      return false;
    }
  }, `expected a ${protocols.join(' or ')} URL`);

/** Per-domain politeness limits (see DOMAIN_LIMITS). */
export interface DomainLimits {
  maxConcurrency: number;
  minDelayMs?: number;
}

const LIMIT_ITEM = /^([a-z0-9.-]+)=(\d+)(?::(\d+))?$/;

/** Parse `domain=concurrency[:minDelayMs],...`; throws with the offending entry. */
export function parseDomainLimits(value: string): Record<string, DomainLimits> {
  const out: Record<string, DomainLimits> = {};
  for (const raw of value.split(',')) {
    const item = raw.trim().toLowerCase();
    if (item === '') continue;
    const m = LIMIT_ITEM.exec(item);
    if (!m || Number(m[2]) < 1) throw new Error(`bad entry '${raw.trim()}' (expected domain=concurrency or domain=concurrency:minDelayMs, concurrency >= 1)`);
    const domain = m[1]!.replace(/^www\./, '');
    out[domain] = m[3] === undefined ? { maxConcurrency: Number(m[2]) } : { maxConcurrency: Number(m[2]), minDelayMs: Number(m[3]) };
  }
  return out;
}

const EnvSchema = z.object({
  DATABASE_URL: url(['postgresql:', 'postgres:']),
  REDIS_URL: url(['redis:', 'rediss:']).default('redis://127.0.0.1:6379'),
  QUEUE_PREFIX: z.string().regex(/^[^:]+$/, 'must be non-empty without ":"').default('{crawler}'),
  LEARNING_MODE_ENABLED: bool(true),
  DEFAULT_FETCHER: z.string().trim().min(1).transform(canonicalFetcherName).optional(),
  FETCHERS: fetcherList,
  ROUTER_CONCURRENCY: optionalIntVar(1),
  MAX_ATTEMPTS: intVar(DEFAULT_MAX_ATTEMPTS, 1),
  PAUSE_MAX_MS: intVar(24 * 3600_000, 1),
  CONFIDENCE_THRESHOLD: num01(0.6),
  MIN_SAMPLE_SIZE: intVar(5, 1),
  ROUTING_HEURISTIC_TYPES: heuristicTypeList,
  DOMAIN_MEMORY_ENABLED: bool(true),
  ROUTER_DECISION_CACHE_MS: intVar(1_000, 0),
  CHROMIUM_PATH: z.string().min(1).default('/usr/bin/chromium'),
  ALLOW_PRIVATE_NETWORKS: bool(false),
  FETCH_ALLOW_HOSTS: z
    .string()
    .optional()
    .transform((v) => [...new Set((v ?? '').split(',').map((h) => h.trim().toLowerCase()).filter((h) => h !== ''))]),
  ROBOTS_ENABLED: bool(true),
  DOMAIN_MAX_CONCURRENCY: intVar(2, 1),
  DOMAIN_MIN_DELAY_MS: intVar(1_000, 0),
  DOMAIN_LIMITS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      try {
        return parseDomainLimits(v ?? '');
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),
  ROBOTS_USER_AGENT: z.string().min(1).default('fetch-router'),
  PROBE_TIMEOUT_MS: intVar(3_000, 1),
  PROBE_MAX_BYTES: intVar(5 * 1024 * 1024, 1),
  PROBE_STORE_MAX_BYTES: intVar(2 * 1024 * 1024, 1),
  PROBE_TTL_MS: intVar(30 * 60_000, 1_000),
  PROBE_STORE_BUDGET_BYTES: intVar(256 * 1024 * 1024, 1),
  FETCH_TIMEOUT_MS: intVar(30_000, 1),
  FETCH_MAX_BYTES: intVar(10 * 1024 * 1024, 1),
  CHALLENGE_WAIT_MS: intVar(15_000, 0),
  LOCK_DURATION_MS: intVar(30_000, 1_000),
  STALLED_INTERVAL_MS: intVar(15_000, 500),
  CRAWL_TRACKING_PARAMS: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.split(',').map((p) => p.trim()).filter(Boolean))),
  CRAWL_MAX_LINKS_PER_PAGE: intVar(5_000, 1),
  CRAWL_SEEN_CACHE: z.enum(['redis', 'off']).default('redis'),
  SITEMAP_MAX_FILES: intVar(50, 1),
  SITEMAP_MAX_URLS: intVar(50_000, 1),
  SITEMAP_MAX_BYTES: intVar(50 * 1024 * 1024, 1024),
  RECONCILE_INTERVAL_MS: intVar(60_000, 0),
  RECONCILE_GRACE_MS: intVar(120_000, 0),
  RECONCILE_BATCH_SIZE: intVar(500, 1, 10_000),
  INFRA_RETRY_MAX_MS: intVar(60_000, 100),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  ...EVENTS_ENV,
}).superRefine(checkEventsEnv);

/** The crawler's configuration, parsed once at start-up. */
export interface CrawlerConfig {
  databaseUrl: string;
  redisUrl: string;
  /** Redis key prefix of every queue; braces make it a Cluster hash tag. */
  queuePrefix: string;
  /** Global learning flag; a link's `learning_mode_enabled` overrides it. @defaultValue true */
  learningModeEnabled: boolean;
  /** Legacy mode: the fetcher for domains without a hard-coded route (none: such links fail with `no_route`). */
  defaultFetcher?: string;
  /** The fetchers this process runs (fetch workers) and the router may choose. */
  fetchers: FetcherConfig[];
  /**
   * Route jobs this process's router runs at once. Every fetch job was routed first, and a route may wait on a probe
   * (a real request) or the store, so a router with fewer slots than the fetchers it feeds starves them (measured on
   * 50 hosts at FETCHERS=simple_http:32: 8 slots 81 pages/s, 32 slots 95). @defaultValue the sum of `fetchers`' concurrency
   */
  routerConcurrency: number;
  /** Fetch attempts a link gets before it is failed for good. @defaultValue core's DEFAULT_MAX_ATTEMPTS (6) */
  maxAttempts: number;
  /** Longest pause after blocks. @defaultValue 24 h */
  pauseMaxMs: number;
  confidenceThreshold: number;
  minSampleSize: number;
  /** Heuristic types the router's learned query uses (core ROUTING_HEURISTIC_TYPES: shared ones pool every site). */
  routingHeuristicTypes: string[];
  /** Let the router use the domain's own latest attempts (bans, re-verification, latest working browser). @defaultValue true */
  domainMemoryEnabled: boolean;
  /**
   * How long the router reuses a confident learned decision for URLs with the same routing heuristics, instead of
   * reading the store again (0: never). Decisions that would probe are never reused. @defaultValue 1000
   */
  routerDecisionCacheMs: number;
  chromiumPath: string;
  /** Turn the SSRF guard off entirely (local tests and demos only). @defaultValue false */
  allowPrivateNetworks: boolean;
  /**
   * Host names, IP literals or CIDR ranges let through the SSRF guard although not public, from
   * `FETCH_ALLOW_HOSTS=intranet.example,10.1.2.0/24` (every fetcher, the browsers' egress proxy included). @defaultValue []
   */
  fetchAllowHosts: string[];
  robotsEnabled: boolean;
  /** Requests in flight to one domain across the fleet. @defaultValue 2 */
  domainMaxConcurrency: number;
  /** Minimum gap between request starts to one domain. @defaultValue 1000 */
  domainMinDelayMs: number;
  /**
   * Per-domain politeness over the two defaults above, from `DOMAIN_LIMITS=shop.example=1:2000,news.example=4`
   * (concurrency, optionally `:minDelayMs`). Every process of the fleet must get the same value: the limits travel
   * with each request to the shared Redis gate. @defaultValue {}
   */
  domainLimits: Record<string, DomainLimits>;
  /** Product token matched against robots.txt User-agent lines. */
  robotsUserAgent: string;
  probeTimeoutMs: number;
  /** Largest probe body read (uncompressed). */
  probeMaxBytes: number;
  /** Largest compressed probe body kept in Redis for reuse; bigger ones are fetched again. @defaultValue 2 MiB */
  probeStoreMaxBytes: number;
  /** How long a stored probe lives in Redis. @defaultValue 30 min */
  probeTtlMs: number;
  /** Total compressed bytes all stored probes may take in Redis; past it probes are not kept. @defaultValue 256 MiB */
  probeStoreBudgetBytes: number;
  fetchTimeoutMs: number;
  fetchMaxBytes: number;
  /**
   * How long a browser fetcher waits for a challenge page to clear itself (script, cookie, reload) before the page
   * counts as the block it is; 0 turns the wait off. Bounded by FETCH_TIMEOUT_MS. @defaultValue 15000
   */
  challengeWaitMs: number;
  lockDurationMs: number;
  stalledIntervalMs: number;
  /** Time between reconcile passes (0: only the pass at worker start). */
  reconcileIntervalMs: number;
  /** Unfinished links touched more recently than this are not reconciled (their job may be between queues). */
  reconcileGraceMs: number;
  /** Links per reconcile batch. */
  reconcileBatchSize: number;
  /** Longest wait before a job retries after Postgres or Redis was unreachable (it doubles up to this). */
  infraRetryMaxMs: number;
  logLevel: string;
  /**
   * Query parameters a new crawl strips from discovered links before dedup (exact names or `prefix*`), when its
   * request names none. @defaultValue core's DEFAULT_TRACKING_PARAMS (utm_*, fbclid, gclid, …)
   */
  crawlTrackingParams?: string[];
  /** Links one page contributes to its crawl at most. @defaultValue 5000 */
  crawlMaxLinksPerPage?: number;
  /**
   * `redis`: links a crawl has already decided on are answered from a Redis set (12 bytes of hash per URL) before
   * Postgres, which stays the arbiter; `off`: every link goes to Postgres. @defaultValue 'redis'
   */
  crawlSeenCache?: 'redis' | 'off';
  /** Sitemap files (indexes included) one crawl reads at most. @defaultValue 50 */
  sitemapMaxFiles?: number;
  /** Page URLs one crawl takes from sitemaps at most. @defaultValue 50000 */
  sitemapMaxUrls?: number;
  /** Bytes of one sitemap after gunzip at most. @defaultValue 50 MiB */
  sitemapMaxBytes?: number;
  /** Link events: webhooks, retries, the Redis stream, whether router processes dispatch. */
  events: EventsConfig;
}

/**
 * Parse the crawler's environment. Throws ConfigError listing every bad variable with the value it got, so a
 * misconfigured deployment fails at start-up rather than on the first job. The only reader of process.env is the
 * caller that passes it in.
 */
export function loadConfig(env: Record<string, string | undefined>): CrawlerConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const name = String(i.path[0] ?? '?');
      const value = env[name];
      // A secret's value never reaches a log line, even when it is the bad one.
      const shown = value === undefined ? '(unset)' : /SECRET|PASSWORD/.test(name) ? '(hidden)' : JSON.stringify(value);
      return `${name}=${shown}: ${i.message}`;
    });
    throw new ConfigError(`invalid configuration: ${lines.join('; ')}`);
  }
  const e = parsed.data;
  return {
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    queuePrefix: e.QUEUE_PREFIX,
    learningModeEnabled: e.LEARNING_MODE_ENABLED,
    defaultFetcher: e.DEFAULT_FETCHER,
    fetchers: e.FETCHERS,
    routerConcurrency: e.ROUTER_CONCURRENCY ?? e.FETCHERS.reduce((sum, f) => sum + f.concurrency, 0),
    maxAttempts: e.MAX_ATTEMPTS,
    pauseMaxMs: e.PAUSE_MAX_MS,
    confidenceThreshold: e.CONFIDENCE_THRESHOLD,
    minSampleSize: e.MIN_SAMPLE_SIZE,
    routingHeuristicTypes: e.ROUTING_HEURISTIC_TYPES,
    domainMemoryEnabled: e.DOMAIN_MEMORY_ENABLED,
    routerDecisionCacheMs: e.ROUTER_DECISION_CACHE_MS,
    chromiumPath: e.CHROMIUM_PATH,
    allowPrivateNetworks: e.ALLOW_PRIVATE_NETWORKS,
    fetchAllowHosts: e.FETCH_ALLOW_HOSTS,
    robotsEnabled: e.ROBOTS_ENABLED,
    domainMaxConcurrency: e.DOMAIN_MAX_CONCURRENCY,
    domainMinDelayMs: e.DOMAIN_MIN_DELAY_MS,
    domainLimits: e.DOMAIN_LIMITS,
    robotsUserAgent: e.ROBOTS_USER_AGENT,
    probeTimeoutMs: e.PROBE_TIMEOUT_MS,
    probeMaxBytes: e.PROBE_MAX_BYTES,
    probeStoreMaxBytes: e.PROBE_STORE_MAX_BYTES,
    probeTtlMs: e.PROBE_TTL_MS,
    probeStoreBudgetBytes: e.PROBE_STORE_BUDGET_BYTES,
    fetchTimeoutMs: e.FETCH_TIMEOUT_MS,
    fetchMaxBytes: e.FETCH_MAX_BYTES,
    challengeWaitMs: e.CHALLENGE_WAIT_MS,
    lockDurationMs: e.LOCK_DURATION_MS,
    stalledIntervalMs: e.STALLED_INTERVAL_MS,
    reconcileIntervalMs: e.RECONCILE_INTERVAL_MS,
    reconcileGraceMs: e.RECONCILE_GRACE_MS,
    reconcileBatchSize: e.RECONCILE_BATCH_SIZE,
    infraRetryMaxMs: e.INFRA_RETRY_MAX_MS,
    logLevel: e.LOG_LEVEL,
    crawlTrackingParams: e.CRAWL_TRACKING_PARAMS,
    crawlMaxLinksPerPage: e.CRAWL_MAX_LINKS_PER_PAGE,
    crawlSeenCache: e.CRAWL_SEEN_CACHE,
    sitemapMaxFiles: e.SITEMAP_MAX_FILES,
    sitemapMaxUrls: e.SITEMAP_MAX_URLS,
    sitemapMaxBytes: e.SITEMAP_MAX_BYTES,
    events: eventsConfigOf(e, e.QUEUE_PREFIX),
  };
}
