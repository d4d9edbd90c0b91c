import {
  DOMAIN_MEMORY_SOURCE,
  ERROR_TYPES,
  LINK_STATUSES,
  SELECTION_SOURCES,
  SKIP_REASONS,
  canonicalFetcherName,
  domainOf,
  extractUrlHeuristics,
  isUrlPolicyError,
  parseRetryAfterMs,
  rateLimitPause,
  selectRoutingHeuristics,
  type Clock,
  type DomainAttempt,
  type Logger,
  type PipelineMetrics,
  type PolitenessGate,
  type RobotsPolicy,
  type SkipReason,
} from '@crawler/core';
import { ROUTE_QUEUE, RouteJobSchema, parseJobData, type FetchJobInput, type ProbeRef, type RouteResult } from '@crawler/queue';
import type { FetchResult } from '@crawler/fetchers';
import type { LinkRepo } from '../ports.js';
import type { LearnedSelector, LegacyRoutes, ProbeFn } from '../ports.js';
import type { ProbeStore } from '../probe/probe-store.js';
import { delayJob, type JobHandle } from '../job-control.js';
import { judgeProbe } from '../fetch/response-analysis.js';
import { chooseLearned } from './learned-choice.js';
import { DecisionCache, type DomainSetbacks } from './decision-cache.js';
import { ProbeWalls, type ProbeWallsShared } from './probe-walls.js';

/** The router's settings (a slice of CrawlerConfig). */
export interface RouterSettings {
  learningModeEnabled: boolean;
  defaultFetcher?: string;
  /** Fetchers the fleet runs; a decision naming another fails the link with `unknown_fetcher`. */
  fetcherNames: string[];
  confidenceThreshold: number;
  minSampleSize: number;
  /** Heuristic types the learned query uses (core selectRoutingHeuristics). @defaultValue core ROUTING_HEURISTIC_TYPES */
  routingHeuristicTypes?: readonly string[];
  /** Use the domain's own recent attempts (ban/wrong-tool, re-verification, latest working browser). @defaultValue true */
  domainMemoryEnabled?: boolean;
  /** Route a domain's URLs to plain HTTP without a probe this long after a probe showed it serves static pages (learned-choice plainHttpRemembered; 0: off). @defaultValue 0 */
  plainHttpMemoryMs?: number;
  /** Reuse a confident learned decision for the same routing heuristics this long (0: ask the store every time). @defaultValue 0 */
  decisionCacheMs?: number;
  /** After a probe met a bot wall, send the domain's URLs that would be probed to the probe's tool this long (probe-walls.ts; 0: off). @defaultValue 0 */
  probeWallMemoryMs?: number;
  /** Cap for the backoff table's part of a pause (Retry-After is honoured beyond it). @defaultValue core DEFAULT_MAX_PAUSE_MS */
  pauseMaxMs?: number;
}

/** A domain's latest attempts, newest first (@crawler/db DomainStateStore). */
export interface DomainStateReader {
  recentDomainAttempts(domain: string): Promise<DomainAttempt[]>;
}

export interface RouterDeps {
  settings: RouterSettings;
  links: LinkRepo;
  enqueueFetch(input: FetchJobInput): Promise<string>;
  learning: LearnedSelector;
  /** Without it the router decides from findBestFetcher and the probe alone. */
  domainState?: DomainStateReader;
  routes: LegacyRoutes;
  probe: ProbeFn;
  probeStore: Pick<ProbeStore, 'save'>;
  gate: PolitenessGate;
  robots: RobotsPolicy;
  clock: Clock;
  logger: Logger;
  metrics: PipelineMetrics;
  /** Setbacks the fetch workers of this process report (FetchDeps.setbacks): they drop the domain's cached decisions. */
  setbacks?: DomainSetbacks;
  /** Where the fleet's routers share the bot walls their probes met (probe-walls.ts); without it, per process. */
  wallsShared?: ProbeWallsShared;
}

interface Decision {
  fetcher: string;
  source: string;
  confidence?: number;
  probe?: ProbeRef;
}

/**
 * The router worker's processor: choose a fetcher for one link and hand the link to
 * that fetcher's queue. Idempotent: a re-run after a crash finds the link where it left it, and the fetch job id is
 * deterministic.
 */
export function createRouteProcessor(deps: RouterDeps) {
  const known = new Set(deps.settings.fetcherNames.map(canonicalFetcherName));
  const memory: RouterMemory = {
    known,
    cache: new DecisionCache<Decision>(deps.settings.decisionCacheMs ?? 0, deps.clock, { setbacks: deps.setbacks }),
    walls: new ProbeWalls(deps.settings.probeWallMemoryMs ?? 0, deps.clock, deps.wallsShared),
  };

  return async function processRoute(job: JobHandle, token?: string): Promise<RouteResult> {
    const data = parseJobData(RouteJobSchema, job.data, { queue: ROUTE_QUEUE, jobId: job.id });
    const log = deps.logger.child({ jobId: job.id, queue: ROUTE_QUEUE, linkId: data.linkId, url: data.url });
    const now = deps.clock.now();
    // The common case is one read here and one write (the decision) below: an unfinished, unpaused link of this
    // generation. Anything else is read again to say why it is not routed.
    const routable = await deps.links.readRoutable(data.linkId, now, data.generation);
    const link = routable ?? (await deps.links.get(data.linkId));
    if (!link) return skipped(deps, SKIP_REASONS.linkMissing);
    if (link.status === LINK_STATUSES.done || link.status === LINK_STATUSES.failed) return skipped(deps, link.status === LINK_STATUSES.done ? SKIP_REASONS.linkDone : SKIP_REASONS.linkFailed);
    // The reconciler gave the link a job of a newer generation: that one carries it now.
    if (link.generation > data.generation) return skipped(deps, SKIP_REASONS.staleGeneration);

    if (link.pausedUntil && link.pausedUntil.getTime() > now.getTime()) {
      // A paused link waits as a delayed job: no busy loop, no error, and nothing waiting/active keeps --until-idle up.
      if (link.status !== LINK_STATUSES.paused) await deps.links.updateUnlessFinished(link.id, { status: LINK_STATUSES.paused });
      deps.metrics.jobFinished(ROUTE_QUEUE, 'delayed');
      log.debug({ pausedUntil: link.pausedUntil }, 'link paused; route job delayed');
      return delayJob(job, token, link.pausedUntil.getTime() - now.getTime());
    }
    const learning = link.learningModeEnabled ?? deps.settings.learningModeEnabled;
    const domain = domainOf(link.url);
    let decision: Decision | { error: string; message: string };
    const escalateTo = data.nextFetcher ? canonicalFetcherName(data.nextFetcher) : null;
    if (learning && escalateTo && known.has(escalateTo)) {
      // A blocked link's re-route: the retry policy already chose the next tool (e.g. stealth after a challenge).
      decision = { fetcher: escalateTo, source: SELECTION_SOURCES.retry };
    } else if (learning) {
      const avoid = data.blockedFetcher ? canonicalFetcherName(data.blockedFetcher) : null;
      decision = await decideLearning(deps, memory, job, token, link.id, link.url, domain, log, avoid);
    } else {
      const routed = await deps.routes.fetcherFor(domain);
      if (routed) decision = { fetcher: routed, source: SELECTION_SOURCES.hardCoded };
      else if (deps.settings.defaultFetcher) decision = { fetcher: deps.settings.defaultFetcher, source: SELECTION_SOURCES.default };
      else decision = { error: ERROR_TYPES.noRoute, message: `no route for domain ${domain} and no DEFAULT_FETCHER configured` };
    }

    if ('fetcher' in decision && !known.has(canonicalFetcherName(decision.fetcher))) {
      decision = { error: ERROR_TYPES.unknownFetcher, message: `fetcher '${decision.fetcher}' is not configured (FETCHERS=${[...known].join(',')})` };
    }
    if ('error' in decision) {
      await deps.links.updateUnlessFinished(link.id, { status: LINK_STATUSES.failed, lastErrorType: decision.error, lastError: decision.message });
      deps.metrics.jobFinished(ROUTE_QUEUE, 'failed');
      log.warn({ errorType: decision.error }, decision.message);
      return { kind: 'failed', errorType: decision.error, message: decision.message };
    }

    const fetcher = canonicalFetcherName(decision.fetcher);
    // The link is updated before the fetch job exists, so a fast fetch worker can never be overwritten by us; and only
    // while it is unfinished, so a duplicate route job racing a finished fetch cannot reopen it.
    if (!(await deps.links.updateUnlessFinished(link.id, { status: LINK_STATUSES.fetching, fetcher, selectionSource: decision.source }))) {
      return skipped(deps, SKIP_REASONS.linkFinished);
    }
    await deps.enqueueFetch({
      linkId: link.id,
      url: link.url,
      fetcher,
      selectionSource: decision.source,
      confidence: decision.confidence,
      // The link's generation, not this job's: two route jobs of one link (a resubmission racing a resume) share the
      // fetch job id, so the page is fetched once.
      generation: link.generation,
      attemptsBefore: link.attemptCount,
      probe: decision.probe,
    });
    deps.metrics.decision(decision.source, fetcher);
    deps.metrics.jobFinished(ROUTE_QUEUE, 'routed');
    log.info({ fetcher, source: decision.source, confidence: decision.confidence, probeReused: decision.probe !== undefined }, 'routed');
    return { kind: 'routed', fetcher, source: decision.source, confidence: decision.confidence, probeReused: decision.probe !== undefined };
  };
}

/** What one router processor keeps between jobs. */
interface RouterMemory {
  /** Canonical names of the fetchers the fleet runs. */
  known: ReadonlySet<string>;
  cache: DecisionCache<Decision>;
  walls: ProbeWalls;
}

async function decideLearning(
  deps: RouterDeps,
  { known, cache, walls }: RouterMemory,
  job: JobHandle,
  token: string | undefined,
  linkId: string,
  url: string,
  domain: string,
  log: Logger,
  avoid: string | null,
): Promise<Decision | { error: string; message: string }> {
  const now = deps.clock.now();
  const useDomain = deps.domainState !== undefined && deps.settings.domainMemoryEnabled !== false;
  const routing = selectRoutingHeuristics(extractUrlHeuristics(url), deps.settings.routingHeuristicTypes);
  // The answer depends only on these (and on time): URLs that share them share the decision.
  const cacheKey = cache.enabled ? `${domain}\u0001${avoid ?? ''}\u0001${routing.map((h) => `${h.type}=${h.value}`).sort().join('\u0001')}` : '';
  const cached = cache.get(cacheKey);
  if (cached) {
    log.debug({ fetcher: cached.fetcher, source: cached.source }, 'learned decision reused');
    return cached;
  }
  // Two independent reads, in parallel: the store's pooled score and the domain's own latest attempts.
  const [learned, recent] = await Promise.all([
    deps.learning.findBestFetcher(routing, { minSampleSize: deps.settings.minSampleSize, now }),
    useDomain ? deps.domainState!.recentDomainAttempts(domain) : Promise.resolve([]),
  ]);
  const choice = chooseLearned({
    learned, recent, now, avoid,
    confidenceThreshold: deps.settings.confidenceThreshold,
    domainMemory: useDomain,
    plainHttpMemoryMs: deps.settings.plainHttpMemoryMs,
  });
  if (choice.kind !== 'probe') {
    const decided: Decision = choice.kind === 'learned' ? { fetcher: choice.fetcher, source: choice.source, confidence: choice.confidence } : { fetcher: choice.fetcher, source: choice.source };
    cache.set(cacheKey, domain, decided);
    return decided;
  }
  // A probe of this domain just met a bot wall: another probe would only be refused too (one more block in the
  // site's log). The domain's pages go to the tool that probe chose until a browser result is learned.
  const wall = await walls.recent(domain);
  const wallFetcher = wall ? canonicalFetcherName(wall.fetcher) : null;
  if (wallFetcher && known.has(wallFetcher) && wallFetcher !== avoid) {
    log.debug({ fetcher: wallFetcher, wall: wall?.reason }, 'no learned choice; a probe of this domain met a wall: not probing again');
    return { fetcher: wallFetcher, source: DOMAIN_MEMORY_SOURCE };
  }
  log.debug({ reason: choice.reason, avoid }, 'no learned choice: probing');

  // The probe is a real request to the site, so it obeys robots.txt and the fleet's politeness like any fetch.
  let robots;
  try {
    robots = await deps.robots.check(url);
  } catch (err) {
    // The URL itself is refused (SSRF guard, scheme): probing it would be refused the same way.
    if (isUrlPolicyError(err)) return { error: err.code, message: err.message };
    throw err;
  }
  if (!robots.allowed) return { error: ERROR_TYPES.robotsDisallowed, message: robots.reason ?? 'disallowed by robots.txt' };
  const gate = await deps.gate.acquire(domain);
  if (!gate.granted) {
    if (gate.reason === 'paused') {
      await deps.links.updateUnlessFinished(linkId, { status: LINK_STATUSES.paused, pausedUntil: new Date(now.getTime() + gate.retryInMs) });
    }
    deps.metrics.jobFinished(ROUTE_QUEUE, 'delayed');
    log.debug({ retryInMs: gate.retryInMs, reason: gate.reason }, 'politeness: probe delayed');
    return delayJob(job, token, gate.retryInMs);
  }

  // A probe is a request and can take seconds: the link shows `routing` meanwhile. (A link finished in between is
  // caught by the decision's guarded write.)
  await deps.links.updateUnlessFinished(linkId, { status: LINK_STATUSES.routing });
  let outcome: { response: FetchResult } | { error: unknown };
  let verdict: ReturnType<typeof judgeProbe>;
  let limited: ReturnType<typeof rateLimitPause> | null = null;
  try {
    try {
      outcome = { response: await deps.probe(url) };
    } catch (error) {
      outcome = { error };
    }
    verdict = judgeProbe(outcome);
    // Remembered before the permit goes, so a probe waiting for it finds the wall already known.
    if ('response' in outcome && verdict.reason.startsWith('blocked')) await walls.record(domain, verdict.fetcher, verdict.reason);
    if ('response' in outcome && verdict.reason === ERROR_TYPES.rateLimited) {
      // The site asked for pace: the link and the domain wait (never less than Retry-After) before anyone asks again.
      // The domain is paused before the permit goes, so no other worker's request slips in between.
      // Measured from the answer, not from the job's start: a slow probe must not shorten the site's Retry-After.
      const answeredAt = deps.clock.now();
      const link = await deps.links.get(linkId);
      limited = rateLimitPause({
        riskLevel: link?.riskLevel ?? 0,
        retryAfterMs: parseRetryAfterMs(outcome.response.headers['retry-after'], answeredAt),
        now: answeredAt,
        maxPauseMs: deps.settings.pauseMaxMs,
      });
      await deps.gate.pauseDomain(domain, limited.pausedUntil.getTime(), ERROR_TYPES.rateLimited);
    }
  } finally {
    await gate.permit.release();
  }
  if (limited && 'response' in outcome) {
    // The route job comes back after the pause and probes afresh. A probe is no attempt, so nothing is logged.
    await deps.links.updateUnlessFinished(linkId, {
      status: LINK_STATUSES.paused,
      pausedUntil: limited.pausedUntil,
      riskLevel: limited.riskLevel,
      lastErrorType: ERROR_TYPES.rateLimited,
      lastError: `rate_limited: probe answered ${outcome.response.status}`,
    });
    deps.metrics.probe('discarded');
    deps.metrics.pause(domain, ERROR_TYPES.rateLimited);
    deps.metrics.jobFinished(ROUTE_QUEUE, 'delayed');
    log.info({ status: outcome.response.status, pauseMs: limited.pauseMs }, 'probe rate-limited: link and domain paused');
    return delayJob(job, token, limited.pauseMs);
  }
  let probe: ProbeRef | undefined;
  if ('error' in outcome) {
    // A failed probe says nothing about the page: no attempt is logged for any fetcher.
    deps.metrics.probe('failed');
    log.info({ err: outcome.error }, 'probe failed');
  } else if (verdict.reuse) {
    const res = outcome.response;
    const key = await deps.probeStore.save(linkId, { status: res.status, headers: res.headers, finalUrl: res.finalUrl, contentType: res.contentType, body: res.body, text: res.text });
    if (key) probe = { key, status: res.status, bodyBytes: res.body.byteLength };
    deps.metrics.probe(key ? 'reused' : 'discarded');
  } else {
    deps.metrics.probe('discarded');
  }
  log.debug({ fetcher: verdict.fetcher, reason: verdict.reason, reuse: probe !== undefined }, 'probe classified');
  return { fetcher: verdict.fetcher, source: SELECTION_SOURCES.probe, probe };
}

function skipped(deps: RouterDeps, reason: SkipReason): RouteResult {
  deps.metrics.jobFinished(ROUTE_QUEUE, 'skipped');
  return { kind: 'skipped', reason };
}
