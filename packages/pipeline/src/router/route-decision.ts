import {
  DOMAIN_MEMORY_SOURCE,
  ERROR_TYPES,
  LINK_STATUSES,
  SELECTION_SOURCES,
  SKIP_REASONS,
  canonicalFetcherName,
  rateLimitPause,
  retryAfterMsOf,
  type BestFetcherResult,
  type DomainAttempt,
  type SkipReason,
} from '@crawler/core';
import type { ProbeRef } from '@crawler/queue';
import type { FetchResult } from '@crawler/fetchers';
import type { LinkChange, LinkRecord } from '../ports.js';
import { judgeProbe } from '../fetch/response-analysis.js';
import { chooseLearned } from './learned-choice.js';
import type { WallSighting } from './probe-walls.js';

/** A routing decision: the fetcher, why, and the stored probe body the fetch may reuse. */
export interface Decision {
  fetcher: string;
  source: string;
  confidence?: number;
  probe?: ProbeRef;
}

/** The settings the decision reads (RouterSettings, with the fleet's fetchers as canonical names). */
export interface DecisionSettings {
  learningModeEnabled: boolean;
  defaultFetcher?: string;
  /** Canonical names of the fetchers the fleet runs. */
  known: ReadonlySet<string>;
  confidenceThreshold: number;
  /** The domain's own attempts are read (RouterSettings.domainMemoryEnabled and a DomainStateReader). */
  domainMemory: boolean;
  plainHttpMemoryMs?: number;
  pauseMaxMs?: number;
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
  link: Pick<LinkRecord, 'id' | 'status' | 'pausedUntil' | 'generation' | 'learningModeEnabled' | 'riskLevel'> | null;
  /** The retry policy's next tool for a blocked link's re-route (RouteJob.nextFetcher). */
  escalateTo?: string | null;
  /** The fetcher the link was just blocked with (RouteJob.blockedFetcher): never chosen again on this re-route. */
  avoid?: string | null;
  /** The legacy fetcher_router table's fetcher for the domain (learning off). */
  legacyRoute?: string | null;
  /** A confident decision this router took recently for the same routing heuristics (DecisionCache). */
  cached?: Decision | null;
  /** The store's pooled score and the domain's latest attempts (empty when domain memory is off). */
  learned?: { learned: BestFetcherResult; recent: readonly DomainAttempt[] };
  /** A bot wall a probe of this domain met recently (ProbeWalls). */
  wall?: WallSighting | null;
  /** robots.txt's verdict on the URL, or the URL policy's refusal (SSRF guard, scheme). */
  robots?: { allowed: boolean; reason?: string } | { refused: { code: string; message: string } };
  /** The politeness gate's answer to a probe. `granted`: the processor holds the permit until the step is carried out. */
  gate?: { granted: true } | { granted: false; reason: 'paused' | 'concurrency' | 'delay'; retryInMs: number };
  /** The probe's result, with the time its answer came. */
  probe?: { response: FetchResult; answeredAt: Date } | { error: unknown; answeredAt: Date };
}

/** What the router gathers next. */
export type RouteNeed = 'legacyRoute' | 'cached' | 'learned' | 'wall' | 'robots' | 'gate' | 'probe';

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
  | { kind: 'delay'; delayMs: number; why: 'link_paused' | 'politeness' | 'probe_rate_limited'; effects: RouteEffect[] }
  | { kind: 'fail'; errorType: string; message: string }
  | { kind: 'route'; decision: Decision; effects: RouteEffect[]; probe?: 'failed' | 'discarded' | 'stored' };

/**
 * The router's choice for one job, as a pure function of what it knows. It answers `need` until it has read enough
 * (the processor gathers that fact and asks again), then says what to do: skip, delay, fail or route, with the
 * effects to carry out. The probe is itself a `need`: it is asked for only when the learned step, the decision
 * cache and the wall memory gave no answer and robots.txt and the politeness gate let it through.
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
    if (f.legacyRoute) return checked(settings, { fetcher: f.legacyRoute, source: SELECTION_SOURCES.hardCoded });
    if (settings.defaultFetcher) return checked(settings, { fetcher: settings.defaultFetcher, source: SELECTION_SOURCES.default });
    return { kind: 'fail', errorType: ERROR_TYPES.noRoute, message: `no route for domain ${f.domain} and no DEFAULT_FETCHER configured` };
  }
  const escalateTo = f.escalateTo ? canonicalFetcherName(f.escalateTo) : null;
  // A blocked link's re-route: the retry policy already chose the next tool (e.g. stealth after a challenge).
  if (escalateTo && settings.known.has(escalateTo)) return checked(settings, { fetcher: escalateTo, source: SELECTION_SOURCES.retry });
  const avoid = f.avoid ? canonicalFetcherName(f.avoid) : null;

  if (f.cached === undefined) return { kind: 'need', what: 'cached' };
  if (f.cached) return checked(settings, f.cached);
  if (f.learned === undefined) return { kind: 'need', what: 'learned' };
  const choice = chooseLearned({
    learned: f.learned.learned,
    recent: f.learned.recent,
    now,
    avoid,
    confidenceThreshold: settings.confidenceThreshold,
    domainMemory: settings.domainMemory,
    plainHttpMemoryMs: settings.plainHttpMemoryMs,
  });
  if (choice.kind !== 'probe') {
    const decided: Decision = choice.kind === 'learned' ? { fetcher: choice.fetcher, source: choice.source, confidence: choice.confidence } : { fetcher: choice.fetcher, source: choice.source };
    return checked(settings, decided, [{ kind: 'cacheDecision', decision: decided }]);
  }
  // A probe of this domain just met a bot wall: another probe would only be refused too (one more block in the site's
  // log). The domain's pages go to the tool that probe chose until a browser result is learned.
  if (f.wall === undefined) return { kind: 'need', what: 'wall' };
  const wallFetcher = f.wall ? canonicalFetcherName(f.wall.fetcher) : null;
  if (wallFetcher && settings.known.has(wallFetcher) && wallFetcher !== avoid) return checked(settings, { fetcher: wallFetcher, source: DOMAIN_MEMORY_SOURCE });

  // The probe is a real request to the site, so it obeys robots.txt and the fleet's politeness like any fetch.
  if (f.robots === undefined) return { kind: 'need', what: 'robots' };
  if ('refused' in f.robots) return { kind: 'fail', errorType: f.robots.refused.code, message: f.robots.refused.message };
  if (!f.robots.allowed) return { kind: 'fail', errorType: ERROR_TYPES.robotsDisallowed, message: f.robots.reason ?? 'disallowed by robots.txt' };
  if (f.gate === undefined) return { kind: 'need', what: 'gate' };
  if (!f.gate.granted) {
    const effects: RouteEffect[] = f.gate.reason === 'paused' ? [{ kind: 'updateLink', change: { status: LINK_STATUSES.paused, pausedUntil: new Date(now.getTime() + f.gate.retryInMs) } }] : [];
    return { kind: 'delay', delayMs: f.gate.retryInMs, why: 'politeness', effects };
  }
  if (f.probe === undefined) return { kind: 'need', what: 'probe' };
  return decideAfterProbe(f, f.probe, link.riskLevel);
}

function decideAfterProbe(f: RouteFacts, probe: NonNullable<RouteFacts['probe']>, riskLevel: number): RouteStep {
  const verdict = judgeProbe(probe);
  if (!('response' in probe)) {
    // A failed probe says nothing about the page: no attempt is logged for any fetcher.
    return checked(f.settings, { fetcher: verdict.fetcher, source: SELECTION_SOURCES.probe }, [], 'failed');
  }
  const effects: RouteEffect[] = [];
  // Remembered before the permit goes, so a probe waiting for it finds the wall already known.
  if (verdict.reason.startsWith('blocked')) effects.push({ kind: 'recordWall', fetcher: verdict.fetcher, reason: verdict.reason });
  if (verdict.reason === ERROR_TYPES.rateLimited) {
    // The site asked for pace: the link and the domain wait (never less than Retry-After) before anyone asks again,
    // measured from the answer. The route job comes back after the pause and probes afresh; a probe is no attempt.
    const limited = rateLimitPause({ riskLevel, retryAfterMs: retryAfterMsOf(probe.response.headers, probe.answeredAt), now: probe.answeredAt, maxPauseMs: f.settings.pauseMaxMs });
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
  if (verdict.reuse) effects.push({ kind: 'saveProbe' });
  return checked(f.settings, { fetcher: verdict.fetcher, source: SELECTION_SOURCES.probe }, effects, verdict.reuse ? 'stored' : 'discarded');
}

/** A decision naming a fetcher the fleet does not run fails the link with `unknown_fetcher`. */
function checked(settings: DecisionSettings, decision: Decision, effects: RouteEffect[] = [], probe?: 'failed' | 'discarded' | 'stored'): RouteStep {
  if (!settings.known.has(canonicalFetcherName(decision.fetcher))) {
    return { kind: 'fail', errorType: ERROR_TYPES.unknownFetcher, message: `fetcher '${decision.fetcher}' is not configured (FETCHERS=${[...settings.known].join(',')})` };
  }
  return { kind: 'route', decision, effects, ...(probe ? { probe } : {}) };
}
