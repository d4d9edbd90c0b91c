/**
 * Routing quality: the same simulated web (≥ 50 domains of mixed kinds, some changing kind part-way) crawled in
 * rounds of simulated days by four strategies, each against a fresh database, in one run:
 *   learning       learning mode as shipped;
 *   oracle         legacy mode with a perfect route table (knows every site's kind, updated at each change);
 *   always-probe   learning mode with the learned step switched off (a findBestFetcher that is never confident);
 *   always-browser legacy mode sending everything to playwright_stealth.
 * Time is a ManualClock: the crawler's decay, pauses and the sites' limits and changes all read it, so weeks pass in
 * minutes. Usage: node bench/dist/routing-quality.js [--rounds 6] [--pages 1] [--scale 1] [--strategies a,b]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { DAY_MS, ManualClock, silentLogger } from '@crawler/core';
import { RouteStore } from '@crawler/db';
import { createTestDatabase } from '@crawler/db/testing';
import { createRuntime, loadConfig, type RuntimeOverrides } from '@crawler/pipeline';
import { startSimWeb, type SiteRequest } from '@crawler/sim-web';
import { benchArgs } from './cli-args.js';
import { buildRoutingScenario, oracleRoute, scenarioKindAt, type RoutingScenario } from './routing-scenario.js';
import { computeStrategyMetrics, type CrawledPage, type SiteChange, type StrategyMetrics } from './routing-metrics.js';
import { formatRoutingReport } from './routing-report.js';
import { deleteRedisPrefix } from '@crawler/queue';
import { benchEnv } from './env.js';

const REDIS_URL = benchEnv().redisUrl;

/** One way of choosing fetchers. */
export interface RoutingStrategy {
  id: string;
  describe: string;
  env: Record<string, string>;
  overrides?: RuntimeOverrides;
  /** Legacy route table kept perfect by the run. */
  oracle?: boolean;
}

export const STRATEGIES: RoutingStrategy[] = [
  { id: 'learning', describe: 'learning mode', env: { LEARNING_MODE_ENABLED: 'true' } },
  { id: 'oracle', describe: 'legacy mode, perfect route table', env: { LEARNING_MODE_ENABLED: 'false' }, oracle: true },
  {
    id: 'always-probe',
    describe: 'learning mode, learned step off (probe every link)',
    env: { LEARNING_MODE_ENABLED: 'true' },
    // The crawler has no switch for this; a selector that is never confident sends every link to the probe.
    overrides: { learning: { findBestFetcher: async () => ({ best: null, scores: [] }) } },
  },
  { id: 'always-browser', describe: 'legacy mode, everything to playwright_stealth', env: { LEARNING_MODE_ENABLED: 'false', DEFAULT_FETCHER: 'playwright_stealth' } },
];

export interface StrategyRun {
  strategy: string;
  describe: string;
  metrics: StrategyMetrics;
  /** Links the crawler itself marked done (it can believe a challenge page was the page). */
  crawlerDone: number;
  wallMs: number;
}

function changesOf(scenario: RoutingScenario, domains: string[]): SiteChange[] {
  return scenario.sites.flatMap((s, i) => s.changes.map((c) => ({ domain: domains[i]!, name: s.spec.name ?? String(i), from: scenarioKindAt(s, c.atMs - 1), to: c.kind, atMs: c.atMs })));
}

/** Crawl the scenario with one strategy and measure it. Everything it starts is closed before it returns. */
export async function runStrategy(strategy: RoutingStrategy, scenario: RoutingScenario, log: (s: string) => void, debug = false): Promise<StrategyRun> {
  const started = performance.now();
  const clock = new ManualClock(scenario.startMs);
  const web = await startSimWeb({ sites: scenario.sites.map((s) => s.spec), clock, firstHost: '127.0.20.2' });
  const db = await createTestDatabase(`sim_routing_${strategy.id}`);
  const prefix = `{crawler_test_sim_routing_${strategy.id.replace(/-/g, '_')}_${process.pid}}`;
  const config = loadConfig({
    DATABASE_URL: db.url,
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    ALLOW_PRIVATE_NETWORKS: 'true',
    FETCHERS: 'simple_http:8,playwright:2,playwright_stealth:2',
    // The simulated clock stands still within a round; a minimum delay would never elapse.
    DOMAIN_MIN_DELAY_MS: '0',
    DOMAIN_MAX_CONCURRENCY: '2',
    ROBOTS_ENABLED: 'false',
    FETCH_TIMEOUT_MS: '20000',
    ...strategy.env,
  });
  const runtime = createRuntime(config, { prisma: db.prisma, clock, logger: silentLogger, ...strategy.overrides });
  const routes = new RouteStore({ prisma: db.prisma, clock });
  const pages: CrawledPage[] = [];
  const domains = web.sites.map((s) => s.domain);
  try {
    runtime.startWorkers();
    // One extra round with no new pages lets links paused in the last round finish.
    for (let round = 0; round <= scenario.rounds; round++) {
      const nowMs = scenario.startMs + round * scenario.daysPerRound * DAY_MS;
      clock.set(nowMs);
      if (strategy.oracle) {
        for (const [i, s] of scenario.sites.entries()) await routes.set(domains[i]!, oracleRoute(s, nowMs));
      }
      // Delayed jobs wait in wall-clock time; the simulated pauses they stand for are over once the clock has moved.
      for (const name of runtime.queueNames()) await runtime.queues.queue(name).promoteJobs();
      if (round < scenario.rounds) {
        const urls: string[] = [];
        for (const site of web.sites) {
          for (const url of site.urls(scenario.pagesPerRound, round * scenario.pagesPerRound)) {
            urls.push(url);
            pages.push({ domain: site.domain, path: new URL(url).pathname, round });
          }
        }
        const res = await runtime.enqueue(urls);
        if (res.rejected.length > 0) throw new Error(`rejected: ${JSON.stringify(res.rejected[0])}`);
      }
      await runtime.waitUntilIdle({ pollMs: 100 });
      const t = web.stats().totals;
      log(`  ${strategy.id} round ${round}/${scenario.rounds} day ${round * scenario.daysPerRound}: requests ${t.pageRequests} (browser ${t.requests.browser}) served ${t.served} blocked ${t.blocked}`);
    }
    const logs = new Map<string, readonly SiteRequest[]>(web.sites.map((s) => [s.domain, s.requestLog()]));
    if (debug) {
      for (const s of web.sites) {
        const bad = s.requestLog().filter((r) => r.outcome !== 'served');
        if (bad.length > 0) log(`    ${s.name} ${s.domain}: ${bad.map((r) => `${r.path}@d${Math.round((r.atMs - scenario.startMs) / DAY_MS)}:${r.client}:${r.kind}:${r.outcome}`).join(' ')}`);
      }
    }
    const metrics = computeStrategyMetrics({ pages, logs, changes: changesOf(scenario, domains), warmFromRound: Math.ceil(scenario.rounds / 5) });
    if (debug) {
      const rows = await db.prisma.fetcherAttempt.findMany({ where: { linkId: { not: null } }, orderBy: { id: 'asc' }, select: { url: true, fetcher: true, success: true, errorType: true, selectionSource: true, attemptedAt: true } });
      const byDomain = new Map<string, string[]>();
      for (const a of rows) {
        const u = new URL(a.url);
        const list = byDomain.get(u.hostname) ?? [];
        list.push(`${u.pathname}@d${Math.round((a.attemptedAt.getTime() - scenario.startMs) / DAY_MS)}:${a.selectionSource}:${a.fetcher}${a.success ? '' : `✗${a.errorType}`}`);
        byDomain.set(u.hostname, list);
      }
      for (const s of web.sites) if (s.initialKind !== 'static' && s.initialKind !== 'files') log(`    attempts ${s.name}: ${(byDomain.get(s.domain) ?? []).join(' ')}`);
    }
    const crawlerDone = await db.prisma.link.count({ where: { status: 'done' } });
    return { strategy: strategy.id, describe: strategy.describe, metrics, crawlerDone, wallMs: performance.now() - started };
  } finally {
    await runtime.close({ drainTimeoutMs: 5_000 });
    await web.close();
    const r = new Redis(REDIS_URL);
    try {
      await deleteRedisPrefix(r, prefix);
    } finally {
      r.disconnect();
    }
    await db.drop();
  }
}

async function main(): Promise<void> {
  const { values } = benchArgs({
    script: 'routing-quality',
    options: {
      rounds: { type: 'string', placeholder: 'N', description: "rounds of simulated days (default the scenario's, 6)" },
      pages: { type: 'string', placeholder: 'N', description: "pages per domain per round (default the scenario's, 1)" },
      scale: { type: 'string', placeholder: 'N', description: 'multiplies the number of domains of each kind (default 1: 50 domains)' },
      strategies: { type: 'string', placeholder: 'LIST', description: `strategies to run, comma-separated (default all: ${STRATEGIES.map((s) => s.id).join(',')})` },
      debug: { type: 'boolean', description: "print each domain's refused requests and fetch attempts after each strategy" },
      'challenge-wait-ms': { type: 'string', placeholder: 'MS', description: "sets the browsers' CHALLENGE_WAIT_MS (0: do not wait out interstitials, the comparison run)" },
    },
  });
  const scenario = buildRoutingScenario({
    startMs: Date.now(),
    rounds: values.rounds ? Number(values.rounds) : undefined,
    pagesPerRound: values.pages ? Number(values.pages) : undefined,
    scale: values.scale ? Number(values.scale) : undefined,
  });
  const wanted = values.strategies?.split(',').map((s) => s.trim());
  // --challenge-wait-ms 0 gives the browsers' behaviour before they waited out interstitials (the comparison run).
  const wait = values['challenge-wait-ms'];
  const strategies = STRATEGIES.filter((s) => !wanted || wanted.includes(s.id)).map((s) => (wait === undefined ? s : { ...s, env: { ...s.env, CHALLENGE_WAIT_MS: wait } }));
  const log = (s: string) => process.stderr.write(`${s}\n`);
  log(`routing quality: ${scenario.sites.length} domains, ${scenario.rounds} rounds of ${scenario.daysPerRound} days, ${scenario.pagesPerRound} pages per domain per round`);
  const runs: StrategyRun[] = [];
  for (const s of strategies) runs.push(await runStrategy(s, scenario, log, values.debug === true));
  const report = formatRoutingReport(scenario, runs);
  process.stdout.write(report);
  const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'results');
  mkdirSync(dir, { recursive: true });
  const result = { at: new Date().toISOString(), scenario: { domains: scenario.sites.length, rounds: scenario.rounds, daysPerRound: scenario.daysPerRound, pagesPerRound: scenario.pagesPerRound }, runs };
  writeFileSync(join(dir, 'routing-latest.json'), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(join(dir, 'routing-latest.md'), report);
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
