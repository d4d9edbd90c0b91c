#!/usr/bin/env node
/**
 * Routing over exits, crawled for real: simulated sites on loopback that refuse client address ranges, two loopback
 * forward proxies whose outbound connections leave from a "datacenter" (127.0.2.x) and a "residential" (127.0.3.x)
 * address, and three ways of crawling the same pages, each on fresh sites and (for ours) a fresh database:
 *   learned          our crawler (pipeline runtime) with direct, datacenter (cost 1) and residential (cost 10) tiers;
 *   always-top-tier  our crawler with only the residential tier and PROXY_DIRECT=false;
 *   crawlee-tiers    Crawlee's tiered-proxy rule (a per-domain error histogram that moves a domain up a tier when a
 *                    retry follows an error and lets it drift back down as the errors age; no learning across runs),
 *                    as a loop over undici through the same proxies: Crawlee's own HTTP client speaks only
 *                    forwarding to an HTTP proxy for http:// targets, and these proxies only tunnel.
 * Cost and blocks are read from the sites' own request logs (the source address tells the exit), against the oracle
 * computed from the site definitions: every page once, through the cheapest tier the site serves.
 *
 *   node bench/dist/exits-crawl.js [--rounds 6] [--pages 10] [--modes learned,always-top-tier,crawlee-tiers]
 *     [--browser-site] (a seventh site that only a browser passes: ours launches Chromium, the baseline cannot)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { Agent, request } from 'undici';
import { silentLogger } from '@crawler/core';
import { createTestDatabase } from '@crawler/db/testing';
import { browserLikeHeaders, createProxyConnector } from '@crawler/fetchers';
import { createRuntime, loadConfig } from '@crawler/pipeline';
import { deleteRedisPrefix } from '@crawler/queue';
import { startSimSite, type SimSite, type SiteRequest } from '@crawler/sim-web';
import { startForwardProxy, type ForwardProxy } from '@crawler/testkit';
import { benchArgs } from './cli-args.js';
import { benchEnv } from './env.js';

/** An exit as the sites see it: a cost per request and the source address its connections leave from. */
export interface BenchTier {
  name: 'direct' | 'datacenter' | 'residential';
  cost: number;
  /** Source address of the tier's connections (the worker's own address for direct). */
  address: string;
}

export const BENCH_TIERS: readonly BenchTier[] = [
  { name: 'direct', cost: 0, address: '127.0.0.1' },
  { name: 'datacenter', cost: 1, address: '127.0.2.41' },
  { name: 'residential', cost: 10, address: '127.0.3.41' },
];

/** One site of the bench: the address ranges it refuses (a refused range gets a 403 whatever the client). */
export interface ExitSiteDef {
  name: string;
  blocked: string[];
  /** `interstitial`: every visitor without clearance gets a script challenge only a browser passes. @defaultValue 'static' */
  kind?: 'static' | 'interstitial';
}

/** A browser page load in cost units (core FETCHER_COST_UNITS.playwright); plain HTTP is counted as free here. */
export const BROWSER_COST_UNITS = 1;

/** With --browser-site: one site open to every address that serves only a browser (a cookie-and-reload interstitial). */
export const BROWSER_SITE: ExitSiteDef = { name: 'interstitial', blocked: [], kind: 'interstitial' };

/** Two sites open to all, two refusing the worker's range, two refusing the datacenter range too. */
export const EXIT_SITES: readonly ExitSiteDef[] = [
  { name: 'open-1', blocked: [] },
  { name: 'open-2', blocked: [] },
  { name: 'no-direct-1', blocked: ['127.0.0.'] },
  { name: 'no-direct-2', blocked: ['127.0.0.'] },
  { name: 'residential-only-1', blocked: ['127.0.0.', '127.0.2.'] },
  { name: 'residential-only-2', blocked: ['127.0.0.', '127.0.2.'] },
];

/** The tier a request came through, from the address the site saw. */
export function tierOfAddress(address: string, tiers: readonly BenchTier[] = BENCH_TIERS): BenchTier {
  for (const t of tiers) if (t.name !== 'direct' && address.startsWith(t.address.slice(0, t.address.lastIndexOf('.') + 1))) return t;
  return tiers[0]!;
}

/** The cheapest tier a site serves (null: none does). */
export function oracleTier(site: ExitSiteDef, tiers: readonly BenchTier[] = BENCH_TIERS): BenchTier | null {
  return tiers.find((t) => !site.blocked.some((prefix) => t.address.startsWith(prefix))) ?? null;
}

/**
 * Oracle cost units per page: each page fetched once through its site's cheapest serving tier, by a browser where
 * only a browser passes (its one interstitial per session is left out: the floor, not a strategy).
 */
export function oracleCostPerPage(sites: readonly ExitSiteDef[], tiers: readonly BenchTier[] = BENCH_TIERS): number {
  return sites.reduce((sum, s) => sum + (oracleTier(s, tiers)?.cost ?? 0) + (s.kind === 'interstitial' ? BROWSER_COST_UNITS : 0), 0) / sites.length;
}

/** What one mode did, read from the sites' request logs. */
export interface ExitCrawlResult {
  mode: string;
  pages: number;
  /** Distinct pages the sites served. */
  served: number;
  /** Links the crawler itself settled as done. */
  done: number;
  requests: number;
  blocks: number;
  costUnits: number;
  /** Requests per tier. */
  byTier: Record<string, number>;
  browserRequests: number;
  /** Blocks per site, by site name. */
  blocksBySite: Record<string, number>;
  costPerPage: number;
  blocksPerPage: number;
  costVsOracle?: number;
  /** The same figures for the last round alone (after the first rounds taught the crawler). */
  lastRound: { pages: number; served: number; costPerPage: number; blocksPerPage: number };
  wallMs: number;
}

/** Cost, blocks and served pages of a set of request logs. */
export function summarizeLogs(logs: readonly (readonly SiteRequest[])[], tiers: readonly BenchTier[] = BENCH_TIERS) {
  let requests = 0;
  let blocks = 0;
  let costUnits = 0;
  let browserRequests = 0;
  const byTier: Record<string, number> = {};
  const served = new Set<string>();
  logs.forEach((log, i) => {
    for (const r of log) {
      requests += 1;
      const t = tierOfAddress(r.address, tiers);
      byTier[t.name] = (byTier[t.name] ?? 0) + 1;
      costUnits += t.cost;
      if (r.client === 'browser') {
        browserRequests += 1;
        costUnits += BROWSER_COST_UNITS;
      }
      if (r.outcome === 'address_blocked' || r.outcome === 'challenge' || r.outcome === 'rate_limited') blocks += 1;
      if (r.outcome === 'served') served.add(`${i} ${r.path}`);
    }
  });
  return { requests, blocks, costUnits, browserRequests, byTier, served: served.size };
}

/**
 * Crawlee's tiered-proxy rule for one domain (ProxyConfiguration with `tieredProxyUrls`): a retry adds 10 to the
 * error score of the tier the previous try used; every prediction ages the other tiers' scores by 1 and moves the
 * domain to a neighbouring tier whose score is lower (down when equal), one step at a time.
 */
export class CrawleeTierTracker {
  private readonly histogram: number[];
  private current = 0;
  constructor(tierCount: number) {
    this.histogram = new Array<number>(tierCount).fill(0);
  }
  addError(tier: number): void {
    this.histogram[tier]! += 10;
  }
  predictTier(): number {
    this.histogram.forEach((x, i) => {
      if (i !== this.current && x > 0) this.histogram[i] = x - 1;
    });
    const here = this.histogram[this.current]!;
    const left = this.current > 0 ? this.histogram[this.current - 1]! : Infinity;
    const right = this.current < this.histogram.length - 1 ? this.histogram[this.current + 1]! : Infinity;
    if (here > Math.min(left, right)) this.current += left <= right ? -1 : 1;
    else if (here === left) this.current -= 1;
    return this.current;
  }
}

interface World {
  sites: SimSite[];
  dc: ForwardProxy;
  res: ForwardProxy;
  close(): Promise<void>;
}

async function startWorld(defs: readonly ExitSiteDef[]): Promise<World> {
  const dc = await startForwardProxy({ localAddress: BENCH_TIERS[1]!.address, auth: { user: 'benchDc', pass: 'dcSecret' } });
  const res = await startForwardProxy({ localAddress: BENCH_TIERS[2]!.address, auth: { user: 'benchRes', pass: 'resSecret' } });
  const sites: SimSite[] = [];
  for (const [i, d] of defs.entries()) sites.push(await startSimSite({ kind: d.kind ?? 'static', name: d.name, blockedAddresses: d.blocked, challengeDelayMs: 200 }, { host: `127.0.41.${i + 1}`, index: i }));
  return {
    sites,
    dc,
    res,
    close: async () => {
      await Promise.all([...sites.map((s) => s.close()), dc.close(), res.close()]);
    },
  };
}

interface RunOptions {
  rounds: number;
  pages: number;
  defs: readonly ExitSiteDef[];
  log: (s: string) => void;
  /** Print every attempt of ours, per site. */
  debug?: boolean;
}

type RoundCrawler = (urls: string[]) => Promise<void>;

/** Feed the same rounds of pages to a crawler and measure it from the sites' logs. */
async function measure(mode: string, opts: RunOptions, world: World, crawlRound: RoundCrawler, doneCount: () => Promise<number>): Promise<ExitCrawlResult> {
  const started = performance.now();
  let lastFrom = 0;
  const lastOffsets: number[] = [];
  for (let round = 0; round < opts.rounds; round++) {
    if (round === opts.rounds - 1) for (const s of world.sites) lastOffsets.push(s.requestLog().length);
    const urls = world.sites.flatMap((s) => s.urls(opts.pages, round * opts.pages));
    if (round === opts.rounds - 1) lastFrom = urls.length;
    await crawlRound(urls);
    const t = summarizeLogs(world.sites.map((s) => s.requestLog()));
    opts.log(`  ${mode} round ${round + 1}/${opts.rounds}: requests ${t.requests} served ${t.served} blocks ${t.blocks} cost ${t.costUnits}`);
  }
  const pages = world.sites.length * opts.rounds * opts.pages;
  const all = summarizeLogs(world.sites.map((s) => s.requestLog()));
  const last = summarizeLogs(world.sites.map((s, i) => s.requestLog().slice(lastOffsets[i])));
  return {
    mode,
    pages,
    served: all.served,
    done: await doneCount(),
    requests: all.requests,
    blocks: all.blocks,
    costUnits: all.costUnits,
    byTier: all.byTier,
    browserRequests: all.browserRequests,
    blocksBySite: Object.fromEntries(world.sites.map((s) => [s.name, summarizeLogs([s.requestLog()]).blocks])),
    costPerPage: all.costUnits / pages,
    blocksPerPage: all.blocks / pages,
    lastRound: { pages: lastFrom, served: last.served, costPerPage: last.costUnits / lastFrom, blocksPerPage: last.blocks / lastFrom },
    wallMs: performance.now() - started,
  };
}

/** Our crawler on the bench's sites: a fresh database and Redis prefix, everything closed before it returns. */
async function runOurs(mode: 'learned' | 'always-top-tier', opts: RunOptions): Promise<ExitCrawlResult> {
  const world = await startWorld(opts.defs);
  const redisUrl = benchEnv().redisUrl;
  const db = await createTestDatabase(`bench_exits_${mode.replace(/-/g, '_')}`);
  const prefix = `{crawler_bench_exits_${mode.replace(/-/g, '_')}_${process.pid}}`;
  const tiers =
    mode === 'learned'
      ? [
          { name: 'datacenter', cost: 1, urls: [world.dc.authUrl] },
          { name: 'residential', cost: 10, urls: [world.res.authUrl] },
        ]
      : [{ name: 'residential', cost: 10, urls: [world.res.authUrl] }];
  const config = loadConfig({
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: prefix,
    ALLOW_PRIVATE_NETWORKS: 'true',
    FETCHERS: 'simple_http:4,playwright:1,playwright_stealth:1',
    DOMAIN_MIN_DELAY_MS: '0',
    // One page at a time per site, as the baseline loop does, so nobody gains by blocking in parallel.
    DOMAIN_MAX_CONCURRENCY: '1',
    ROBOTS_ENABLED: 'false',
    // A block pauses the domain (10 min by default); a few ms keep the climb inside the bench, for every mode alike.
    PAUSE_BLOCK_BASE_MS: '1',
    PAUSE_MAX_MS: '5',
    PROXY_TIERS: JSON.stringify(tiers),
    ...(mode === 'always-top-tier' ? { PROXY_DIRECT: 'false' } : {}),
  });
  const runtime = createRuntime(config, { prisma: db.prisma, logger: silentLogger });
  try {
    runtime.startWorkers();
    return await measure(
      mode,
      opts,
      world,
      async (urls) => {
        const res = await runtime.enqueue(urls);
        if (res.rejected.length > 0) throw new Error(`rejected: ${JSON.stringify(res.rejected[0])}`);
        await runtime.waitUntilIdle({ pollMs: 50 });
      },
      async () => {
        if (opts.debug) {
          const rows = await db.prisma.fetcherAttempt.findMany({ orderBy: { id: 'asc' }, select: { url: true, fetcher: true, exitTier: true, success: true, selectionSource: true } });
          const byHost = new Map<string, string[]>();
          for (const a of rows) {
            const u = new URL(a.url);
            byHost.set(u.hostname, [...(byHost.get(u.hostname) ?? []), `${u.pathname.slice(6)}:${a.selectionSource}:${a.fetcher}@${a.exitTier}${a.success ? '' : '✗'}`]);
          }
          for (const [host, list] of byHost) opts.log(`    ${host}: ${list.join(' ')}`);
        }
        return db.prisma.link.count({ where: { status: 'done' } });
      },
    );
  } finally {
    await runtime.close({ drainTimeoutMs: 5_000 });
    const r = new Redis(redisUrl);
    try {
      await deleteRedisPrefix(r, prefix);
    } finally {
      r.disconnect();
    }
    await db.drop();
    await world.close();
  }
}

/** Crawlee's default retries of a blocked request (maxRequestRetries). */
const CRAWLEE_MAX_RETRIES = 3;
const BLOCKED_STATUS = new Set([401, 403, 429, 503]);
const HEADERS = browserLikeHeaders('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/138.0.0.0 Safari/537.36');

/** The Crawlee-style baseline: plain HTTP through undici, a per-domain CrawleeTierTracker, pages of a site one at a time. */
async function runCrawleeTiers(opts: RunOptions): Promise<ExitCrawlResult> {
  const world = await startWorld(opts.defs);
  const agents = [
    new Agent(),
    new Agent({ connect: createProxyConnector(world.dc.authUrl, { timeoutMs: 10_000 }) as never }),
    new Agent({ connect: createProxyConnector(world.res.authUrl, { timeoutMs: 10_000 }) as never }),
  ];
  const trackers = new Map<string, CrawleeTierTracker>();
  let done = 0;
  const fetchPage = async (url: string): Promise<void> => {
    const host = new URL(url).hostname;
    let tracker = trackers.get(host);
    if (!tracker) trackers.set(host, (tracker = new CrawleeTierTracker(agents.length)));
    let lastTier: number | undefined;
    for (let attempt = 0; attempt <= CRAWLEE_MAX_RETRIES; attempt++) {
      if (lastTier !== undefined) tracker.addError(lastTier);
      const tier = tracker.predictTier();
      lastTier = tier;
      try {
        const res = await request(url, { dispatcher: agents[tier], headers: HEADERS });
        await res.body.text();
        if (res.statusCode === 200) {
          done += 1;
          return;
        }
        if (!BLOCKED_STATUS.has(res.statusCode)) return;
      } catch {
        // A network error is retried like a block, as Crawlee does.
      }
    }
  };
  try {
    return await measure(
      'crawlee-tiers',
      opts,
      world,
      async (urls) => {
        const bySite = new Map<string, string[]>();
        for (const u of urls) bySite.set(new URL(u).hostname, [...(bySite.get(new URL(u).hostname) ?? []), u]);
        await Promise.all([...bySite.values()].map(async (list) => {
          for (const u of list) await fetchPage(u);
        }));
      },
      async () => done,
    );
  } finally {
    await Promise.all(agents.map((a) => a.close()));
    await world.close();
  }
}

export const MODES = ['learned', 'always-top-tier', 'crawlee-tiers'] as const;
export type ExitCrawlMode = (typeof MODES)[number];

/** Run the modes one after the other; ratios are against the oracle of the site definitions. */
export async function runExitsCrawl(opts: RunOptions & { modes: readonly ExitCrawlMode[] }): Promise<{ oracleCostPerPage: number; results: ExitCrawlResult[] }> {
  const oracle = oracleCostPerPage(opts.defs);
  const results: ExitCrawlResult[] = [];
  for (const mode of opts.modes) {
    const r = mode === 'crawlee-tiers' ? await runCrawleeTiers(opts) : await runOurs(mode, opts);
    results.push({ ...r, costVsOracle: oracle > 0 ? r.costPerPage / oracle : undefined });
  }
  return { oracleCostPerPage: oracle, results };
}

export function formatExitsCrawlTable(oracle: number, results: readonly ExitCrawlResult[]): string {
  const tiers = (r: ExitCrawlResult) => BENCH_TIERS.map((t) => `${r.byTier[t.name] ?? 0}`).join(' / ');
  const rows = results.map(
    (r) =>
      `| ${r.mode} | ${r.pages} | ${r.served} | ${r.done} | ${(r.requests / r.pages).toFixed(2)} | ${tiers(r)} | ${r.costPerPage.toFixed(2)} | ${r.costVsOracle?.toFixed(2) ?? '-'}× | ${r.blocksPerPage.toFixed(3)} | ${r.lastRound.costPerPage.toFixed(2)} | ${r.lastRound.blocksPerPage.toFixed(3)} | ${r.browserRequests} | ${(r.wallMs / 1000).toFixed(1)} |`,
  );
  return [
    '| mode | pages | served | crawler done | requests / page | requests direct / dc / res | cost units / page | × oracle | blocks / page | last round cost / page | last round blocks / page | browser requests | wall s |',
    '|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|',
    `| oracle | | | | 1.00 | | ${oracle.toFixed(2)} | 1.00× | 0.000 | ${oracle.toFixed(2)} | 0.000 | 0 | |`,
    ...rows,
  ].join('\n');
}

async function main(): Promise<void> {
  const { values } = benchArgs({
    script: 'exits-crawl',
    options: {
      rounds: { type: 'string', default: '6', description: 'crawl rounds per mode, each on new pages of every site' },
      pages: { type: 'string', default: '10', description: 'pages per site in each round' },
      modes: { type: 'string', default: MODES.join(','), placeholder: 'LIST', description: 'crawl modes to run, comma-separated' },
      debug: { type: 'boolean', default: false, description: "print our crawler's fetch attempts per host (selection, fetcher, exit tier) after each of its crawls" },
      'browser-site': { type: 'boolean', default: false, description: 'add a seventh site that only a browser passes (ours launches Chromium, the baseline cannot)' },
    },
  });
  const modes = values.modes.split(',').map((m) => m.trim()) as ExitCrawlMode[];
  for (const m of modes) if (!MODES.includes(m)) throw new Error(`--modes: unknown ${JSON.stringify(m)}`);
  const defs = values['browser-site'] ? [...EXIT_SITES, BROWSER_SITE] : EXIT_SITES;
  const opts = { rounds: Number(values.rounds), pages: Number(values.pages), defs, debug: values.debug, log: (s: string) => process.stderr.write(`${s}\n`) };
  if (!Number.isInteger(opts.rounds) || opts.rounds < 1 || !Number.isInteger(opts.pages) || opts.pages < 1) throw new Error('--rounds and --pages: integers >= 1');
  const { oracleCostPerPage: oracle, results } = await runExitsCrawl({ ...opts, modes });
  const table = formatExitsCrawlTable(oracle, results);
  process.stdout.write(`${table}\n`);
  for (const r of results) process.stdout.write(`${r.mode} blocks by site: ${JSON.stringify(r.blocksBySite)}\n`);
  const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'results');
  mkdirSync(dir, { recursive: true });
  const at = new Date().toISOString();
  writeFileSync(join(dir, 'exits-crawl-latest.json'), `${JSON.stringify({ at, rounds: opts.rounds, pages: opts.pages, sites: defs, oracleCostPerPage: oracle, results }, null, 2)}\n`);
  writeFileSync(join(dir, 'exits-crawl-latest.md'), `# Routing over exits, real crawl (${at})\n\n${opts.rounds} rounds × ${opts.pages} pages × ${defs.length} sites\n\n${table}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
