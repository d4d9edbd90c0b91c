import {
  ERROR_TYPES,
  FETCHERS,
  LINK_STATUSES,
  SKIP_REASONS,
  isCertificateError,
  isExitError,
  isUrlPolicyError,
  robotsReadableWithoutBrowser,
  robotsReaders,
  type RobotsVerdict,
} from '@crawler/core';
import type { FetchResult as FetchJobResult } from '@crawler/queue';
import { delayJob } from '../job-control.js';
import { armKey } from '../router/arm-choice.js';
import type { ArmBlock } from './blocked-arms.js';
import { waitForExits } from './fetch-exits.js';
import { applyDecision, certificateAttempt, failLink, type Decision, type FetchJobContext } from './fetch-outcome.js';
import type { FetchDeps } from './fetch-processor.js';
import { isUnreachable, pauseDomainUntil, robotsRateLimitDecision, unreachableDecision, unreachableFailure } from './site-pause.js';

/*
 * Step 1 of the fetch worker's processor (fetch-processor.ts): whether this job may fetch at all. The link is
 * unfinished, not paused, under its attempt limit, allowed by robots.txt (read in a browser when only a browser can
 * read it), for a fetcher this fleet runs; and its arm was not refused since it was routed.
 */

/** Step 1: whether this job may fetch at all. Returns the job's result when it may not. */
export async function gateJob(deps: FetchDeps, known: ReadonlySet<string>, ctx: FetchJobContext): Promise<FetchJobResult | null> {
  const { link, fetcher } = ctx;
  if (link.status === LINK_STATUSES.done || link.status === LINK_STATUSES.failed) {
    return { outcome: 'skipped', fetcher, attempts: 0, skipReason: link.status === LINK_STATUSES.done ? SKIP_REASONS.linkDone : SKIP_REASONS.linkFailed };
  }
  // The reconciler gave the link a job of a newer generation: that one carries it now.
  if (link.generation > ctx.data.generation) return { outcome: 'skipped', fetcher, attempts: 0, skipReason: SKIP_REASONS.staleGeneration };
  const now = deps.clock.now();
  if (link.pausedUntil && link.pausedUntil.getTime() > now.getTime()) {
    deps.metrics.jobFinished(ctx.queue, 'delayed');
    return delayJob(ctx.job, ctx.token, link.pausedUntil.getTime() - now.getTime());
  }
  if (link.attemptCount >= deps.settings.maxAttempts) {
    return failLink(deps, ctx, { errorType: link.lastErrorType ?? ERROR_TYPES.internal, message: `max_attempts:${link.lastErrorType ?? 'unknown'}` });
  }
  let verdict;
  try {
    verdict = await deps.robots.check(ctx.data.url);
    // Only a browser can read this origin's robots.txt: a browser job reads it in its own context (past the wall, with
    // the wall's clearance kept for the page) before it asks for the page, and the fleet caches the answer.
    if (verdict.browser && fetcher !== FETCHERS.simpleHttp && deps.readRobotsInBrowser && deps.robots.checkInBrowser) {
      const read = deps.readRobotsInBrowser;
      verdict = await deps.robots.checkInBrowser(ctx.data.url, (origin) => read(fetcher, origin));
    }
  } catch (err) {
    // The URL itself is refused (SSRF guard, scheme), or the site's certificate is: the same answer for any request,
    // so the link fails with it.
    if (isUrlPolicyError(err)) return failLink(deps, ctx, { errorType: err.code, message: err.message });
    if (isCertificateError(err)) {
      // The handshake was a request for this link: it is its attempt (certificateAttempt).
      ctx.attempts.push(certificateAttempt(ctx.link, err, deps.clock.now(), ctx.urlHeuristics));
      return failLink(deps, ctx, { errorType: err.code, message: err.message });
    }
    // robots.txt could not be asked: every proxy of the tier is down. The site is not to blame; wait as a fetch would.
    if (isExitError(err)) return waitForExits(deps, ctx, `robots.txt could not be asked through any proxy (${err instanceof Error ? err.message : String(err)})`);
    throw err;
  }
  if (verdict.rateLimited) return pauseRateLimitedRobots(deps, known, ctx, { ...verdict, rateLimited: verdict.rateLimited });
  if (verdict.browser) {
    const switched = await robotsNeedBrowser(deps, known, ctx, { ...verdict, browser: verdict.browser });
    // null: no browser of the fleet can read it, and the wall's own answer holds no rules (robotsReadableWithoutBrowser).
    if (switched) return switched;
  } else if (isUnreachable(verdict)) return pauseUnreachableSite(deps, known, ctx, verdict);
  else if (!verdict.allowed) return failLink(deps, ctx, { errorType: ERROR_TYPES.robotsDisallowed, message: verdict.reason ?? 'disallowed by robots.txt' });
  if (!known.has(fetcher)) return failLink(deps, ctx, { errorType: ERROR_TYPES.unknownFetcher, message: `fetcher '${fetcher}' is not configured` });
  return null;
}

/**
 * The site refused this job's arm after the job was routed (another link's request, while this job waited behind the
 * site's pause): its own request would be refused the same way. Only a job that runs again after a politeness wait is
 * looked up (one Redis read; a refusal pauses the site, so the jobs routed with the refused one wait at its gate),
 * never a first run (the hot path) nor one carrying the router's stored probe (that page costs no request).
 */
export async function refusedSinceRouted(deps: FetchDeps, ctx: FetchJobContext): Promise<ArmBlock | null> {
  const created = ctx.job.timestamp;
  if (!deps.blockedArms || created === undefined || ctx.data.probe || (ctx.job.attemptsStarted ?? 0) <= 1) return null;
  const block = await deps.blockedArms.latest(ctx.domain, armKey({ fetcher: ctx.fetcher, tier: ctx.exitTier }));
  return block && block.atMs >= created ? block : null;
}

/**
 * The site cannot be read now (robots.txt unreachable, 5xx, 429): "not now", not "never". The link pauses with backoff
 * (not the domain: robots.txt is an origin's, see the router's decideUnreachable), is routed again afterwards; only the
 * MAX_ATTEMPTS-th check in a row fails it. No page was requested, so no attempt is logged.
 */
async function pauseUnreachableSite(deps: FetchDeps, known: ReadonlySet<string>, ctx: FetchJobContext, verdict: Parameters<typeof unreachableDecision>[0]): Promise<FetchJobResult> {
  const d = unreachableDecision(verdict, { riskLevel: ctx.link.riskLevel, now: deps.clock.now(), maxAttempts: deps.settings.maxAttempts, pauseMaxMs: deps.settings.pauseMaxMs, pause: deps.settings.pause });
  if (d.kind === 'fail') return failLink(deps, ctx, unreachableFailure(verdict, d.checks));
  ctx.log.warn({ domain: ctx.domain, pausedUntil: d.pausedUntil.toISOString(), errorType: ERROR_TYPES.siteUnreachable, reason: verdict.reason }, 'link paused: its site is unreachable');
  const decision: Decision = {
    kind: 'pause', success: false, isBanned: false, errorType: ERROR_TYPES.siteUnreachable, pauseMs: d.pauseMs, pausedUntil: d.pausedUntil, riskLevel: d.riskLevel,
    reason: verdict.reason ?? ERROR_TYPES.siteUnreachable,
  };
  return applyDecision(deps, known, ctx, decision, { response: null, errorType: ERROR_TYPES.siteUnreachable, durationMs: 0 });
}

/**
 * robots.txt can be read only by a browser, and this job's tool cannot (plain HTTP, or a browser the wall still stood
 * in front of): the link switches to the tool that can, whose fetch reads robots.txt before the page. No request was
 * made for the page, so no attempt is logged. With no such tool in the fleet the site waits as an unreachable one.
 */
async function robotsNeedBrowser(deps: FetchDeps, known: ReadonlySet<string>, ctx: FetchJobContext, verdict: RobotsVerdict & { browser: NonNullable<RobotsVerdict['browser']> }): Promise<FetchJobResult | null> {
  const next = robotsReaders(verdict.browser.fetcher, ctx.fetcher).find((c) => c !== ctx.fetcher && known.has(c));
  if (!next || !deps.readRobotsInBrowser) {
    if (ctx.fetcher === FETCHERS.simpleHttp && robotsReadableWithoutBrowser(verdict.browser)) return null;
    return pauseUnreachableSite(deps, known, ctx, { ...verdict, unreachable: { retryAtMs: verdict.browser.retryAtMs } });
  }
  ctx.log.info({ domain: ctx.domain, nextFetcher: next, reason: verdict.reason }, 'robots.txt needs a browser: link switched');
  const decision: Decision = {
    kind: 'switch_fetcher', success: false, isBanned: false, errorType: ERROR_TYPES.wrongTool, nextFetcher: next, riskLevel: ctx.link.riskLevel,
    reason: verdict.reason ?? 'robots.txt can be read only by a browser',
  };
  return applyDecision(deps, known, ctx, decision, { response: null, errorType: ERROR_TYPES.wrongTool, durationMs: 0 });
}

/** robots.txt answered 429: the domain and the link wait out its Retry-After (robotsRateLimitDecision); no attempt is logged. */
async function pauseRateLimitedRobots(deps: FetchDeps, known: ReadonlySet<string>, ctx: FetchJobContext, verdict: RobotsVerdict & { rateLimited: { retryAtMs: number } }): Promise<FetchJobResult> {
  const d = robotsRateLimitDecision(verdict, { riskLevel: ctx.link.riskLevel, now: deps.clock.now(), maxAttempts: deps.settings.maxAttempts, pauseMaxMs: deps.settings.pauseMaxMs, pause: deps.settings.pause });
  if (d.kind === 'fail') return failLink(deps, ctx, { errorType: d.errorType, message: d.message });
  await pauseDomainUntil(deps.gate, deps.clock, ctx.domain, d.pausedUntil, ERROR_TYPES.rateLimited);
  ctx.log.warn({ domain: ctx.domain, pausedUntil: d.pausedUntil.toISOString(), errorType: ERROR_TYPES.rateLimited }, 'domain paused: robots.txt rate-limited');
  const decision: Decision = { kind: 'pause', success: false, isBanned: false, errorType: ERROR_TYPES.rateLimited, pauseMs: d.pauseMs, pausedUntil: d.pausedUntil, riskLevel: d.riskLevel, reason: d.reason };
  return applyDecision(deps, known, ctx, decision, { response: null, errorType: ERROR_TYPES.rateLimited, durationMs: 0 });
}
