import { parseArgs } from 'node:util';
import { CrawlerError, FETCHERS, systemClock, armCost, armKey, canonicalFetcherName, expectedCostPerSuccess, isConfident, parseArmKey, domainOf, extractUrlHeuristics, normalizeUrl, selectRoutingHeuristics, scopeLearned, SECTION_HEURISTIC, type BestFetcherResult, type DomainAttempt, type Heuristic } from '@crawler/core';
import { AttemptStore, DomainStateStore, RouteStore, VersionStore, createPrismaClient, type RevisitValidators } from '@crawler/db';
import { DomainPauses, ProbeWalls, armPastWall, armView, chooseLearned, isProbedPlainArm, runnableArm, tiersOf, type CrawlerConfig, type WallSighting } from '@crawler/pipeline';
import { closeRedisConnection, createRedisConnection } from '@crawler/queue';
import { UsageError, type Command } from '../command.js';
import { checkRedisDatabase, reportingConfigFrom } from '../crawler/cli-context.js';

const USAGE = 'usage: crawl explain <URL> [--json] [--learning on|off]';

/** What the router would do for a URL, and why. */
export interface Explanation {
  url: string;
  domain: string;
  learningMode: boolean;
  heuristics: Heuristic[];
  /** The heuristics the router's learned query uses (ROUTING_HEURISTIC_TYPES); the rest are logged, not queried. */
  queried: Heuristic[];
  scores: BestFetcherResult['scores'];
  /**
   * Every scored (fetcher, exit tier) arm with its price: cost units per request (fetcher CPU + tier) and per page got
   * (cost / success rate). With proxied tiers the router takes the confident arm with the lowest expected cost.
   */
  arms: ExplainedArm[];
  threshold: number;
  minSampleSize: number;
  /**
   * The URL's section scored by itself (its own attempts, every fetcher): with at least `minSampleSize` of them the
   * router judges it on them (`judgedOnItsOwn`) rather than by its domain. Null: the URL has no section.
   */
  section: { value: string; attempts: number; judgedOnItsOwn: boolean; scores: BestFetcherResult['scores'] } | null;
  decision: { action: 'learned' | 'domain_memory' | 'revisit' | 'probe' | 'hard_coded' | 'default' | 'fail'; fetcher: string | null; reason: string };
  /** The domain's fleet-wide pause, when one is running: the decision only applies once it ends. */
  pause: { reason: string; until: string } | null;
}

/** One arm as `crawl explain` shows it (tier names only: no proxy URL ever reaches it). */
export interface ExplainedArm {
  arm: string;
  fetcher: string;
  tier: string;
  sampleSize: number;
  successRate: number;
  confidence: number;
  /** Cost units per request. */
  cost: number;
  /** Cost units per page got (null: it never worked). */
  expectedCost: number | null;
  confident: boolean;
  /** The fleet can run it (its fetcher configured, its tier configured, browsers direct only). */
  runnable: boolean;
}

function explainArms(scores: BestFetcherResult['scores'], config: CrawlerConfig): ExplainedArm[] {
  const tiers = tiersOf({ known: new Set(config.fetchers.map((f) => f.name)), confidenceThreshold: config.confidenceThreshold, exitTiers: config.exitTiers });
  const known = new Set(config.fetchers.map((f) => f.name));
  return scores.map((s) => {
    const arm = parseArmKey(canonicalFetcherName(s.fetcher));
    const cost = armCost(arm, tiers);
    const expected = expectedCostPerSuccess(cost, s.successRate);
    return {
      arm: armKey(arm), fetcher: arm.fetcher, tier: arm.tier, sampleSize: s.sampleSize, successRate: s.successRate, confidence: s.confidence,
      cost: Number.isFinite(cost) ? cost : -1, expectedCost: Number.isFinite(expected) ? expected : null, confident: isConfident(s, config.confidenceThreshold),
      runnable: runnableArm({ known, confidenceThreshold: config.confidenceThreshold, exitTiers: config.exitTiers }, armKey(arm)) !== null,
    };
  // The router's order: arms that clear the threshold first, each group cheapest per page first.
  }).sort((a, b) => Number(b.confident) - Number(a.confident) || (a.expectedCost ?? Infinity) - (b.expectedCost ?? Infinity));
}

/** The router's decision procedure (the pipeline's chooseLearned), minus the probe itself, which would make a request. */
export async function explainUrl(
  raw: string,
  config: CrawlerConfig,
  stores: {
    attempts: Pick<AttemptStore, 'findBestFetcher'>;
    routes: Pick<RouteStore, 'get'>;
    domainState?: { recentDomainAttempts(domain: string): Promise<DomainAttempt[]> };
    /** The stored version's validators of the link with this (normalized) URL, when it was fetched before. */
    revisitValidators?: (url: string) => Promise<RevisitValidators | null>;
    /** The fleet's pauses (DomainPauses); without it no pause is shown. */
    pauses?: Pick<DomainPauses, 'pauseOf'>;
    /** The bot walls the fleet's probes met recently (ProbeWalls, shared through Redis); without it none is shown. */
    walls?: { recent(domain: string): Promise<WallSighting | null> };
  },
  learningOverride?: boolean,
  now = new Date(),
): Promise<Explanation> {
  const e = await explainDecision(raw, config, stores, learningOverride, now);
  return { ...e, pause: (await stores.pauses?.pauseOf(e.domain)) ?? null };
}

async function explainDecision(
  raw: string,
  config: CrawlerConfig,
  stores: Parameters<typeof explainUrl>[2],
  learningOverride: boolean | undefined,
  now: Date,
): Promise<Omit<Explanation, 'pause'>> {
  const url = normalizeUrl(raw);
  const domain = domainOf(url);
  const heuristics = extractUrlHeuristics(url);
  const queried = selectRoutingHeuristics(heuristics, config.routingHeuristicTypes);
  const learningMode = learningOverride ?? config.learningModeEnabled;
  const domainMemory = config.domainMemoryEnabled !== false && stores.domainState !== undefined;
  // As the router asks: the section is scored by itself, in the same statement as the pooled score of the rest.
  const section = queried.find((h) => h.type === SECTION_HEURISTIC) ?? null;
  const pooled = queried.filter((h) => h.type !== SECTION_HEURISTIC);
  const [result, recent] = await Promise.all([
    stores.attempts.findBestFetcher(pooled, { minSampleSize: config.minSampleSize, now, ...(section ? { alone: section } : {}) }),
    domainMemory ? stores.domainState!.recentDomainAttempts(domain) : Promise.resolve([]),
  ]);
  const own = section && result.alone ? { section: section.value, attempts: result.alone.attempts, result: result.alone.result } : null;
  const explainedSection = own ? { value: own.section, attempts: own.attempts, judgedOnItsOwn: own.attempts >= config.minSampleSize, scores: own.result.scores } : null;
  const base = { url, domain, learningMode, heuristics, queried, scores: result.scores, arms: explainArms(result.scores, config), threshold: config.confidenceThreshold, minSampleSize: config.minSampleSize, section: explainedSection };
  if (learningMode) {
    const known = new Set(config.fetchers.map((f) => f.name));
    const arms = { known, confidenceThreshold: config.confidenceThreshold, exitTiers: config.exitTiers };
    const scoped = scopeLearned({
      pooled: armView(result, arms).learned,
      section: own ? { ...own, result: armView(own.result, arms).learned } : null,
      recent,
      minSampleSize: config.minSampleSize,
      confidenceThreshold: config.confidenceThreshold,
    });
    const choice = chooseLearned({ learned: scoped.learned, recent: scoped.recent, now, confidenceThreshold: config.confidenceThreshold, domainMemory, plainHttpMemoryMs: config.plainHttpMemoryMs });
    // The router's wall check on a plain-HTTP choice (armPastWall): a file plain HTTP was learned for, on a domain
    // whose probe just met a bot wall, goes to the probe's tool.
    const chosenArm = choice.kind !== 'probe' ? runnableArm(arms, choice.fetcher) : null;
    if (chosenArm && isProbedPlainArm(arms, chosenArm) && stores.walls) {
      const wall = await stores.walls.recent(domain);
      const wallArm = wall ? armPastWall(arms, chosenArm, wall.fetcher) : null;
      if (wall && wallArm) {
        return { ...base, decision: { action: 'domain_memory', fetcher: armKey(wallArm), reason: `${armKey(chosenArm)} was chosen for this URL, but a probe of ${domain} met a bot wall (${wall.reason}) in the last ${config.probeWallMemoryMs} ms: plain HTTP would meet it too, so it goes to ${armKey(wallArm)}` } };
      }
    }
    if (choice.kind === 'learned') {
      return { ...base, decision: { action: 'learned', fetcher: choice.fetcher, reason: `confidence ${choice.confidence.toFixed(3)} > ${config.confidenceThreshold}` } };
    }
    if (choice.kind === 'domain_memory') {
      const reason =
        choice.fetcher === FETCHERS.simpleHttp
          ? `too little evidence for a score; a probe found ${domain}'s pages static${choice.verifiedAt ? ` at ${choice.verifiedAt.toISOString()}` : ''} and its latest plain HTTP fetch there worked`
          : `too little evidence for a score; ${choice.fetcher} is the browser that last worked on ${domain}`;
      return { ...base, decision: { action: 'domain_memory', fetcher: choice.fetcher, reason } };
    }
    // The router's wall step: after a probe of the domain met a bot wall, its pages that would be probed go to the
    // tool that probe chose (PROBE_WALL_MEMORY_MS), before the revisit step and without a probe.
    const wall = stores.walls ? await stores.walls.recent(domain) : null;
    const wallArm = wall ? runnableArm({ known, confidenceThreshold: config.confidenceThreshold, exitTiers: config.exitTiers }, wall.fetcher) : null;
    if (wall && wallArm) {
      return { ...base, decision: { action: 'domain_memory', fetcher: armKey(wallArm), reason: `${choice.reason}; a probe of ${domain} met a bot wall (${wall.reason}) in the last ${config.probeWallMemoryMs} ms: its pages go to ${armKey(wallArm)} without a probe` } };
    }
    // The router's revisit step: a page plain HTTP stored with a validator is asked again conditionally, not probed.
    const v = config.conditionalRequests && stores.revisitValidators ? await stores.revisitValidators(url) : null;
    if (v && v.fetcher === FETCHERS.simpleHttp && (v.etag || v.lastModified)) {
      const validator = v.etag ? `ETag ${v.etag}` : `Last-Modified ${v.lastModified}`;
      return { ...base, decision: { action: 'revisit', fetcher: FETCHERS.simpleHttp, reason: `${choice.reason}; version ${v.version} was stored by plain HTTP with ${validator}: a conditional request instead of a probe` } };
    }
    return { ...base, decision: { action: 'probe', fetcher: null, reason: `${choice.reason}: a ${config.probeTimeoutMs} ms probe with plain HTTP decides` } };
  }
  const route = await stores.routes.get(domain);
  if (route) return { ...base, decision: { action: 'hard_coded', fetcher: route.fetcher, reason: `fetcher_router has ${domain}` } };
  if (config.defaultFetcher) return { ...base, decision: { action: 'default', fetcher: config.defaultFetcher, reason: `no route for ${domain}; DEFAULT_FETCHER` } };
  return { ...base, decision: { action: 'fail', fetcher: null, reason: `no route for ${domain} and no DEFAULT_FETCHER: the link would fail with no_route` } };
}

/** A terminal rendering of an explanation. */
export function formatExplanation(e: Explanation): string {
  const out = [`url        ${e.url}`, `mode       ${e.learningMode ? 'learning' : 'legacy'}`, 'heuristics (* = used by the learned query)'];
  const used = new Set(e.queried.map((h) => `${h.type}\u0000${h.value}`));
  for (const h of e.heuristics) out.push(`${used.has(`${h.type}\u0000${h.value}`) ? '* ' : '  '}${h.type.padEnd(16)} ${h.value}`);
  out.push(`fetchers   (min sample ${e.minSampleSize}, threshold ${e.threshold})`);
  if (e.scores.length === 0) out.push('  no matching attempts');
  out.push(`  ${'fetcher'.padEnd(20)} ${'samples'.padStart(7)} ${'decayed'.padStart(8)} ${'rate'.padStart(6)} ${'conf'.padStart(6)}`);
  for (const s of e.scores) {
    out.push(`  ${s.fetcher.padEnd(20)} ${String(s.sampleSize).padStart(7)} ${s.decayedSuccesses.toFixed(2).padStart(8)} ${s.successRate.toFixed(3).padStart(6)} ${s.confidence.toFixed(3).padStart(6)}${s.eligible ? '' : '  (too few samples)'}`);
  }
  if (e.arms.length > 0) {
    out.push(`arms       (fetcher@tier; cost units per request and per page got; * = clears the threshold)`);
    for (const a of e.arms) {
      out.push(`  ${a.confident ? '*' : ' '} ${a.arm.padEnd(30)} conf ${a.confidence.toFixed(3)}  cost ${a.cost < 0 ? 'n/a' : a.cost.toFixed(2)}  per page ${a.expectedCost === null ? 'never worked' : a.expectedCost.toFixed(2)}${a.runnable ? '' : '  (not runnable here)'}`);
    }
  }
  if (e.section) {
    const how = e.section.judgedOnItsOwn ? 'judged on its own attempts' : `judged by its domain (fewer than ${e.minSampleSize} attempts of its own)`;
    out.push(`section    ${e.section.value}: ${e.section.attempts} attempts of its own, ${how}`);
    for (const s of e.section.scores) out.push(`  ${s.fetcher.padEnd(20)} ${String(s.sampleSize).padStart(7)} ${s.decayedSuccesses.toFixed(2).padStart(8)} ${s.successRate.toFixed(3).padStart(6)} ${s.confidence.toFixed(3).padStart(6)}`);
  }
  if (e.pause) out.push(`paused     ${e.domain} until ${e.pause.until} (${e.pause.reason}): its links wait until then (crawl pauses lift ${e.domain} ends it); then:`);
  out.push(`decision   ${e.decision.action}${e.decision.fetcher ? ` → ${e.decision.fetcher}` : ''}: ${e.decision.reason}`);
  return `${out.join('\n')}\n`;
}

const command: Command = {
  usage: USAGE,
  async run(args, io) {
    let parsed;
    try {
      parsed = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' }, learning: { type: 'string' } } });
    } catch (err) {
      throw new UsageError(`${(err as Error).message}\n${USAGE}`);
    }
    if (parsed.positionals.length !== 1) throw new UsageError(`expected exactly one URL\n${USAGE}`);
    const { parseLearningFlag } = await import('./enqueue.js');
    const learning = parseLearningFlag(parsed.values.learning);
    const config = reportingConfigFrom(io);
    const prisma = createPrismaClient(config.databaseUrl);
    // The same Redis as every other command: REDIS_CLUSTER_NODES when set (REDIS_URL is then not used).
    const redis = createRedisConnection(config.redisTarget, 'producer');
    try {
      await checkRedisDatabase(redis);
      const versions = new VersionStore({ prisma });
      const revisitValidators = (url: string) => versions.validatorsByUrl(url);
      const pauses = new DomainPauses({ redis, prisma, config });
      // The routers' shared memory of walls (create-runtime's wallsShared): same key prefix, same time.
      const walls = new ProbeWalls(config.probeWallMemoryMs, systemClock, { redis, prefix: config.queuePrefix });
      const e = await explainUrl(parsed.positionals[0]!, config, { attempts: new AttemptStore({ prisma }), routes: new RouteStore({ prisma }), domainState: new DomainStateStore({ prisma }), revisitValidators, pauses, walls }, learning);
      io.stdout.write(parsed.values.json ? `${JSON.stringify(e)}\n` : formatExplanation(e));
      return 0;
    } catch (err) {
      if (err instanceof CrawlerError && err.code === 'invalid_url') throw new UsageError(err.message);
      throw err;
    } finally {
      await closeRedisConnection(redis);
      await prisma.$disconnect();
    }
  },
};

export default command;
