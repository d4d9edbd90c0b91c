/**
 * The crawler's configuration (router, fetch workers, API, CLI crawls): one zod schema per concern, composed into
 * CRAWLER_ENV; the CrawlerConfig type is inferred from it.
 *
 * HOW TO ADD A VARIABLE (a one-place edit): add `NAME: <schema>` with a one-line TSDoc (units in the name,
 * `@defaultValue`) to the concern below it belongs to. It then appears, typed, as `config.<camelCase of NAME>`
 * everywhere a CrawlerConfig goes (`FETCH_ALLOW_HOSTS` → `config.fetchAllowHosts`); bad values are reported with the
 * variable's name and value, secrets masked by name (core `config/env.ts`). Document it in this package's README.
 * A variable only one process kind reads goes into that app's `env.ts` instead, the same way.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { isNodeRoot } from '@crawler/fetchers/options';
import {
  BLOCK_BASE_PAUSE_MS,
  DATABASE_ENV,
  DEFAULT_RATE_LIMIT_MIN_PAUSE_MS,
  DEFAULT_UNREACHABLE_BASE_PAUSE_MS,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_WALL_MAX_WAIT_MS,
  FETCHERS,
  FETCHER_ALIASES,
  ROUTING_HEURISTIC_TYPES,
  URL_HEURISTIC_EXTRACTORS,
  boolVar,
  canonicalFetcherName,
  envGroup,
  envSchema,
  parseProxyTiers,
  type ExitTier,
  fractionVar,
  intVar,
  logLevelVar,
  optionalIntVar,
  parseEnv,
  parsedVar,
  queuePrefixVar,
  MAX_TIMER_MS,
  MAX_DURATION_MS,
  MAX_RETENTION_DAYS,
  redisUrlVar,
  type ConcernConfig,
  type EnvSource,
  type EnvValuesOf,
} from '@crawler/core';

import { EVENTS_ENV, checkEventsEnv, eventsConfigOf } from './events-config.js';

export { ConfigError, intVar } from '@crawler/core';

/** Kept in step with @crawler/queue's MAX_QUEUE_SHARDS (config does not import the queue package). */
const MAX_QUEUE_SHARDS = 256;

/** Parse `host:port,host:port` (REDIS_CLUSTER_NODES); '' is no cluster. */
export function parseClusterNodeList(value: string): string[] {
  const nodes = value.split(',').map((n) => n.trim()).filter((n) => n !== '');
  for (const n of nodes) if (!/^(\[[0-9a-fA-F:.]+\]|[^:\s]+):\d{1,5}$/.test(n)) throw new Error(`bad node '${n}' (expected host:port)`);
  return nodes;
}

/** Parse `0,2` (QUEUE_SHARDS_CONSUMED); '' is every shard (null). Ranges are checked against QUEUE_SHARDS later. */
export function parseShardNumbers(value: string): number[] | null {
  const items = value.split(',').map((n) => n.trim()).filter((n) => n !== '');
  if (items.length === 0) return null;
  for (const n of items) if (!/^\d+$/.test(n)) throw new Error(`bad shard '${n}' (expected shard numbers, e.g. 0,2)`);
  return [...new Set(items.map(Number))].sort((a, b) => a - b);
}

/** One fetcher this process runs, with how many of its jobs run at once. */
export interface FetcherConfig {
  name: string;
  concurrency: number;
}

const KNOWN_FETCHERS: readonly string[] = Object.values(FETCHERS);
const FETCHER_ITEM = /^([a-z0-9_.-]+)(?::(\d+))?$/;
const DEFAULT_FETCHER_CONCURRENCY: Record<string, number> = { simple_http: 8, playwright: 2, playwright_stealth: 1 };

/**
 * Most jobs one process may run at once per fetcher. Past these a value is a typo, not a plan: every plain-HTTP slot
 * may hold a body of FETCH_MAX_BYTES (10 MiB by default, so 1000 slots can ask for 10 GiB), and every browser slot is
 * an open Chromium page (~100 MB each). Scale further with more processes.
 */
export const MAX_FETCHER_CONCURRENCY: Readonly<Record<string, number>> = { simple_http: 1_000, playwright: 64, playwright_stealth: 64 };

/** Most route jobs one process may run at once (ROUTER_CONCURRENCY): above the default that the largest FETCHERS gives. */
export const MAX_ROUTER_CONCURRENCY = 10_000;

/**
 * Most requests in flight to one domain fleet-wide (DOMAIN_MAX_CONCURRENCY, DOMAIN_LIMITS): politeness with more than
 * this is no politeness, and each slot is a member of the domain's Redis sorted set that every acquire walks.
 */
export const MAX_DOMAIN_CONCURRENCY = 1_000;

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
    // A typo would start a worker on a queue the router never routes to: its links would wait forever.
    if (!KNOWN_FETCHERS.includes(name)) {
      throw new Error(`unknown fetcher '${m[1]}' in '${raw.trim()}' (known: ${[...KNOWN_FETCHERS, ...Object.keys(FETCHER_ALIASES)].join(', ')})`);
    }
    const max = MAX_FETCHER_CONCURRENCY[name];
    if (n !== undefined && max !== undefined && n > max) {
      throw new Error(`concurrency ${m[2]} of ${name} is more than ${max} (expected name or name:concurrency, concurrency from 1 to ${max})`);
    }
    out.set(name, { name, concurrency: n ?? DEFAULT_FETCHER_CONCURRENCY[name] ?? 2 });
  }
  if (out.size === 0) throw new Error('no fetcher listed');
  return [...out.values()];
}

const fetcherList = parsedVar((v) => parseFetcherList(v.trim() === '' ? 'simple_http,playwright,playwright_stealth' : v));

const HEURISTIC_TYPE = /^[a-z0-9_]+$/;

/**
 * Parse `domain,suffix,...` (the router's learned-query heuristic types), `all` for every URL heuristic (the documents'
 * literal query, which pools sites that share path depths), or '' for core's ROUTING_HEURISTIC_TYPES.
 */
export function parseHeuristicTypes(value: string): string[] {
  if (value.trim() === '') return [...ROUTING_HEURISTIC_TYPES];
  if (value.trim().toLowerCase() === 'all') return URL_HEURISTIC_EXTRACTORS.map((e) => e.type);
  const types = [...new Set(value.split(',').map((t) => t.trim().toLowerCase()).filter((t) => t !== ''))];
  const bad = types.filter((t) => !HEURISTIC_TYPE.test(t));
  if (types.length === 0 || bad.length > 0) throw new Error(`expected comma-separated heuristic types or "all"${bad.length ? `, got ${bad.join(', ')}` : ''}`);
  return types;
}

/** Per-domain politeness limits (see DOMAIN_LIMITS). */
export interface DomainLimits {
  maxConcurrency: number;
  minDelayMs?: number;
}

/** Core's limits, re-exported for the apps: MAX_TIMER_MS (2^31 − 1 ms) and MAX_RETENTION_DAYS (100 years). */
export { MAX_RETENTION_DAYS, MAX_TIMER_MS };


/**
 * Parse FETCH_ALLOW_HOSTS, `name,IP,IP/prefix,…`: lower case, de-duplicated. Throws with the offending entry when one
 * is none of the three (a CIDR range with a bad prefix, a URL, a host with a port): the SSRF guard would take it for a
 * host name that never matches, and refuse what it was meant to let through.
 */
export function parseAllowHosts(value: string): string[] {
  const out = new Set<string>();
  for (const raw of value.split(',')) {
    const h = raw.trim().toLowerCase();
    if (h === '') continue;
    const [address, prefix, extra] = h.split('/');
    const family = isIP(address!);
    const ok =
      prefix === undefined
        ? family !== 0 || /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?$/.test(h)
        : extra === undefined && family !== 0 && /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
    if (!ok) throw new Error(`bad entry '${raw.trim()}' (expected a host name, an IP address or a CIDR range such as 127.0.0.0/8)`);
    out.add(h);
  }
  return [...out];
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/** Read NODE_EXTRA_CA_CERTS's file: its PEM certificates, each checked to parse; throws naming the one that does not. */
export function parseCaFile(path: string): string[] {
  if (path.trim() === '') return [];
  let text: string;
  try {
    text = readFileSync(path.trim(), 'utf8');
  } catch (err) {
    throw new Error(`cannot read the file (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const certs = text.match(PEM_CERTIFICATE) ?? [];
  if (certs.length === 0) throw new Error('the file holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  certs.forEach((pem, i) => {
    // Node's own roots parse by definition; parsing the other certificates only keeps a system bundle's start-up short.
    if (isNodeRoot(pem)) return;
    try {
      new X509Certificate(pem);
    } catch (err) {
      throw new Error(`certificate ${i + 1} of the file cannot be parsed (${(err as Error).message})`);
    }
  });
  return certs;
}

const LIMIT_ITEM = /^([a-z0-9.-]+)=(\d+)(?::(\d+))?$/;

/**
 * Parse `domain=concurrency[:minDelayMs],...`; throws with the offending entry. Bounded as DOMAIN_MAX_CONCURRENCY and
 * DOMAIN_MIN_DELAY_MS are: concurrency 1..MAX_DOMAIN_CONCURRENCY, delay 0..MAX_TIMER_MS.
 */
export function parseDomainLimits(value: string): Record<string, DomainLimits> {
  const out: Record<string, DomainLimits> = {};
  for (const raw of value.split(',')) {
    const item = raw.trim().toLowerCase();
    if (item === '') continue;
    const m = LIMIT_ITEM.exec(item);
    const concurrency = Number(m?.[2]);
    if (!m || concurrency < 1 || concurrency > MAX_DOMAIN_CONCURRENCY || (m[3] !== undefined && Number(m[3]) > MAX_TIMER_MS)) {
      throw new Error(
        `bad entry '${raw.trim()}' (expected domain=concurrency or domain=concurrency:minDelayMs, concurrency from 1 to ${MAX_DOMAIN_CONCURRENCY}, minDelayMs at most ${MAX_TIMER_MS})`,
      );
    }
    const domain = m[1]!.replace(/^www\./, '');
    out[domain] = m[3] === undefined ? { maxConcurrency: Number(m[2]) } : { maxConcurrency: Number(m[2]), minDelayMs: Number(m[3]) };
  }
  return out;
}


/** Where the queues live. Every process of a fleet must agree on both. */
export const QUEUE_ENV = {
  /** Redis connection string. @defaultValue 'redis://127.0.0.1:6379' */
  REDIS_URL: redisUrlVar().default('redis://127.0.0.1:6379'),
  /**
   * Seed nodes of a Redis Cluster, `host:port,host:port,...`: when set every process talks to the cluster and
   * REDIS_URL is not used. @defaultValue unset (one Redis at REDIS_URL)
   */
  REDIS_CLUSTER_NODES: parsedVar(parseClusterNodeList),
  /**
   * Redis Sentinels, `host:port,host:port,...`: when set every process asks them where the master named
   * REDIS_SENTINEL_NAME is, and follows it through a failover. REDIS_URL then gives only the data nodes' password,
   * user, database and TLS (`rediss://`); its host and port are not used. @defaultValue unset (one Redis at REDIS_URL)
   */
  REDIS_SENTINELS: parsedVar(parseClusterNodeList),
  /** The master name the sentinels monitor (`sentinel monitor <name> ...`; Bitnami's chart: `mymaster`). @defaultValue unset */
  REDIS_SENTINEL_NAME: parsedVar((v) => v.trim() || undefined),
  /** The sentinels' own password (their `requirepass`), when they have one; blank is none. @defaultValue none */
  REDIS_SENTINEL_PASSWORD: parsedVar((v) => v || undefined),
  /** Redis key prefix of every queue (shard 0's); braces make it a Cluster hash tag. @defaultValue '{crawler}' */
  QUEUE_PREFIX: queuePrefixVar('{crawler}'),
  /**
   * Shards the route and fetch queues and the politeness keys are split into, each under its own hash tag (one Cluster
   * slot each); a link goes to the shard of its registrable domain. Every process of a fleet must agree; 1 is the
   * unsharded layout. Changing it: see README "Changing QUEUE_SHARDS". @defaultValue 1
   */
  QUEUE_SHARDS: intVar(1, 1, MAX_QUEUE_SHARDS),
  /** Shards this process's router and fetchers consume, `0,2`. @defaultValue every shard */
  QUEUE_SHARDS_CONSUMED: parsedVar(parseShardNumbers),
  /** How long a worker owns a job before BullMQ considers it stalled; also the lease of a politeness slot. @defaultValue 30000 */
  LOCK_DURATION_MS: intVar(30_000, 1_000, MAX_TIMER_MS),
  /** How often stalled jobs are looked for. @defaultValue 15000 */
  STALLED_INTERVAL_MS: intVar(15_000, 500, MAX_TIMER_MS),
};

/** How the router chooses a fetcher. */
export const ROUTING_ENV = {
  /** Global learning flag; a link's `learning_mode_enabled` overrides it. @defaultValue true */
  LEARNING_MODE_ENABLED: boolVar(true),
  /** Legacy mode: the fetcher for domains without a hard-coded route (unset: such links fail with `no_route`). */
  DEFAULT_FETCHER: z.string().trim().min(1).transform(canonicalFetcherName).optional(),
  /** The fetchers this process runs (fetch workers) and the router may choose, `name[:concurrency],...` (concurrency bounded by MAX_FETCHER_CONCURRENCY). */
  FETCHERS: fetcherList,
  /**
   * Route jobs this process's router runs at once. Every fetch job was routed first, and a route may wait on a probe
   * (a real request) or the store, so a router with fewer slots than the fetchers it feeds starves them (measured on
   * 50 hosts at FETCHERS=simple_http:32: 8 slots 81 pages/s, 32 slots 95). @defaultValue the sum of FETCHERS'
   * concurrency, plus half of plain HTTP's with FETCH_INLINE (defaultRouterConcurrency)
   */
  ROUTER_CONCURRENCY: optionalIntVar(1, MAX_ROUTER_CONCURRENCY),
  /**
   * A router that routes a link to plain HTTP fetches it itself when this process runs plain-HTTP fetch workers with a
   * slot free (the slots are shared with those workers, so FETCHERS' concurrency still holds): one job per page
   * instead of a route job and a fetch job. The route job stays active until the fetch has finished, so a crash loses
   * nothing; a politeness wait or a retry goes to the fetch queue as before. Measured on the many-domains workload (50
   * hosts, 1,500 pages, 5 paired runs against false): 223 → 251 pages/s, the crawl's CPU 4.65 → 4.11 ms/page, Redis
   * 0.51 → 0.37 ms/page. @defaultValue true
   */
  FETCH_INLINE: boolVar(true),
  /** Confidence a learned fetcher needs to skip the probe. @defaultValue 0.6 */
  CONFIDENCE_THRESHOLD: fractionVar(0.6),
  /** Attempts below which a sample is discounted. @defaultValue 5 */
  MIN_SAMPLE_SIZE: intVar(5, 1),
  /** Heuristic types the router's learned query uses (core ROUTING_HEURISTIC_TYPES: shared ones pool every site). */
  ROUTING_HEURISTIC_TYPES: parsedVar(parseHeuristicTypes),
  /** Let the router use the domain's own latest attempts (bans, re-verification, latest working browser). @defaultValue true */
  DOMAIN_MEMORY_ENABLED: boolVar(true),
  /**
   * With domain memory on: how long after a probe found a domain's page static (plain HTTP, and it worked) the router
   * sends the domain's new URLs to plain HTTP without probing, while its latest attempt there keeps working (0: off).
   * @defaultValue 3600000 (one hour)
   */
  PLAIN_HTTP_MEMORY_MS: intVar(3_600_000, 0, MAX_DURATION_MS),
  /**
   * How long after a probe met a bot wall (a challenge or a block) every router of the fleet (shared through Redis)
   * sends the domain's other URLs that would be probed to the tool the probe chose, without probing them (0: off).
   * @defaultValue 600000
   */
  PROBE_WALL_MEMORY_MS: intVar(600_000, 0, MAX_DURATION_MS),
  /**
   * How long the router reuses a confident learned decision for URLs with the same routing heuristics, instead of
   * reading the store again (0: never). Decisions that would probe are never reused. @defaultValue 10000
   */
  ROUTER_DECISION_CACHE_MS: intVar(10_000, 0, MAX_DURATION_MS),
};

/** What happens after a failed attempt. */
export const RETRY_ENV = {
  /** Fetch attempts a link gets before it is failed for good. @defaultValue core's DEFAULT_MAX_ATTEMPTS (6) */
  MAX_ATTEMPTS: intVar(DEFAULT_MAX_ATTEMPTS, 1),
  /** Longest pause after blocks. @defaultValue 24 h */
  PAUSE_MAX_MS: intVar(24 * 3600_000, 1, MAX_DURATION_MS),
  /**
   * First pause of a domain that blocked us (challenge, 403, a 429 without Retry-After); it doubles with each block
   * in a row, up to PAUSE_MAX_MS. @defaultValue 600000 (10 min)
   */
  PAUSE_BLOCK_BASE_MS: intVar(BLOCK_BASE_PAUSE_MS, 1, MAX_DURATION_MS),
  /**
   * Shortest pause after a rate limit that named a Retry-After: the pause is Retry-After, never less than this.
   * @defaultValue 1000
   */
  RATE_LIMIT_MIN_PAUSE_MS: intVar(DEFAULT_RATE_LIMIT_MIN_PAUSE_MS, 0, MAX_DURATION_MS),
  /**
   * First pause of a site that cannot be reached (robots.txt unreachable, 5xx or 429); it doubles with each check in a
   * row, and the MAX_ATTEMPTS-th fails the link with `site_unreachable`. @defaultValue 60000
   */
  UNREACHABLE_PAUSE_BASE_MS: intVar(DEFAULT_UNREACHABLE_BASE_PAUSE_MS, 1, MAX_DURATION_MS),
  /**
   * How long links wait on a site whose bot wall refused the strongest tool the fleet runs (stealth, or the top of the
   * exit ladder) before they fail with the wall's error (`blocked_captcha`, `blocked_403`); the site's own pause goes on
   * backing off meanwhile. @defaultValue 21600000 (6 h)
   */
  WALL_MAX_WAIT_MS: intVar(DEFAULT_WALL_MAX_WAIT_MS, 1, MAX_DURATION_MS),
};

/** The fetchers' own settings. */
export const FETCHERS_ENV = {
  /** Chromium binary of the browser fetchers. @defaultValue '/usr/bin/chromium' */
  CHROMIUM_PATH: z.string().min(1).default('/usr/bin/chromium'),
  /** Turn the SSRF guard off (loopback, private, link-local addresses): local tests and demos only. @defaultValue false */
  ALLOW_PRIVATE_NETWORKS: boolVar(false),
  /**
   * Host names, IP literals or CIDR ranges let through the SSRF guard although not public,
   * `intranet.example,10.1.2.0/24` (every fetcher, the browsers' egress proxy included). @defaultValue []
   */
  FETCH_ALLOW_HOSTS: parsedVar(parseAllowHosts),
  /**
   * A PEM file of CA certificates trusted besides the bundled roots: a TLS-inspecting proxy's, an internal CA's. Node
   * reads it itself at start-up for plain HTTP; the browser fetchers are handed it too (README "Private CAs"). Checked
   * here because Node only prints a warning for a file it cannot load, and every https fetch then fails.
   * @defaultValue unset: the bundled roots alone
   */
  NODE_EXTRA_CA_CERTS: parsedVar(parseCaFile),
  /** Overall deadline of one fetch. @defaultValue 30000 */
  FETCH_TIMEOUT_MS: intVar(30_000, 1, MAX_TIMER_MS),
  /** Largest body accepted, after decompression. @defaultValue 10 MiB */
  FETCH_MAX_BYTES: intVar(10 * 1024 * 1024, 1),
  /**
   * How long a browser fetcher waits for a challenge page to clear itself (script, cookie, reload) before the page
   * counts as the block it is; 0 turns the wait off. Bounded by FETCH_TIMEOUT_MS. @defaultValue 15000
   */
  CHALLENGE_WAIT_MS: intVar(15_000, 0, MAX_TIMER_MS),
  /**
   * Worker threads that validate fetched responses and take their heuristics (analysis-pool.ts), so the event loop
   * that runs the jobs does not parse pages; 0 analyses on the event loop. @defaultValue 1 on a machine with 2 or more
   * cores, else 0
   */
  ANALYSIS_THREADS: optionalIntVar(0),
};

/**
 * Exit tiers: where requests leave from (README "Proxies (exit tiers)"). The tiers' JSON is checked here, once; the
 * parsed tiers are `config.exitTiers`. Credentials in proxy URLs are masked in every message.
 */
export const EXITS_ENV = {
  /**
   * Proxied exit tiers, a JSON array of `{"name": "datacenter", "cost": 1, "urls": ["http://user:pass@host:port"]}`
   * (`http://`, `https://`, `socks5://`); cost is in cost units per request. @defaultValue none (direct only)
   */
  PROXY_TIERS: z.string().optional(),
  /** A file holding the same JSON as PROXY_TIERS (not both). @defaultValue unset */
  PROXY_TIERS_FILE: parsedVar((path) => {
    if (path.trim() === '') return undefined;
    try {
      return readFileSync(path.trim(), 'utf8');
    } catch (err) {
      throw new Error(`cannot read the file (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }),
  /** The implicit `direct` tier (the worker's own address, cost 0). @defaultValue true */
  PROXY_DIRECT: boolVar(true),
  /**
   * How long a proxy URL that refused a connection, answered 407 or timed out is left out, fleet-wide (shared through
   * Redis), before it is tried again. @defaultValue 60000
   */
  PROXY_UNHEALTHY_MS: intVar(60_000, 1_000, MAX_TIMER_MS),
};

/** The exit tiers of a parsed environment, or the parser's error. */
function exitTiersOf(tiersJson: string | undefined, fileJson: string | undefined, direct: boolean): ExitTier[] {
  return parseProxyTiers(tiersJson ?? fileJson ?? '', { direct });
}

/** Politeness: robots.txt and the per-domain gate. */
export const POLITENESS_ENV = {
  /** Obey robots.txt. @defaultValue true */
  ROBOTS_ENABLED: boolVar(true),
  /**
   * How long the fleet remembers that a site's robots.txt could not be read before one worker asks again; keep it at
   * most UNREACHABLE_PAUSE_BASE_MS, so a paused link's retry reads robots.txt afresh. @defaultValue 30000
   */
  ROBOTS_UNREACHABLE_TTL_MS: intVar(30_000, 1, MAX_DURATION_MS),
  /** Product token matched against robots.txt User-agent lines. @defaultValue 'fetch-router' */
  ROBOTS_USER_AGENT: z.string().min(1).default('fetch-router'),
  /** Requests in flight to one domain across the fleet, at most MAX_DOMAIN_CONCURRENCY. @defaultValue 2 */
  DOMAIN_MAX_CONCURRENCY: intVar(2, 1, MAX_DOMAIN_CONCURRENCY),
  /** Minimum gap between request starts to one domain. @defaultValue 1000 */
  DOMAIN_MIN_DELAY_MS: intVar(1_000, 0, MAX_TIMER_MS),
  /**
   * Per-domain politeness over the two defaults above, `shop.example=1:2000,news.example=4` (concurrency, optionally
   * `:minDelayMs`). Every process of the fleet must get the same value: the limits travel with each request to the
   * shared Redis gate. @defaultValue {}
   */
  DOMAIN_LIMITS: parsedVar(parseDomainLimits),
};

/** The probe: the cheap plain-HTTP request whose answer picks a fetcher. */
export const PROBE_ENV = {
  /** @defaultValue 3000 */
  PROBE_TIMEOUT_MS: intVar(3_000, 1, MAX_TIMER_MS),
  /** Largest probe body read (uncompressed). @defaultValue 5 MiB */
  PROBE_MAX_BYTES: intVar(5 * 1024 * 1024, 1),
  /** Largest compressed probe body kept in Redis for reuse; bigger ones are fetched again. @defaultValue 2 MiB */
  PROBE_STORE_MAX_BYTES: intVar(2 * 1024 * 1024, 1),
  /** How long a stored probe lives in Redis. @defaultValue 30 min */
  PROBE_TTL_MS: intVar(30 * 60_000, 1_000, MAX_DURATION_MS),
  /** Total compressed bytes all stored probes may take in Redis; past it probes are not kept. @defaultValue 256 MiB */
  PROBE_STORE_BUDGET_BYTES: intVar(256 * 1024 * 1024, 1),
};


/** Recovery: Postgres rebuilds what Redis lost; jobs ride out outages. */
export const RECONCILE_ENV = {
  /** Time between reconcile passes (0: only the pass at worker start). @defaultValue 60000 */
  RECONCILE_INTERVAL_MS: intVar(60_000, 0, MAX_TIMER_MS),
  /** Unfinished links touched more recently than this are not reconciled (their job may be between queues). @defaultValue 120000 */
  RECONCILE_GRACE_MS: intVar(120_000, 0, MAX_DURATION_MS),
  /** Links per reconcile batch. @defaultValue 500 */
  RECONCILE_BATCH_SIZE: intVar(500, 1, 10_000),
  /**
   * How many times the reconciler gives a link a new job after its job died (failed or stalled out with its worker);
   * past that the link fails with `job_lost`, so a page that crashes workers cannot crash them forever. @defaultValue 3
   */
  RECONCILE_MAX_RESCUES: intVar(3, 0, 1_000),
  /** Longest wait before a job retries after Postgres or Redis was unreachable (it doubles up to this). @defaultValue 60000 */
  INFRA_RETRY_MAX_MS: intVar(60_000, 100, MAX_TIMER_MS),
  /**
   * How often a worker process checks whether the crawl's tables outgrew their planner statistics, and ANALYZEs those
   * that changed by as much as they held (@crawler/db analyzeStaleTables; one process of the fleet at a time). 0: off,
   * autovacuum alone. @defaultValue 5000
   */
  TABLE_STATS_INTERVAL_MS: intVar(5_000, 0, MAX_TIMER_MS),
  /**
   * Fetch outcomes (attempts, heuristics, the link, the page) that finish close together are written by one statement
   * and one commit, up to this many; each job completes only once its outcome committed. 1: one statement per
   * outcome. @defaultValue 32
   */
  OUTCOME_BATCH_MAX: intVar(32, 1, 1_000),
  /** How long an outcome (or a link write) waits for others to share its statement, when no batch is being written. @defaultValue 5 */
  OUTCOME_BATCH_WAIT_MS: intVar(5, 0, 1_000),
  /**
   * The router's link writes (its decision, `routing` while a probe runs) go the same way: up to this many in one
   * multi-row `UPDATE`, each route job completing after its write committed. 1: one statement per write. @defaultValue 32
   */
  LINK_WRITE_BATCH_MAX: intVar(32, 1, 1_000),
  /**
   * The router's and the fetch workers' link reads (one per job) that arrive while another is under way share one
   * `WHERE id = ANY(…)` statement, up to this many; a read never waits for company. 1: one statement per read. @defaultValue 32
   */
  LINK_READ_BATCH_MAX: intVar(32, 1, 1_000),
};

/** Continuous crawling: revisit schedules and the scheduler that enqueues due links. */
export const SCHEDULE_ENV = {
  /**
   * Time between the revisit scheduler's passes in every worker process (router app, fetcher app, `crawl run`);
   * 0: this process runs no scheduler (due links wait for one that does). @defaultValue 5000
   */
  SCHEDULER_INTERVAL_MS: intVar(5_000, 0, MAX_TIMER_MS),
  /** Due links claimed per statement. @defaultValue 500 */
  SCHEDULER_BATCH_SIZE: intVar(500, 1, 10_000),
  /** The scheduler claims due links only while fewer route jobs than this wait in Redis. @defaultValue 10000 */
  SCHEDULER_MAX_QUEUED: intVar(10_000, 1),
  /**
   * Time between re-reads of a continuous crawl's sitemaps (running, `sitemaps` on, a revisit policy): pages newly
   * listed are admitted, and a page whose `<lastmod>` is newer than its last visit is made due now. Conditional: a
   * file unchanged since the last re-read (304) costs one request and adds nothing. One process of the fleet reads
   * each crawl's sitemaps per period (a Redis lease); 0: this process reads none. @defaultValue 900000 (15 minutes)
   */
  SITEMAP_RECHECK_INTERVAL_MS: intVar(900_000, 0, MAX_TIMER_MS),
  /** Known links one sitemap re-read of a crawl may make due at once (the longest-unvisited first). @defaultValue 1000 */
  SITEMAP_RECHECK_MAX_LINKS: intVar(1_000, 1),
  /**
   * Pages newly listed in a crawl's sitemaps that one re-read admits at most (in sitemap order; the rest at the next
   * re-read), within the crawl's own limits. @defaultValue 1000
   */
  SITEMAP_RECHECK_MAX_NEW_LINKS: intVar(1_000, 1),
  /** Shortest revisit interval a producer may ask for, seconds (API and CLI refuse less). @defaultValue 60 */
  REVISIT_MIN_INTERVAL_S: intVar(60, 0),
};

/** Link-following crawls: what a page contributes and what sitemaps may cost. */
export const CRAWL_ENV = {
  /**
   * Query parameters a new crawl strips from discovered links before dedup (exact names or `prefix*`), when its
   * request names none, and that producers' URLs (POST /links, `crawl enqueue`) lose before they become links.
   * @defaultValue core's DEFAULT_TRACKING_PARAMS (utm_*, fbclid, gclid, …)
   */
  CRAWL_TRACKING_PARAMS: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.split(',').map((p) => p.trim()).filter(Boolean))),
  /** Links one page contributes to its crawl at most. @defaultValue 5000 */
  CRAWL_MAX_LINKS_PER_PAGE: intVar(5_000, 1),
  /**
   * `redis`: links a crawl has already decided on are answered from a Redis set (12 bytes of hash per URL) before
   * Postgres, which stays the arbiter; `off`: every link goes to Postgres. @defaultValue 'redis'
   */
  CRAWL_SEEN_CACHE: z.enum(['redis', 'off']).default('redis'),
  /** Sitemap files (indexes included) one crawl reads at most. @defaultValue 50 */
  SITEMAP_MAX_FILES: intVar(50, 1),
  /** Page URLs one crawl takes from sitemaps at most. @defaultValue 50000 */
  SITEMAP_MAX_URLS: intVar(50_000, 1),
  /** Bytes of one sitemap after gunzip at most. @defaultValue 50 MiB */
  SITEMAP_MAX_BYTES: intVar(50 * 1024 * 1024, 1024),
};

/** Revisits: conditional requests and the retention of page versions. */
export const VERSIONS_ENV = {
  /** Revisits by plain HTTP send If-None-Match / If-Modified-Since from the stored page's validators. @defaultValue true */
  CONDITIONAL_REQUESTS: boolVar(true),
  /** `crawl prune` keeps each link's last this many versions, whatever their age. @defaultValue 10 */
  VERSIONS_KEEP: intVar(10, 1),
  /** `crawl prune` keeps versions younger than this many days, whatever their number. @defaultValue 30 */
  VERSIONS_KEEP_DAYS: intVar(30, 0, MAX_RETENTION_DAYS),
  /** A revisit that finds the page unchanged (304 or the same body) writes a `link.unchanged` event. @defaultValue false */
  EVENTS_UNCHANGED: boolVar(false),
};

/** Every variable of the crawler, composed from the concerns above. */
export const CRAWLER_ENV = {
  ...DATABASE_ENV,
  ...QUEUE_ENV,
  ...ROUTING_ENV,
  ...RETRY_ENV,
  ...FETCHERS_ENV,
  ...POLITENESS_ENV,
  ...PROBE_ENV,
  ...RECONCILE_ENV,
  ...SCHEDULE_ENV,
  ...CRAWL_ENV,
  ...EVENTS_ENV,
  ...VERSIONS_ENV,
  ...EXITS_ENV,
  /** pino level. @defaultValue 'info' */
  LOG_LEVEL: logLevelVar('info'),
};

/**
 * ROUTER_CONCURRENCY's default: the sum of the fetchers' concurrency, and with FETCH_INLINE half of plain HTTP's again.
 * An inline fetch holds its route slot through the outcome write but gives its fetch slot back once the request is
 * done, so the extra route slots are pages being written while the next requests go (many-domains bench, 4 pairs:
 * 320 → 348 pages/s with 48 route slots for 32 plain-HTTP slots; 64 gave 347 and more probes).
 */
export function defaultRouterConcurrency(fetchers: readonly { name: string; concurrency: number }[], fetchInline: boolean): number {
  const sum = fetchers.reduce((n, f) => n + f.concurrency, 0);
  const plain = fetchers.find((f) => f.name === FETCHERS.simpleHttp)?.concurrency ?? 0;
  return sum + (fetchInline ? Math.ceil(plain / 2) : 0);
}

/**
 * Pages the browser pool keeps open at once: as many as the process runs browser fetches, each browser fetcher's
 * concurrency split over the consumed shards and rounded up as its workers split it; undefined (the pool's default)
 * without a browser fetcher. A fetch waiting for a page has its deadline running: with the pool's 4 pages under
 * FETCHERS=playwright:4,playwright_stealth:2, two slow pages' fetches timed out without having opened a page.
 */
export function browserPageSlots(fetchers: readonly { name: string; concurrency: number }[], shardsConsumed: number): number | undefined {
  const shards = Math.max(1, shardsConsumed);
  const browsers = fetchers.filter((f) => f.name === FETCHERS.playwright || f.name === FETCHERS.playwrightStealth);
  if (browsers.length === 0) return undefined;
  return browsers.reduce((n, f) => n + Math.max(1, Math.ceil(f.concurrency / shards)) * shards, 0);
}

/** The crawler's concern: CRAWLER_ENV, plus what is computed from several variables and the rules across them. */
export const CRAWLER = envGroup(
  CRAWLER_ENV,
  (c) => ({
    ...c,
    routerConcurrency: c.routerConcurrency ?? defaultRouterConcurrency(c.fetchers, c.fetchInline),
    /** ANALYSIS_THREADS, by default one thread when the machine has a second core. */
    analysisThreads: c.analysisThreads ?? (availableParallelism() >= 2 ? 1 : 0),
    /** The shards this process consumes: QUEUE_SHARDS_CONSUMED, or every shard. */
    queueShardsConsumed: c.queueShardsConsumed ?? Array.from({ length: c.queueShards }, (_, i) => i),
    /** Pages the browser pool keeps open at once: one per browser fetch the process runs (browserPageSlots). */
    browserPages: browserPageSlots(c.fetchers, (c.queueShardsConsumed ?? Array.from({ length: c.queueShards })).length),
    /**
     * Where Redis is, for createRedisConnection: the cluster when REDIS_CLUSTER_NODES is set, the master the sentinels
     * name when REDIS_SENTINELS is, else REDIS_URL.
     */
    redisTarget: {
      url: c.redisUrl,
      clusterNodes: c.redisClusterNodes,
      ...(c.redisSentinels.length > 0 && c.redisSentinelName
        ? { sentinel: { nodes: c.redisSentinels, name: c.redisSentinelName, ...(c.redisSentinelPassword ? { password: c.redisSentinelPassword } : {}) } }
        : {}),
    },
    /** Link events: webhooks, retries, the Redis stream, whether router processes dispatch. */
    events: eventsConfigOf(c, c.queuePrefix),
    /** Exit tiers, cheapest first (`direct` first unless PROXY_DIRECT=false). */
    exitTiers: exitTiersOf(c.proxyTiers, c.proxyTiersFile, c.proxyDirect),
  }),
  (e, ctx) => {
    checkEventsEnv(e, ctx);
    const tiersVar = e.PROXY_TIERS !== undefined ? 'PROXY_TIERS' : 'PROXY_TIERS_FILE';
    if (e.PROXY_TIERS !== undefined && typeof e.PROXY_TIERS_FILE === 'string') {
      ctx.addIssue({ code: 'custom', path: ['PROXY_TIERS'], message: 'set PROXY_TIERS or PROXY_TIERS_FILE, not both' });
    } else if (typeof e.PROXY_DIRECT === 'boolean') {
      try {
        exitTiersOf(e.PROXY_TIERS, typeof e.PROXY_TIERS_FILE === 'string' ? e.PROXY_TIERS_FILE : undefined, e.PROXY_DIRECT);
      } catch (err) {
        ctx.addIssue({ code: 'custom', path: [tiersVar], message: (err as Error).message });
      }
    }
    if ((e.REDIS_CLUSTER_NODES ?? []).length > 0 && typeof e.QUEUE_PREFIX === 'string' && !/\{[^{}]+\}/.test(e.QUEUE_PREFIX)) {
      // Without a hash tag each key of a queue hashes to its own slot, and BullMQ's scripts, which touch several keys
      // of a queue at once, fail with CROSSSLOT on the first job.
      ctx.addIssue({
        code: 'custom', path: ['QUEUE_PREFIX'],
        message: `needs a hash tag on a Redis Cluster (REDIS_CLUSTER_NODES is set): every key of a queue must share one slot; use '{${e.QUEUE_PREFIX}}'`,
      });
    }
    checkSentinelEnv(e, ctx);
    const bad = (e.QUEUE_SHARDS_CONSUMED ?? []).filter((n) => n >= e.QUEUE_SHARDS);
    if (bad.length > 0) ctx.addIssue({ code: 'custom', path: ['QUEUE_SHARDS_CONSUMED'], message: `shard ${bad.join(', ')} does not exist (QUEUE_SHARDS=${e.QUEUE_SHARDS}: 0..${e.QUEUE_SHARDS - 1})` });
  },
);

/** REDIS_SENTINELS and REDIS_SENTINEL_NAME go together, exclude REDIS_CLUSTER_NODES, and need a TCP REDIS_URL. */
function checkSentinelEnv(e: Partial<EnvValuesOf<typeof QUEUE_ENV>>, ctx: z.RefinementCtx): void {
  const sentinels = Array.isArray(e.REDIS_SENTINELS) ? e.REDIS_SENTINELS : [];
  const issue = (variable: string, message: string) => ctx.addIssue({ code: 'custom', path: [variable], message });
  if (sentinels.length > 0 && !e.REDIS_SENTINEL_NAME) issue('REDIS_SENTINEL_NAME', "required when REDIS_SENTINELS is set: the master name the sentinels monitor (their 'sentinel monitor <name>')");
  if (sentinels.length === 0 && e.REDIS_SENTINEL_NAME && Array.isArray(e.REDIS_SENTINELS)) issue('REDIS_SENTINELS', 'required when REDIS_SENTINEL_NAME is set: the sentinels, host:port,host:port');
  if (sentinels.length === 0 && e.REDIS_SENTINEL_PASSWORD && Array.isArray(e.REDIS_SENTINELS)) issue('REDIS_SENTINEL_PASSWORD', 'only used with REDIS_SENTINELS, which is unset');
  if (sentinels.length === 0) return;
  if ((e.REDIS_CLUSTER_NODES ?? []).length > 0) issue('REDIS_SENTINELS', 'set REDIS_SENTINELS or REDIS_CLUSTER_NODES, not both (a Redis Cluster fails over by itself)');
  if (typeof e.REDIS_URL === 'string' && e.REDIS_URL.startsWith('unix:')) issue('REDIS_URL', 'a unix socket cannot follow a Sentinel failover: with REDIS_SENTINELS it gives only the password, user and database, as redis://[:password@]host/db');
}

/** The crawler's configuration, parsed once at start-up: each CRAWLER_ENV variable under its camelCase name. */
export type CrawlerConfig = ConcernConfig<typeof CRAWLER>;

/** The crawler's configuration as one schema, for parseEnv. */
export const CRAWLER_ENV_SCHEMA = envSchema(CRAWLER);

/**
 * Parse the crawler's environment. Throws ConfigError listing every bad variable with the value it got, so a
 * misconfigured deployment fails at start-up rather than on the first job. The only reader of process.env is the
 * caller that passes it in.
 */
export function loadConfig(env: EnvSource): CrawlerConfig {
  return parseEnv(CRAWLER_ENV_SCHEMA, env);
}
