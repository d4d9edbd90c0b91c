import {
  ERROR_TYPES,
  LINK_STATUSES,
  SKIP_REASONS,
  canonicalFetcherName,
  domainOf,
  errorTypeOf,
  extractUrlHeuristics,
  isExitError,
  hasOwnEvidence,
  isCertificateError,
  isUrlPolicyError,
  SECTION_HEURISTIC,
  lazyChild,
  selectRoutingHeuristics,
  type Clock,
  type Heuristic,
  type DomainAttempt,
  type ExitTier,
  type DomainPermit,
  type Logger,
  type PipelineMetrics,
  type PolitenessGate,
  type RobotsPolicy,
  type SkipReason,
  wallVerdict,
} from '@crawler/core';
import { ROUTE_QUEUE, RouteJobSchema, parseJobData, type FetchJobInput, type ProbeRef, type RouteResult } from '@crawler/queue';
import type { LearnedSelector, LegacyRoutes, LinkChange, LinkRecord, LinkRepo, OutcomeSink, ProbeFn, RevisitSource } from '../ports.js';
import { certificateAttempt } from '../fetch/fetch-outcome.js';
import type { ProbeStore } from '../probe/probe-store.js';
import { delayJob, type JobHandle } from '../job-control.js';
import { domainPauseReason, pauseDomainUntil, type PauseSettings } from '../fetch/site-pause.js';
import { DecisionCache, SectionScopes, type DomainSetbacks } from './decision-cache.js';
import { ProbeWalls, type ProbeWallsShared, type WallSighting } from './probe-walls.js';
import type { BlockedArms } from '../fetch/blocked-arms.js';
import type { WallStreaks } from '../fetch/wall-streaks.js';
import type { InlineFetcher } from '../fetch/inline-fetch.js';
import { decideRoute, type Decision, type DecisionSettings, type RouteEffect, type RouteFacts, type RouteStep } from './route-decision.js';

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
  /** Checks of an unreachable site a link gets before it fails with `site_unreachable`. @defaultValue core DEFAULT_MAX_ATTEMPTS */
  maxAttempts?: number;
  /** Pause bases and the Retry-After floor. @defaultValue core's */
  pause?: PauseSettings;
  /** Exit tiers, cheapest first (config.exitTiers): arms of (fetcher, tier) are scored and priced. @defaultValue direct only */
  exitTiers?: readonly ExitTier[];
  /** How long links wait on a wall that refused the fleet's strongest tool (WALL_MAX_WAIT_MS). @defaultValue core DEFAULT_WALL_MAX_WAIT_MS */
  wallMaxWaitMs?: number;
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
  /** The stored page of a revisited link: with validators, its conditional request replaces the probe. */
  revisits?: Pick<RevisitSource, 'validators'>;
  /** The arms sites refused since (fetch workers, blocked-arms.ts): a wall sighting whose arm was refused since follows the climb. */
  blockedArms?: Pick<BlockedArms, 'latest'>;
  /** Fetches this router may run itself (FETCH_INLINE, inline-fetch.ts); without it every routed link gets a fetch job. */
  inline?: Pick<InlineFetcher, 'claim'>;
  /** Each site's refusals in a row (fetch workers, wall-streaks.ts): a link waiting on a wall no tool passes ends. */
  wallStreaks?: Pick<WallStreaks, 'read'>;
  /**
   * Where a link failed by a request the router made for it (its origin's certificate refused while robots.txt was
   * read) is written with that request's attempt. Absent: the link's failure alone is written.
   */
  outcomes?: OutcomeSink;
}

/**
 * The router worker's processor: choose a fetcher for one link and hand the link to
 * that fetcher's queue. Idempotent: a re-run after a crash finds the link where it left it, and the fetch job id is
 * deterministic. The choice itself is {@link decideRoute} (pure); this function gathers what it asks for and carries
 * out what it says.
 */
export function createRouteProcessor(deps: RouterDeps) {
  const known = new Set(deps.settings.fetcherNames.map(canonicalFetcherName));
  const cache = new DecisionCache<Decision>(deps.settings.decisionCacheMs ?? 0, deps.clock, { setbacks: deps.setbacks });
  const walls = new ProbeWalls(deps.settings.probeWallMemoryMs ?? 0, deps.clock, deps.wallsShared);
  const sections = new SectionScopes(deps.settings.minSampleSize);
  const useDomain = deps.domainState !== undefined && deps.settings.domainMemoryEnabled !== false;
  const settings: DecisionSettings = {
    learningModeEnabled: deps.settings.learningModeEnabled,
    defaultFetcher: deps.settings.defaultFetcher,
    known,
    confidenceThreshold: deps.settings.confidenceThreshold,
    minSampleSize: deps.settings.minSampleSize,
    domainMemory: useDomain,
    plainHttpMemoryMs: deps.settings.plainHttpMemoryMs,
    pauseMaxMs: deps.settings.pauseMaxMs,
    pause: deps.settings.pause,
    maxAttempts: deps.settings.maxAttempts,
    exitTiers: deps.settings.exitTiers,
    // RouterDeps.revisits is given only while CONDITIONAL_REQUESTS is on (create-runtime).
    conditionalRevisits: deps.revisits !== undefined,
  };

  return async function processRoute(job: JobHandle, token?: string): Promise<RouteResult> {
    const data = parseJobData(RouteJobSchema, job.data, { queue: ROUTE_QUEUE, jobId: job.id });
    const log = lazyChild(deps.logger, { jobId: job.id, queue: ROUTE_QUEUE, linkId: data.linkId, url: data.url });
    const now = deps.clock.now();
    // The common case is one read here and one write (the decision) below: an unfinished, unpaused link of this
    // generation. Anything else is read again to say why it is not routed.
    const link = (await deps.links.readRoutable(data.linkId, now, data.generation)) ?? (await deps.links.get(data.linkId));
    const domain = link ? domainOf(link.url) : '';
    const facts: RouteFacts = {
      now, settings, domain, generation: data.generation, link, priority: data.priority, escalateTo: data.nextFetcher ?? null, avoid: data.blockedFetcher ?? null,
    };
    let cacheKey = '';
    let sectionKey = '';
    let permit: DomainPermit | null = null;
    let step: RouteStep;
    try {
      // Gather what the decision asks for, one fact at a time (each is read only when the cheaper ones gave no answer).
      for (step = decideRoute(facts); step.kind === 'need'; step = decideRoute(facts)) {
        switch (step.what) {
          case 'legacyRoute':
            facts.legacyRoute = await deps.routes.fetcherFor(domain);
            break;
          case 'cached': {
            // The answer depends only on these (and on time): URLs that share them share the decision. The section
            // is part of the key only once it is judged on its own evidence (SectionScopes).
            const { pooled, section } = splitRouting(link!.url, deps.settings.routingHeuristicTypes);
            const avoid = facts.avoid ? canonicalFetcherName(facts.avoid) : '';
            const domainScoped = section === null || sections.routeDomainScoped(section.value);
            const key = (hs: readonly Heuristic[]) => `${domain}\u0001${avoid}\u0001${hs.map((h) => `${h.type}=${h.value}`).sort().join('\u0001')}`;
            cacheKey = cache.enabled ? key(domainScoped ? pooled : [...pooled, section!]) : '';
            sectionKey = cache.enabled && section ? key([...pooled, section]) : cacheKey;
            facts.cached = cache.get(cacheKey) ?? null;
            if (facts.cached) log.debug({ fetcher: facts.cached.fetcher, source: facts.cached.source }, 'learned decision reused');
            break;
          }
          case 'learned': {
            const { pooled, section } = splitRouting(link!.url, deps.settings.routingHeuristicTypes);
            // Two independent reads, in parallel: the store's pooled score (with the section's own score in the same
            // statement) and the domain's own latest attempts.
            const [learned, recent] = await Promise.all([
              deps.learning.findBestFetcher(pooled, { minSampleSize: deps.settings.minSampleSize, now, ...(section ? { alone: section } : {}) }),
              useDomain ? deps.domainState!.recentDomainAttempts(domain) : Promise.resolve([]),
            ]);
            const own = section && learned.alone ? { section: section.value, attempts: learned.alone.attempts, result: learned.alone.result } : null;
            facts.learned = { learned, recent, section: own };
            if (hasOwnEvidence(own, deps.settings.minSampleSize)) {
              // Judged on its own: its decision is cached for the section alone, never for the whole domain.
              sections.judgedOnItsOwn(own.section);
              cacheKey = sectionKey;
            }
            break;
          }
          case 'wall':
            facts.wall = await climbedWall(deps, domain, await walls.recent(domain));
            if (facts.wall) log.debug({ fetcher: facts.wall.fetcher, wall: facts.wall.reason }, 'a probe of this domain met a wall recently');
            break;
          case 'revisit': {
            // Asked only for a link visited before, while conditional requests are on (settings.conditionalRevisits).
            const v = await deps.revisits!.validators(link!.id);
            facts.revisit = v;
            if (v) log.debug({ version: v.version, fetcher: v.fetcher, etag: v.etag !== null, lastModified: v.lastModified !== null }, 'revisit: stored validators read');
            break;
          }
          case 'robots':
            try {
              facts.robots = await deps.robots.check(link!.url);
            } catch (err) {
              // No proxy of the tier could ask it: nothing is known of the site, and no probe may be made.
              if (isExitError(err)) {
                facts.robots = { exitsDown: { message: err instanceof Error ? err.message : String(err) } };
                break;
              }
              // The URL itself is refused (SSRF guard, scheme), or the site's certificate is: probing it would be refused
              // the same way.
              if (!isUrlPolicyError(err) && !isCertificateError(err)) throw err;
              facts.robots = { refused: { code: err.code, message: err.message } };
            }
            break;
          case 'gate': {
            const gate = await deps.gate.acquire(domain);
            if (gate.granted) permit = gate.permit;
            facts.gate = gate.granted ? { granted: true } : { granted: false, reason: gate.reason, retryInMs: gate.retryInMs };
            break;
          }
          case 'pauseReason':
            facts.pauseReason = await domainPauseReason(deps.gate, domain);
            if (deps.wallStreaks) {
              facts.pauseReason.wall = wallVerdict(await deps.wallStreaks.read(domain), now.getTime(), deps.settings.wallMaxWaitMs);
            }
            break;
          case 'probe': {
            // The wall memory was read before the permit was granted: a probe of the domain that held it may have met
            // a wall meanwhile (it records the wall before letting go). Read again, so this probe is not one more refusal.
            if (!facts.wall) {
              const wall = await climbedWall(deps, domain, await walls.recent(domain));
              if (wall) {
                facts.wall = wall;
                break;
              }
            }
            // A probe is a request and can take seconds: the link shows `routing` meanwhile. (A link finished in
            // between is caught by the decision's guarded write.)
            log.debug({ avoid: facts.avoid }, 'no learned choice: probing');
            await deps.links.updateUnlessFinished(link!.id, { status: LINK_STATUSES.routing });
            try {
              facts.probe = { response: await deps.probe(link!.url), answeredAt: deps.clock.now() };
            } catch (error) {
              facts.probe = { error, answeredAt: deps.clock.now() };
            }
            break;
          }
        }
      }
      // Effects run while the probe's permit is held: a wall or a domain pause is known before the next probe starts.
      const probeRef = await carryOut(deps, walls, cache, cacheKey, domain, link?.id ?? data.linkId, facts, 'effects' in step ? step.effects : []);
      if (step.kind === 'route' && probeRef) step = { ...step, decision: { ...step.decision, probe: probeRef } };
    } finally {
      await permit?.release();
    }
    return finish(deps, job, token, log, step, link, facts);
  };
}

/** The URL's routing heuristics (core selectRoutingHeuristics), its section apart: the store scores the section by itself. */
function splitRouting(url: string, types: readonly string[] | undefined): { pooled: Heuristic[]; section: Heuristic | null } {
  const routing = selectRoutingHeuristics(extractUrlHeuristics(url), types);
  return { pooled: routing.filter((h) => h.type !== SECTION_HEURISTIC), section: routing.find((h) => h.type === SECTION_HEURISTIC) ?? null };
}

/**
 * The arm a wall sighting names may have been refused by the site since (the sighting's arm was a guess: the next rung
 * of the ladder): the links routed from the sighting would each be refused there too. The refusal the fetch workers
 * recorded names the arm its link climbed to; the sighting follows it (a few rungs at most).
 */
async function climbedWall(deps: RouterDeps, domain: string, wall: WallSighting | null): Promise<WallSighting | null> {
  for (let rung = 0; wall && wall.atMs !== undefined && deps.blockedArms && rung < 4; rung++) {
    const block = await deps.blockedArms.latest(domain, wall.fetcher);
    if (!block?.nextFetcher || block.atMs < wall.atMs) break;
    wall = { fetcher: block.nextFetcher, reason: wall.reason, atMs: block.atMs };
  }
  return wall;
}

/** Carry out a step's effects, in order; the stored probe's reference when one was saved. */
async function carryOut(
  deps: RouterDeps,
  walls: ProbeWalls,
  cache: DecisionCache<Decision>,
  cacheKey: string,
  domain: string,
  linkId: string,
  facts: RouteFacts,
  effects: readonly RouteEffect[],
): Promise<ProbeRef | undefined> {
  let probe: ProbeRef | undefined;
  for (const e of effects) {
    if (e.kind === 'updateLink') await deps.links.updateUnlessFinished(linkId, e.change);
    else if (e.kind === 'cacheDecision') cache.set(cacheKey, domain, e.decision);
    else if (e.kind === 'recordWall') await walls.record(domain, e.fetcher, e.reason);
    else if (e.kind === 'pauseDomain') await pauseDomainUntil(deps.gate, deps.clock, domain, e.until, e.reason);
    else if (e.kind === 'saveProbe' && facts.probe && 'response' in facts.probe) {
      const res = facts.probe.response;
      const key = await deps.probeStore.save(linkId, { status: res.status, headers: res.headers, finalUrl: res.finalUrl, contentType: res.contentType, body: res.body, text: res.text, ...(res.exit ? { exit: res.exit } : {}), ...(res.charset ? { charset: res.charset } : {}), ...(res.documentCharset ? { documentCharset: res.documentCharset } : {}) });
      if (key) probe = { key, status: res.status, bodyBytes: res.body.byteLength };
    }
  }
  return probe;
}

/** Finish the job the way the decision says: skip, delay, fail the link, or route it to its fetcher's queue. */
async function finish(
  deps: RouterDeps,
  job: JobHandle,
  token: string | undefined,
  log: Logger,
  step: Exclude<RouteStep, { kind: 'need' }>,
  link: LinkRecord | null,
  facts: RouteFacts,
): Promise<RouteResult> {
  if (step.kind === 'skip') return skipped(deps, step.reason);
  if (step.kind === 'delay') {
    const pausedUntil = step.effects.find((e) => e.kind === 'pauseDomain')?.until.toISOString();
    if (step.why === 'probe_rate_limited') {
      deps.metrics.probe('discarded');
      deps.metrics.pause(facts.domain, ERROR_TYPES.rateLimited);
      const status = facts.probe && 'response' in facts.probe ? facts.probe.response.status : undefined;
      log.warn({ domain: facts.domain, status, pauseMs: step.delayMs, pausedUntil, errorType: ERROR_TYPES.rateLimited }, 'domain paused: probe rate-limited');
    } else if (step.why === 'robots_rate_limited') {
      deps.metrics.pause(facts.domain, ERROR_TYPES.rateLimited);
      log.warn({ domain: facts.domain, pauseMs: step.delayMs, pausedUntil, errorType: ERROR_TYPES.rateLimited }, 'domain paused: robots.txt rate-limited');
    } else if (step.why === 'site_unreachable') {
      deps.metrics.pause(facts.domain, ERROR_TYPES.siteUnreachable);
      const reason = facts.robots && 'allowed' in facts.robots ? facts.robots.reason : undefined;
      const linkPausedUntil = step.effects.flatMap((e) => (e.kind === 'updateLink' ? [e.change.pausedUntil] : [])).at(0)?.toISOString();
      log.warn({ domain: facts.domain, pausedUntil: linkPausedUntil, errorType: ERROR_TYPES.siteUnreachable, reason }, 'link paused: its site is unreachable');
    } else if (step.why === 'politeness') {
      log.debug({ retryInMs: step.delayMs, reason: facts.gate && !facts.gate.granted ? facts.gate.reason : undefined }, 'politeness: probe delayed');
    } else {
      log.debug({ pausedUntil: link?.pausedUntil }, 'link paused; route job delayed');
    }
    deps.metrics.jobFinished(ROUTE_QUEUE, 'delayed');
    return delayJob(job, token, step.delayMs);
  }
  if (step.kind === 'fail') {
    const failed = { status: LINK_STATUSES.failed, lastErrorType: step.errorType, lastError: step.message };
    const refused = facts.robots && 'refused' in facts.robots ? facts.robots.refused : null;
    // A refused certificate was met by a request made for this link (robots.txt's handshake): the link fails with
    // that request as its attempt, in one write. Other refusals (the address guard, a scheme) sent nothing.
    if (refused?.code === ERROR_TYPES.tlsError && deps.outcomes) {
      await deps.outcomes.apply({ linkId: link!.id, attempts: [certificateAttempt(link!, refused, deps.clock.now())], link: failed });
    } else {
      await deps.links.updateUnlessFinished(link!.id, failed);
    }
    deps.metrics.jobFinished(ROUTE_QUEUE, 'failed');
    log.warn({ errorType: step.errorType }, step.message);
    return { kind: 'failed', errorType: step.errorType, message: step.message };
  }
  const { decision } = step;
  if (step.probe === 'failed') {
    deps.metrics.probe('failed');
    // An expected event (a slow or refusing site): one line, no stack trace.
    const error = facts.probe && 'error' in facts.probe ? facts.probe.error : undefined;
    log.info({ errorType: errorTypeOf(error), error: error instanceof Error ? error.message : String(error) }, 'probe failed');
  } else if (step.probe) {
    deps.metrics.probe(decision.probe ? 'reused' : 'discarded');
    log.debug({ fetcher: decision.fetcher, reuse: decision.probe !== undefined }, 'probe classified');
  }
  const fetcher = canonicalFetcherName(decision.fetcher);
  const decided = { status: LINK_STATUSES.fetching, fetcher, selectionSource: decision.source };
  const input: FetchJobInput = {
    linkId: link!.id,
    url: link!.url,
    fetcher,
    ...(decision.exitTier ? { exitTier: decision.exitTier } : {}),
    selectionSource: decision.source,
    confidence: decision.confidence,
    // The link's generation, not this job's: two route jobs of one link (a resubmission racing a resume) share the
    // fetch job id, so the page is fetched once.
    generation: link!.generation,
    attemptsBefore: link!.attemptCount,
    probe: decision.probe,
    // The job's priority, so the link keeps its place in the fetch queue too.
    priority: step.priority,
  };
  // A free fetch slot of this process: the router fetches the link itself (inline-fetch.ts), after the decision's log.
  // Its outcome's statement then writes the decision too: one update of the link a page, not two.
  const inline = deps.inline?.claim(fetcher) ?? null;
  if (!inline) {
    // The link is updated before the fetch job exists, so a fast fetch worker can never be overwritten by us; and only
    // while it is unfinished, so a duplicate route job racing a finished fetch cannot reopen it.
    if (!(await deps.links.updateUnlessFinished(link!.id, decided))) return skipped(deps, SKIP_REASONS.linkFinished);
    await deps.enqueueFetch(input);
  }
  deps.metrics.decision(decision.source, fetcher);
  deps.metrics.jobFinished(ROUTE_QUEUE, 'routed');
  const exitTier = decision.exitTier ?? 'direct';
  const probeReused = decision.probe !== undefined;
  log.info({ fetcher, exitTier, source: decision.source, confidence: decision.confidence, probeReused, ...(inline ? { inline: true } : {}) }, 'routed');
  if (inline) {
    // The link as this route job leaves it, so the fetch need not read it again: the read, every change written since,
    // and the decision, which the fetch writes with its outcome.
    const effects = 'effects' in step ? step.effects : [];
    const changes = [...effects.flatMap((e) => (e.kind === 'updateLink' ? [e.change] : [])), decided];
    await inline.run(input, job.id ?? `${link!.id}:${link!.generation}`, changes.reduce(withChange, link!), decided);
  }
  return { kind: 'routed', fetcher, exitTier, source: decision.source, confidence: decision.confidence, probeReused, ...(inline ? { inline: true } : {}) };
}

/** `link` after `change` was written to it (LinkStore.update's semantics). */
export function withChange(link: LinkRecord, change: LinkChange): LinkRecord {
  const { attemptsMade, lastAttemptAt, ...fields } = change;
  const next: LinkRecord = { ...link, ...fields };
  if (attemptsMade) {
    next.attemptCount = link.attemptCount + attemptsMade;
    next.lastAttemptAt = lastAttemptAt ?? link.lastAttemptAt;
  }
  return next;
}

function skipped(deps: RouterDeps, reason: SkipReason): RouteResult {
  deps.metrics.jobFinished(ROUTE_QUEUE, 'skipped');
  return { kind: 'skipped', reason };
}
