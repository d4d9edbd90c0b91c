import {
  CrawlerError,
  DIRECT_TIER,
  DOMAIN_MEMORY_SOURCE,
  ERROR_TYPES,
  FETCHERS,
  FETCHER_LADDER,
  LEARNING_DEFAULTS,
  LINK_STATUSES,
  SELECTION_SOURCES,
  SKIP_REASONS,
  canonicalFetcherName,
  fetchersAbove,
  rateLimitPause,
  retryAfterMsOf,
  scopeLearned,
  type BestFetcherResult,
  type KnownFetcherName,
  type SectionScore,
  type DomainAttempt,
  type RobotsVerdict,
  robotsReadableWithoutBrowser,
  robotsReaders,
  type SkipReason,
  type WallVerdict,
} from '@crawler/core';
import type { ProbeRef } from '@crawler/queue';
import type { RevisitValidators } from '@crawler/db';
import type { LinkChange, LinkRecord, ProbeFn } from '../ports.js';
import { judgeProbe } from '../fetch/response-analysis.js';
import { robotsRateLimitDecision, unreachableDecision, unreachableFailure, type PauseSettings } from '../fetch/site-pause.js';
import { chooseLearned } from './learned-choice.js';
import { armKey, armPastWall, armView, isProbedPlainArm, runnableArm, tiersOf, wallArm, type ArmSettings } from './arm-choice.js';
import type { WallSighting } from './probe-walls.js';

/** A routing decision: the fetcher, why, and the stored probe body the fetch may reuse. */
export interface Decision {
  fetcher: string;
  /** The exit tier the fetch leaves from. @defaultValue 'direct' */
  exitTier?: string;
  source: string;
  confidence?: number;
  probe?: ProbeRef;
}

/** The settings the decision reads (RouterSettings, with the fleet's fetchers as canonical names). */
export interface DecisionSettings extends ArmSettings {
  learningModeEnabled: boolean;
  defaultFetcher?: string;
  /** Canonical names of the fetchers the fleet runs. */
  known: ReadonlySet<string>;
  confidenceThreshold: number;
  /** A section with this many attempts of its own is judged on them (core scopeLearned). @defaultValue core LEARNING_DEFAULTS.minSampleSize */
  minSampleSize?: number;
  /** The domain's own attempts are read (RouterSettings.domainMemoryEnabled and a DomainStateReader). */
  domainMemory: boolean;
  plainHttpMemoryMs?: number;
  pauseMaxMs?: number;
  /** Pause bases and the Retry-After floor (RouterSettings.pause). @defaultValue core's */
  pause?: PauseSettings;
  /** Checks of an unreachable site a link gets before it fails with `site_unreachable` (RouterSettings.maxAttempts). @defaultValue core DEFAULT_MAX_ATTEMPTS */
  maxAttempts?: number;
  /**
   * A revisit's stored validators can be read (CONDITIONAL_REQUESTS on, RouterDeps.revisits given): a revisit of a
   * page plain HTTP stored with an ETag or Last-Modified sends its conditional request instead of a probe.
   * @defaultValue false
   */
  conditionalRevisits?: boolean;
}

/**
 * What the router knows about one route job. The first fields are known when the job starts; the optional ones are
 * gathered when {@link decideRoute} asks for them (`undefined`: not asked yet), in the order it asks.
 */
export interface RouteFacts {
  now: Date;
  settings: DecisionSettings;
  /** The link's domain (for messages). */
  domain: string;
  /** The job's generation. */
  generation: number;
  link: Pick<LinkRecord, 'id' | 'status' | 'pausedUntil' | 'generation' | 'learningModeEnabled' | 'riskLevel' | 'lastAttemptAt'> | null;
  /** The job's BullMQ priority (RouteJob.priority): the fetch job carries it on. */
  priority?: number;
  /** The retry policy's next tool for a blocked link's re-route (RouteJob.nextFetcher). */
  escalateTo?: string | null;
  /** The fetcher the link was just blocked with (RouteJob.blockedFetcher): never chosen again on this re-route. */
  avoid?: string | null;
  /** The legacy fetcher_router table's fetcher for the domain (learning off). */
  legacyRoute?: string | null;
  /** A confident decision this router took recently for the same routing heuristics (DecisionCache). */
  cached?: Decision | null;
  /**
   * The store's pooled score, the domain's latest attempts (empty when domain memory is off), and the score of the URL's
   * section by itself (null: the URL has none, or it was not asked for).
   */
  learned?: { learned: BestFetcherResult; recent: readonly DomainAttempt[]; section?: SectionScore | null };
  /** A bot wall a probe of this domain met recently (ProbeWalls). */
  wall?: WallSighting | null;
  /** The latest stored version's validators of a link visited before (RevisitSource.validators); null: none stored. */
  revisit?: Pick<RevisitValidators, 'fetcher' | 'etag' | 'lastModified'> | null;
  /**
   * robots.txt's verdict on the URL (`unreachable`: robots.txt could not be read, the site is "not now"), or the URL
   * policy's refusal (SSRF guard, scheme).
   */
  robots?: Pick<RobotsVerdict, 'allowed' | 'reason' | 'unreachable' | 'browser' | 'rateLimited'> | { refused: { code: string; message: string } } | { exitsDown: { message: string } };
  /** The politeness gate's answer to a probe. `granted`: the processor holds the permit until the step is carried out. */
  gate?: { granted: true } | { granted: false; reason: 'paused' | 'concurrency' | 'delay'; retryInMs: number };
  /**
   * Why the domain is paused, as the link's error (site-pause domainPauseReason; `{}` when the gate cannot say), and
   * the verdict on a wall that refused the fleet's strongest tool (core wallVerdict; absent or null: none).
   */
  pauseReason?: { lastErrorType?: string; lastError?: string; wall?: WallVerdict | null };
  /** The probe's result, with the time its answer came. */
  probe?: { response: Awaited<ReturnType<ProbeFn>>; answeredAt: Date } | { error: unknown; answeredAt: Date };
}

/** What the router gathers next. */
export type RouteNeed = 'legacyRoute' | 'cached' | 'learned' | 'wall' | 'revisit' | 'robots' | 'gate' | 'pauseReason' | 'probe';

/** Something the processor carries out, in order, before it finishes the job the way the step says. */
export type RouteEffect =
  | { kind: 'updateLink'; change: LinkChange }
  | { kind: 'cacheDecision'; decision: Decision }
  | { kind: 'recordWall'; fetcher: string; reason: string }
  | { kind: 'pauseDomain'; until: Date; reason: string }
  /** Store the probe's body for the fetch to reuse; the decision then carries its ProbeRef. */
  | { kind: 'saveProbe' };

/** One step of the router's decision (see {@link decideRoute}). */
export type RouteStep =
  | { kind: 'need'; what: RouteNeed }
  | { kind: 'skip'; reason: SkipReason }
  | { kind: 'delay'; delayMs: number; why: 'link_paused' | 'politeness' | 'probe_rate_limited' | 'robots_rate_limited' | 'site_unreachable'; effects: RouteEffect[] }
  | { kind: 'fail'; errorType: string; message: string }
  /** `priority`: the job's, for the fetch job (never part of the decision, which is cached across links). */
  | { kind: 'route'; decision: Decision; effects: RouteEffect[]; probe?: 'failed' | 'discarded' | 'stored'; priority?: number };

/**
 * The router's choice for one job, as a pure function of what it knows. It answers `need` until it has read enough
 * (the processor gathers that fact and asks again), then says what to do: skip, delay, fail or route, with the
 * effects to carry out. The probe is itself a `need`: it is asked for only when the learned step, the decision
 * cache, the wall memory and the revisit step gave no answer and robots.txt and the politeness gate let it through.
 */
export function decideRoute(f: RouteFacts): RouteStep {
  const { link, now, settings } = f;
  if (!link) return { kind: 'skip', reason: SKIP_REASONS.linkMissing };
  if (link.status === LINK_STATUSES.done) return { kind: 'skip', reason: SKIP_REASONS.linkDone };
  if (link.status === LINK_STATUSES.failed) return { kind: 'skip', reason: SKIP_REASONS.linkFailed };
  // The reconciler gave the link a job of a newer generation: that one carries it now.
  if (link.generation > f.generation) return { kind: 'skip', reason: SKIP_REASONS.staleGeneration };
  if (link.pausedUntil && link.pausedUntil.getTime() > now.getTime()) {
    // A paused link waits as a delayed job: no busy loop, no error, and nothing waiting/active keeps --until-idle up.
    const effects: RouteEffect[] = link.status === LINK_STATUSES.paused ? [] : [{ kind: 'updateLink', change: { status: LINK_STATUSES.paused } }];
    return { kind: 'delay', delayMs: link.pausedUntil.getTime() - now.getTime(), why: 'link_paused', effects };
  }
  const learning = link.learningModeEnabled ?? settings.learningModeEnabled;
  if (!learning) {
    if (f.legacyRoute === undefined) return { kind: 'need', what: 'legacyRoute' };
    if (f.legacyRoute) return checked(f, { fetcher: f.legacyRoute, source: SELECTION_SOURCES.hardCoded });
    if (settings.defaultFetcher) return checked(f, { fetcher: settings.defaultFetcher, source: SELECTION_SOURCES.default });
    return { kind: 'fail', errorType: ERROR_TYPES.noRoute, message: `no route for domain ${f.domain} and no DEFAULT_FETCHER configured` };
  }
  // A blocked link's re-route: the retry policy already chose the next tool (e.g. stealth after a challenge), or the
  // next arm of the exit ladder (`simple_http@residential`).
  const escalateTo = runnableArm(settings, f.escalateTo);
  if (escalateTo) return checked(f, armDecision(escalateTo.fetcher, escalateTo.tier, SELECTION_SOURCES.retry));
  // An arm key: a link blocked on plain HTTP direct is not kept from plain HTTP through a proxy.
  const avoid = f.avoid ? armKey(runnableArm(settings, f.avoid) ?? { fetcher: canonicalFetcherName(f.avoid), tier: 'direct' }) : null;

  if (f.cached === undefined) return { kind: 'need', what: 'cached' };
  if (f.cached) return pastWall(f, f.cached, avoid) ?? checked(f, f.cached);
  if (f.learned === undefined) return { kind: 'need', what: 'learned' };
  const own = f.learned.section ? { ...f.learned.section, result: armView(f.learned.section.result, settings, avoid).learned } : null;
  // A section with enough attempts of its own is judged on them, and remembered by them (core scopeLearned).
  const scoped = scopeLearned({
    pooled: armView(f.learned.learned, settings, avoid).learned,
    section: own,
    recent: f.learned.recent,
    minSampleSize: settings.minSampleSize ?? LEARNING_DEFAULTS.minSampleSize,
    confidenceThreshold: settings.confidenceThreshold,
  });
  const choice = chooseLearned({
    learned: scoped.learned,
    recent: scoped.recent,
    now,
    avoid,
    confidenceThreshold: settings.confidenceThreshold,
    domainMemory: settings.domainMemory,
    plainHttpMemoryMs: settings.plainHttpMemoryMs,
  });
  if (choice.kind !== 'probe') {
    const arm = runnableArm(settings, choice.fetcher) ?? { fetcher: choice.fetcher, tier: 'direct' };
    const decided: Decision = choice.kind === 'learned' ? { ...armDecision(arm.fetcher, arm.tier, choice.source), confidence: choice.confidence } : armDecision(arm.fetcher, arm.tier, choice.source);
    return pastWall(f, decided, avoid) ?? checked(f, decided, [{ kind: 'cacheDecision', decision: decided }]);
  }
  // A probe of this domain just met a bot wall: another probe would only be refused too (one more block in the site's
  // log). The domain's pages go to the tool that probe chose until a browser result is learned.
  if (f.wall === undefined) return { kind: 'need', what: 'wall' };
  const wall = f.wall ? runnableArm(settings, f.wall.fetcher) : null;
  if (wall && armKey(wall) !== avoid) return checked(f, armDecision(wall.fetcher, wall.tier, DOMAIN_MEMORY_SOURCE));

  // A revisit of a page plain HTTP stored with an ETag or Last-Modified: its conditional request is the probe. A 304
  // or the page ends it in one request; a wall or an app shell switches the tool as a probe's verdict would. (A first
  // visit has no stored page: nothing is read for it.)
  if (settings.conditionalRevisits && link.lastAttemptAt && settings.known.has(FETCHERS.simpleHttp) && avoid !== FETCHERS.simpleHttp) {
    if (f.revisit === undefined) return { kind: 'need', what: 'revisit' };
    // A rendered version's validators do not describe the page plain HTTP gets; without a validator there is nothing to ask with.
    const v = f.revisit;
    if (v && canonicalFetcherName(v.fetcher) === FETCHERS.simpleHttp && (v.etag || v.lastModified)) return checked(f, { fetcher: FETCHERS.simpleHttp, source: SELECTION_SOURCES.revisit });
  }

  // The probe is a real request to the site, so it obeys robots.txt and the fleet's politeness like any fetch.
  if (f.robots === undefined) return { kind: 'need', what: 'robots' };
  if ('refused' in f.robots) return { kind: 'fail', errorType: f.robots.refused.code, message: f.robots.refused.message };
  // No proxy could ask robots.txt (PROXY_DIRECT=false, the tier down): no probe, which would be a request; the route a
  // failed probe gives. The fetch job asks robots.txt again before its request and waits for the exits, bounded.
  if ('exitsDown' in f.robots) return decideAfterProbe(f, { error: new CrawlerError(ERROR_TYPES.proxyUnavailable, f.robots.exitsDown.message), answeredAt: now }, link.riskLevel);
  if (!f.robots.allowed && f.robots.rateLimited) return decideRobotsRateLimited(f, { allowed: false, crawlDelayMs: null, reason: f.robots.reason, rateLimited: f.robots.rateLimited }, link.riskLevel);
  let robotsAllowed = f.robots.allowed;
  if (!f.robots.allowed && f.robots.browser) {
    // Only a browser reads robots.txt (a head undici refuses, a wall in front of it): a plain-HTTP probe would meet the
    // same refusal. The link goes to a browser the fleet runs, whose fetch worker reads robots.txt in its context first.
    for (const name of robotsReaders(f.robots.browser.fetcher)) {
      const arm = runnableArm(settings, name);
      if (arm && armKey(arm) !== avoid) return checked(f, armDecision(arm.fetcher, arm.tier, SELECTION_SOURCES.probe));
    }
    // No browser in the fleet can. A wall's page with a 2xx or 4xx holds no rules a fleet without browsers could read,
    // so none apply (as before browsers read such files); nothing readable at all, or a 5xx, is an outage.
    if (!robotsReadableWithoutBrowser(f.robots.browser)) {
      return decideUnreachable(f, { allowed: false, crawlDelayMs: null, reason: f.robots.reason, unreachable: { retryAtMs: f.robots.browser.retryAtMs } }, link.riskLevel);
    }
    robotsAllowed = true;
  }
  if (!robotsAllowed && f.robots.unreachable) return decideUnreachable(f, { allowed: false, crawlDelayMs: null, reason: f.robots.reason, unreachable: f.robots.unreachable }, link.riskLevel);
  if (!robotsAllowed) return { kind: 'fail', errorType: ERROR_TYPES.robotsDisallowed, message: f.robots.reason ?? 'disallowed by robots.txt' };
  if (f.gate === undefined) return { kind: 'need', what: 'gate' };
  if (!f.gate.granted) {
    if (f.gate.reason !== 'paused') return { kind: 'delay', delayMs: f.gate.retryInMs, why: 'politeness', effects: [] };
    // The link shows why it waits: the domain's pause reason, not a blank error.
    if (f.pauseReason === undefined) return { kind: 'need', what: 'pauseReason' };
    const { wall, ...reason } = f.pauseReason;
    // A wall that refused the fleet's strongest tool for WALL_MAX_WAIT_MS: the link ends with it. Before that, it waits
    // no longer than its budget, so it ends on time even behind a long pause of the site.
    if (wall?.kind === 'fail') return { kind: 'fail', errorType: wall.errorType, message: wall.message };
    const delayMs = wall ? Math.max(1, Math.min(f.gate.retryInMs, wall.untilMs - now.getTime())) : f.gate.retryInMs;
    const change: LinkChange = { status: LINK_STATUSES.paused, pausedUntil: new Date(now.getTime() + delayMs), ...reason };
    return { kind: 'delay', delayMs, why: 'politeness', effects: [{ kind: 'updateLink', change }] };
  }
  if (f.probe === undefined) return { kind: 'need', what: 'probe' };
  return decideAfterProbe(f, f.probe, link.riskLevel);
}

/**
 * robots.txt could not be read (refused, timeout, 5xx, 429): the site is "not now", not "never". The link pauses with
 * backoff (UNREACHABLE_PAUSE_BASE_MS, doubling per check in a row, capped) and the route job comes back and asks
 * again; the link fails with `site_unreachable` only when its check budget (MAX_ATTEMPTS) is used. The domain does not
 * pause: robots.txt belongs to an origin, and another port or scheme of the host (a dead `http://host/` beside a live
 * `https://host/`) may be up. The origin's other links meet the same cached answer and pause themselves, with no
 * request to it until the cache says to try again.
 */
function decideUnreachable(f: RouteFacts, verdict: RobotsVerdict & { unreachable: { retryAtMs: number } }, riskLevel: number): RouteStep {
  const d = unreachableDecision(verdict, { riskLevel, now: f.now, maxAttempts: f.settings.maxAttempts, pauseMaxMs: f.settings.pauseMaxMs, pause: f.settings.pause });
  if (d.kind === 'fail') {
    const failed = unreachableFailure(verdict, d.checks);
    return { kind: 'fail', errorType: failed.errorType, message: failed.message };
  }
  return {
    kind: 'delay',
    delayMs: d.pauseMs,
    why: 'site_unreachable',
    effects: [
      {
        kind: 'updateLink',
        change: { status: LINK_STATUSES.paused, pausedUntil: d.pausedUntil, riskLevel: d.riskLevel, lastErrorType: ERROR_TYPES.siteUnreachable, lastError: verdict.reason ?? ERROR_TYPES.siteUnreachable },
      },
    ],
  };
}

/** robots.txt answered 429: the link and the domain wait as after a rate-limited probe (robotsRateLimitDecision). */
function decideRobotsRateLimited(f: RouteFacts, verdict: RobotsVerdict & { rateLimited: { retryAtMs: number } }, riskLevel: number): RouteStep {
  const d = robotsRateLimitDecision(verdict, { riskLevel, now: f.now, maxAttempts: f.settings.maxAttempts, pauseMaxMs: f.settings.pauseMaxMs, pause: f.settings.pause });
  if (d.kind === 'fail') return { kind: 'fail', errorType: d.errorType, message: d.message };
  return {
    kind: 'delay',
    delayMs: d.pauseMs,
    why: 'robots_rate_limited',
    effects: [
      { kind: 'pauseDomain', until: d.pausedUntil, reason: ERROR_TYPES.rateLimited },
      { kind: 'updateLink', change: { status: LINK_STATUSES.paused, pausedUntil: d.pausedUntil, riskLevel: d.riskLevel, lastErrorType: d.errorType, lastError: d.reason } },
    ],
  };
}

function decideAfterProbe(f: RouteFacts, probe: NonNullable<RouteFacts['probe']>, riskLevel: number): RouteStep {
  const verdict = judgeProbe(probe);
  if (!('response' in probe)) {
    // A failed probe says nothing about the page: no attempt is logged for any fetcher.
    return checked(f, { fetcher: verdict.fetcher, source: SELECTION_SOURCES.probe }, [], 'failed');
  }
  const effects: RouteEffect[] = [];
  const blocked = verdict.reason.startsWith('blocked');
  // With proxied tiers, a wall in front of the worker's own address is first tried from another address with plain
  // HTTP (a site that blocks a range usually serves the same page to another), not with a browser.
  // The probe left from the cheapest tier (the worker's own address unless PROXY_DIRECT=false).
  const probedTier = tiersOf(f.settings)[0]!.name;
  const next = blocked ? wallArm(f.settings, verdict.fetcher) : { fetcher: verdict.fetcher, tier: probedTier };
  // Remembered before the permit goes, so a probe waiting for it finds the wall already known.
  if (blocked) effects.push({ kind: 'recordWall', fetcher: armKey(next), reason: verdict.reason });
  if (verdict.reason === ERROR_TYPES.rateLimited) {
    // The site asked for pace: the link and the domain wait (never less than Retry-After) before anyone asks again,
    // measured from the answer. The route job comes back after the pause and probes afresh; a probe is no attempt.
    const limited = rateLimitPause({ riskLevel, retryAfterMs: retryAfterMsOf(probe.response.headers, probe.answeredAt), now: probe.answeredAt, maxPauseMs: f.settings.pauseMaxMs, pause: f.settings.pause });
    effects.push(
      { kind: 'pauseDomain', until: limited.pausedUntil, reason: ERROR_TYPES.rateLimited },
      {
        kind: 'updateLink',
        change: {
          status: LINK_STATUSES.paused,
          pausedUntil: limited.pausedUntil,
          riskLevel: limited.riskLevel,
          lastErrorType: ERROR_TYPES.rateLimited,
          lastError: `rate_limited: probe answered ${probe.response.status}`,
        },
      },
    );
    return { kind: 'delay', delayMs: limited.pauseMs, why: 'probe_rate_limited', effects };
  }
  if (verdict.reuse && next.tier === probedTier) effects.push({ kind: 'saveProbe' });
  return checked(f, armDecision(next.fetcher, next.tier, SELECTION_SOURCES.probe), effects, verdict.reuse && next.tier === probedTier ? 'stored' : 'discarded');
}

/** The strongest browser of `known` below the ladder's rung `rung` (itself a browser's), if any. */
function strongestBrowserBelow(rung: number, known: ReadonlySet<string>): KnownFetcherName | undefined {
  if (rung < 2) return undefined;
  return fetchersAbove(FETCHERS.simpleHttp, known).filter((tool) => FETCHER_LADDER.indexOf(tool) < rung).at(-1);
}

/**
 * A learned or cached choice of plain HTTP from the probe's tier on a domain whose probe just met a bot wall goes to
 * the tool the probe chose, as the domain's pages do (arm-choice armPastWall). Null when it stays as it is; a `need`
 * until the wall memory is read.
 */
function pastWall(f: RouteFacts, decision: Decision, avoid: string | null): RouteStep | null {
  const chosen = { fetcher: decision.fetcher, tier: decision.exitTier ?? DIRECT_TIER };
  if (!isProbedPlainArm(f.settings, chosen)) return null;
  if (f.wall === undefined) return { kind: 'need', what: 'wall' };
  const wall = f.wall ? armPastWall(f.settings, chosen, f.wall.fetcher, avoid) : null;
  return wall ? checked(f, armDecision(wall.fetcher, wall.tier, DOMAIN_MEMORY_SOURCE)) : null;
}

/** A decision for an arm: the exit tier is named only when it is not `direct` (the payloads stay as they were). */
function armDecision(fetcher: string, tier: string, source: string): Decision {
  return tier === 'direct' ? { fetcher, source } : { fetcher, exitTier: tier, source };
}

/**
 * A decision naming a tool the fleet does not run climbs to the cheapest one it runs above it on the ladder (a fleet of
 * browsers only, FETCHERS=playwright,playwright_stealth, fetches with a browser what plain HTTP would have: a browser
 * gets what plain HTTP gets), without the probe's stored body, which only plain HTTP reuses. A browser above every tool
 * the fleet runs goes to the strongest browser it runs (FETCHERS=simple_http,playwright, and a wall asking for the
 * stealth browser: the browser may clear it, and its own block says so if not). Any other (a browser on a fleet of
 * plain HTTP only, or a name off the ladder) fails the link with `unknown_fetcher`. A route carries the job's priority.
 */
function checked(f: RouteFacts, decision: Decision, effects: RouteEffect[] = [], probe?: 'failed' | 'discarded' | 'stored'): RouteStep {
  const { known } = f.settings;
  const wanted = canonicalFetcherName(decision.fetcher);
  if (!known.has(wanted)) {
    const rung = FETCHER_LADDER.indexOf(wanted as KnownFetcherName);
    const above = rung === -1 ? undefined : (fetchersAbove(wanted, known)[0] ?? strongestBrowserBelow(rung, known));
    if (!above) return { kind: 'fail', errorType: ERROR_TYPES.unknownFetcher, message: `fetcher '${decision.fetcher}' is not configured (FETCHERS=${[...known].join(',')})` };
    decision = { ...decision, fetcher: above };
    effects = effects.filter((e) => e.kind !== 'saveProbe');
    if (probe === 'stored') probe = 'discarded';
  }
  return { kind: 'route', decision, effects, ...(probe ? { probe } : {}), ...(f.priority !== undefined ? { priority: f.priority } : {}) };
}
