import {
  DIRECT_TIER,
  ERROR_TYPES,
  FETCHERS,
  LINK_STATUSES,
  SKIP_REASONS,
  SELECTION_SOURCES,
  canonicalFetcherName,
  decideOutcome,
  domainOf,
  errorTypeOf,
  extractUrlHeuristics,
  maskProxyUrl,
  isExitError,
  isCertificateError,
  isUrlPolicyError,
  lazyChild,
  redactCredentials,
  retryAfterMsOf,
  safeResponseHeaders,
  type Clock,
  type ErrorCode,
  type Heuristic,
  type ExitTier,
  type Logger,
  type PipelineMetrics,
  type PolitenessGate,
  type RobotsPolicy,
  type RobotsRead,
  type RobotsVerdict,
  robotsReadableWithoutBrowser,
  robotsReaders,
  wallPauseMs,
  wallVerdict,
} from '@crawler/core';
import { FetchJobSchema, parseJobData, type FetchResult as FetchJobResult, type FetchJobInput, type RouteJobInput } from '@crawler/queue';
import { exitFailureScope, type ExitFailureScope, type FetchExit, type FetchResult } from '@crawler/fetchers';
import { EXIT_ROTATIONS_PER_TIER, type ExitPool } from '../exits/exit-pool.js';
import type { SessionJars } from '../exits/session-jars.js';
import type { LinkRecord, LinkRepo, OutcomeLinkChange } from '../ports.js';
import type { FetcherSource, OutcomeSink, RevisitSource } from '../ports.js';
import type { ProbeStore } from '../probe/probe-store.js';
import { delayJob, type JobHandle } from '../job-control.js';
import { analysisInputOf } from './response-analysis.js';
import { inProcessAnalyzer, type ResponseAnalyzer } from './analysis-pool.js';
import type { LinkDiscovery } from '../crawls/crawl-frontier.js';
import type { DomainSetbacks } from '../router/decision-cache.js';
import { applyDecision, certificateAttempt, climbAfterRefusal, failLink, hasStrongerTool, recordExitWait, recordRefusal, recordWait, type Decision, type FetchJobContext } from './fetch-outcome.js';
import type { WallStreaks } from './wall-streaks.js';
import type { ArmBlock, BlockedArms } from './blocked-arms.js';
import { armKey } from '../router/arm-choice.js';
import { conditionalHeaders, notModifiedDecision } from './conditional.js';
import { isUnreachable, pauseDomainUntil, robotsRateLimitDecision, unreachableDecision, unreachableFailure, type PauseSettings } from './site-pause.js';

/** The fetch workers' settings (a slice of CrawlerConfig). */
export interface FetchSettings {
  /** Fetchers the fleet runs; a switch to another one fails the link instead of queueing a job nobody takes. */
  fetcherNames: string[];
  maxAttempts: number;
  pauseMaxMs: number;
  /** Pause bases and the Retry-After floor. @defaultValue core's */
  pause?: PauseSettings;
  fetchTimeoutMs: number;
  fetchMaxBytes: number;
  /** Exit tiers, cheapest first (config.exitTiers): a block climbs their ladder. @defaultValue direct only */
  exitTiers?: readonly ExitTier[];
  /** How long a job waits when every proxy of its tier is down (PROXY_UNHEALTHY_MS). @defaultValue 60000 */
  proxyUnhealthyMs?: number;
  /**
   * How long links wait on a site whose wall refused the fleet's strongest tool before they fail (WALL_MAX_WAIT_MS).
   * @defaultValue core DEFAULT_WALL_MAX_WAIT_MS (6 h)
   */
  wallMaxWaitMs?: number;
}

export interface FetchDeps {
  settings: FetchSettings;
  links: Pick<LinkRepo, 'get'>;
  enqueueFetch(input: FetchJobInput): Promise<string>;
  enqueueRoute(input: RouteJobInput, opts: { delayMs?: number }): Promise<string>;
  fetchers: FetcherSource;
  probeStore: Pick<ProbeStore, 'load' | 'delete'>;
  /** Where a job's outcome is written: its attempts, the link's new state and the page, at once. */
  outcomes: OutcomeSink;
  gate: PolitenessGate;
  robots: RobotsPolicy;
  /**
   * Read `${origin}/robots.txt` with a browser fetcher of this worker (create-runtime readRobots): used when plain
   * HTTP could not read it (RobotsVerdict.browser). Absent: such a site waits as an unreachable one does.
   */
  readRobotsInBrowser?(fetcher: string, origin: string): Promise<RobotsRead>;
  clock: Clock;
  logger: Logger;
  metrics: PipelineMetrics;
  /** Aborted on shutdown so in-flight fetches end promptly. */
  signal?: AbortSignal;
  /**
   * Link-following: a page of a crawl hands its links to the crawl's frontier before the page is marked done, so a
   * crawl is never seen done while its last page's links are still on their way in. Absent: no link is followed.
   */
  discovery?: LinkDiscovery;
  /** Told of every attempt that switched the fetcher or paused the link, so the router stops reusing its decision. */
  setbacks?: Pick<DomainSetbacks, 'record'>;
  /**
   * The link's stored page, for revisits: plain HTTP sends `If-None-Match` / `If-Modified-Since` from it, and a 304
   * confirms it. Absent: every fetch is unconditional.
   */
  revisits?: RevisitSource;
  /** The exits of the configured tiers and their fleet-wide health. Absent: every request leaves direct. */
  exits?: ExitPool;
  /** Plain HTTP's cookie jars per exit session and site. Absent: plain HTTP through a proxy sends no cookies. */
  jars?: SessionJars;
  /** The fleet's memory of the arms sites refused (blocked-arms.ts). Absent: a job routed before a refusal still makes its request. */
  blockedArms?: Pick<BlockedArms, 'record' | 'latest'>;
  /** Where responses are validated and their heuristics taken (ANALYSIS_THREADS). Absent: on the event loop. */
  analyzer?: Pick<ResponseAnalyzer, 'analyze' | 'warm'>;
  /**
   * The fleet's count of each site's refusals in a row (wall-streaks.ts): the site's pause backs off by it, and links
   * of a wall no tool passes fail after WALL_MAX_WAIT_MS. Absent: a site pauses by the refused link's risk level, and
   * its links wait for as long as the wall stands.
   */
  wallStreaks?: Pick<WallStreaks, 'note' | 'read' | 'clear'>;
}

/**
 * A fetch job as the processor takes it: a BullMQ job, or the router's own for an inline fetch, which hands over the
 * link as it read it a moment ago (`link`, not read again).
 */
export type FetchJobHandle = JobHandle & { queueName?: string; link?: LinkRecord; pendingLink?: PendingLinkWrite };

/**
 * A change to the job's link decided before the job ran and not written yet (an inline fetch's routing decision): the
 * job's first write of the link carries it, then sets `change` to null, so the caller knows it is written.
 */
export interface PendingLinkWrite {
  change: OutcomeLinkChange | null;
}

/** What the caller of the fetch processor is told as the job goes. */
export interface FetchHooks {
  /**
   * The job's request is done (its politeness permit given back, the decision taken): called once, before the
   * outcome is written, so a fetch slot can go to the next request meanwhile. Not called for a job that ends before a
   * decision (skipped, parked for politeness).
   */
  onRequestDone?(): void;
}

/** One request (or the probe's stored response): a response or an error type, and how long it took. */
export interface Try {
  response: FetchResult | null;
  errorType: ErrorCode | null;
  /** Without a response: the fetch error's message (what the network or the browser said), for the attempt and the link. */
  error?: string;
  /** A proxy_unavailable's reach: the proxy as a whole, or only this target (the proxy refused to carry it). */
  exitScope?: ExitFailureScope;
  durationMs: number;
  /** The response's text fingerprint, set by its analysis: stored with the page, it tells a change from new markup. */
  textSha256?: string | null;
}

/** The politeness gate said not now: the job waits `retryInMs` (a paused domain pauses the link too). */
interface Wait {
  wait: true;
  retryInMs: number;
  reason: string;
  /** For a wait on the exits: what the last proxy tried said, or that none was up. */
  detail?: string;
}

/**
 * The fetch worker's processor, in the order a reader follows it:
 * 1. **gate**: the link is unfinished, not paused, under its attempt limit, allowed by robots.txt, for a fetcher
 *    this fleet runs (otherwise the job ends here);
 * 2. **fetch or reuse the probe**: the router's stored probe body when there is one, else a request through the
 *    politeness gate (a politeness wait is a delayed job, not an attempt);
 * 3. **analyse**: validation and response heuristics;
 * 4. **decide**: the retry policy (core decideOutcome); `retry_now` goes back to 2 once;
 * 5. **apply**: one atomic write of the attempts, the link's next state and the page, then the queue side effects
 *    (fetch-outcome.ts).
 */
export function createFetchProcessor(deps: FetchDeps) {
  const known = new Set(deps.settings.fetcherNames.map(canonicalFetcherName));

  return async function processFetch(job: FetchJobHandle, token?: string, hooks: FetchHooks = {}): Promise<FetchJobResult> {
    const opened = await openJob(deps, job, token);
    if (!('link' in opened)) return finish(deps, job.queueName ?? 'fetch', opened);
    const ctx = opened;
    const refused = await gateJob(deps, known, ctx);
    if (refused) return finish(deps, ctx.queue, refused);
    const block = await refusedSinceRouted(deps, ctx);
    if (block) return finish(deps, ctx.queue, await climbAfterRefusal(deps, ctx, block));

    let useProbe = ctx.data.probe !== undefined;
    for (;;) {
      const got = await fetchOrReuseProbe(deps, known, ctx, useProbe);
      useProbe = false;
      if ('wait' in got) {
        if (got.reason !== ERROR_TYPES.proxyUnavailable) return waitForPoliteness(deps, ctx, got);
        return finish(deps, ctx.queue, await waitForExits(deps, ctx, got.detail ?? `no proxy of exit tier '${ctx.exitTier}' is up`));
      }
      const { attempt, decision } = got;
      if (decision.kind !== 'retry_now') {
        hooks.onRequestDone?.();
        return finish(deps, ctx.queue, await applyDecision(deps, known, ctx, decision, attempt));
      }
      ctx.retried.retryNow = true;
    }
  };
}

function finish(deps: FetchDeps, queue: string, r: FetchJobResult): FetchJobResult {
  deps.metrics.jobFinished(queue, r.outcome);
  return r;
}

/** Parse the payload and load the link; a missing link ends the job. */
async function openJob(deps: FetchDeps, job: FetchJobHandle, token: string | undefined): Promise<FetchJobContext | FetchJobResult> {
  const queue = job.queueName ?? 'fetch';
  const data = parseJobData(FetchJobSchema, job.data, { queue, jobId: job.id });
  const fetcher = canonicalFetcherName(data.fetcher);
  const link = job.link?.id === data.linkId ? job.link : await deps.links.get(data.linkId);
  if (!link) return { outcome: 'skipped', fetcher, attempts: 0, skipReason: SKIP_REASONS.linkMissing };
  return {
    job, token, queue, data, fetcher, link,
    ...(job.pendingLink ? { pendingLink: job.pendingLink } : {}),
    exitTier: data.exitTier ?? DIRECT_TIER,
    log: lazyChild(deps.logger, { jobId: job.id, queue, linkId: data.linkId, url: data.url, fetcher, ...(data.exitTier ? { exitTier: data.exitTier } : {}) }),
    domain: domainOf(data.url),
    urlHeuristics: extractUrlHeuristics(data.url),
    attempts: [],
    // Attempts logged since this job was made were this job's own: it made one, was told to retry at once and met a
    // politeness wait. That immediate retry is spent; a failure now backs off, as it would have without the wait.
    retried: link.attemptCount > data.attemptsBefore ? { retryNow: true } : {},
  };
}

/** Step 1: whether this job may fetch at all. Returns the job's result when it may not. */
async function gateJob(deps: FetchDeps, known: ReadonlySet<string>, ctx: FetchJobContext): Promise<FetchJobResult | null> {
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
async function refusedSinceRouted(deps: FetchDeps, ctx: FetchJobContext): Promise<ArmBlock | null> {
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

/**
 * Steps 2 to 4: the router's probe response when it stored one (the page costs one request), else a fetch through the
 * gate; then its analysis and decision. A fetch is decided while its politeness permit is still held, and a site that
 * pushed back (block or rate limit) has the fleet's domain pause written before the permit goes: otherwise the next
 * permit can be granted in between and a request lands inside the site's Retry-After.
 */
async function fetchOrReuseProbe(deps: FetchDeps, known: ReadonlySet<string>, ctx: FetchJobContext, useProbe: boolean): Promise<{ attempt: Try; decision: Decision } | Wait> {
  const stored = useProbe && ctx.data.probe ? await deps.probeStore.load(ctx.data.probe.key) : null;
  if (stored) {
    ctx.log.debug('probe body reused');
    const response: FetchResult = {
      fetcher: ctx.fetcher, url: ctx.data.url, finalUrl: stored.finalUrl, status: stored.status, headers: stored.headers, body: stored.body,
      contentType: stored.contentType, text: stored.text, redirectChain: [], timings: { startedAt: deps.clock.now().getTime(), headersMs: null, totalMs: 0 },
      // The page's links are encoded in the encoding it was read in, whichever request read it.
      ...(stored.charset ? { charset: stored.charset } : {}), ...(stored.documentCharset ? { documentCharset: stored.documentCharset } : {}),
    };
    const attempt: Try = { response, errorType: null, durationMs: 0 };
    // The proxy the probe left through carried this page: the attempt names it, and a block retires it for the site.
    if (stored.exit && deps.exits) ctx.exitUsed = deps.exits.byId(stored.exit.tier, stored.exit.id);
    const decided = await analyseAndDecide(deps, ctx, attempt);
    await retireBlockedSession(deps, ctx, decided);
    const decision = await pauseDomainOnPushback(deps, known, ctx, decided);
    return { attempt, decision };
  }
  // Read before the politeness permit is taken: a permit is held only for the request itself.
  const conditional = await conditionalHeaders(deps, ctx);
  // Queued: a denied job is parked until its turn among the domain's waiting jobs, so a big site's backlog comes back
  // one job per request, not all of it at every free start.
  const gate = await deps.gate.acquire(ctx.domain, { queued: true });
  if (!gate.granted) return { wait: true, retryInMs: gate.retryInMs, reason: gate.reason };
  try {
    const attempt = await fetchThroughExit(deps, ctx, conditional);
    if ('wait' in attempt) return attempt;
    const decided = await analyseAndDecide(deps, ctx, attempt);
    await retireBlockedSession(deps, ctx, decided);
    const decision = await pauseDomainOnPushback(deps, known, ctx, decided);
    await recordRefusal(deps, known, ctx, decided);
    return { attempt, decision };
  } finally {
    await gate.permit.release();
  }
}

/**
 * The whole site pushed back (a block or a rate limit), not just this page: the fleet stops asking it until the pause
 * ends. A block (not a rate limit, which names its own pace) counts in the site's streak: the site's pause backs off by
 * the streak, so new links (each at risk 0) do not keep it at the first step; and once the wall has refused the
 * strongest tool for WALL_MAX_WAIT_MS the link fails with the wall's error instead of pausing (core wallVerdict).
 */
async function pauseDomainOnPushback(deps: FetchDeps, known: ReadonlySet<string>, ctx: FetchJobContext, decision: Decision): Promise<Decision> {
  if (decision.kind !== 'pause' || !decision.isBanned || !decision.pausedUntil) return decision;
  let until = decision.pausedUntil;
  let decided = decision;
  if (deps.wallStreaks && decision.errorType !== ERROR_TYPES.rateLimited) {
    const now = deps.clock.now().getTime();
    const streak = await deps.wallStreaks.note(ctx.domain, {
      atMs: now, sentAtMs: now - Math.max(0, ctx.attempts.at(-1)?.durationMs ?? 0), errorType: decision.errorType ?? ERROR_TYPES.blockedCaptcha, reason: decision.reason, fetcher: armKey({ fetcher: ctx.fetcher, tier: ctx.exitTier }), top: !hasStrongerTool(deps, known, ctx, decision),
    });
    if (streak) {
      const siteMs = wallPauseMs(streak.refusals, decision.errorType ?? ERROR_TYPES.blockedCaptcha, { ...deps.settings.pause, maxPauseMs: deps.settings.pauseMaxMs });
      if (now + siteMs > until.getTime()) until = new Date(now + siteMs);
      const verdict = wallVerdict(streak, now, deps.settings.wallMaxWaitMs);
      if (verdict?.kind === 'fail') decided = { ...decision, kind: 'fail', reason: verdict.message };
    }
  }
  await pauseDomainUntil(deps.gate, deps.clock, ctx.domain, until, decision.errorType ?? 'blocked');
  ctx.log.warn({ domain: ctx.domain, pausedUntil: until.toISOString(), errorType: decision.errorType, status: ctx.attempts.at(-1)?.httpStatus, reason: decision.reason }, 'domain paused');
  // The link resumes with its site: at its own pause it would only meet the site's and be parked again.
  if (decided.kind === 'pause' && until.getTime() > decision.pausedUntil.getTime()) {
    decided = { ...decided, pausedUntil: until, pauseMs: until.getTime() - deps.clock.now().getTime() };
  }
  return decided;
}

/**
 * No proxy of the job's tier could carry the request (all down, or all refused the site). The job waits and tries
 * again, each wait twice the last (from PROXY_UNHEALTHY_MS, capped at PAUSE_MAX_MS), and the link says why meanwhile;
 * the MAX_ATTEMPTS-th time in a row the link fails with proxy_unavailable and what the proxies said: a tier whose
 * proxies never come back must not hold its links (and a crawl waiting for them) for ever.
 */
async function waitForExits(deps: FetchDeps, ctx: FetchJobContext, detail: string): Promise<FetchJobResult> {
  const waits = (ctx.data.exitWaits ?? 0) + 1;
  const message = redactCredentials(`${detail}; tried ${waits} time${waits === 1 ? '' : 's'} in a row`);
  if (waits >= deps.settings.maxAttempts) {
    return failLink(deps, ctx, { errorType: ERROR_TYPES.proxyUnavailable, message: `${message}; not retried (re-post the link once the tier's proxies work)` });
  }
  await recordExitWait(deps, ctx, message);
  await ctx.job.updateData?.({ ...(ctx.job.data as object), exitWaits: waits });
  const base = deps.settings.proxyUnhealthyMs ?? 60_000;
  const delayMs = Math.min(base * 2 ** (waits - 1), Math.max(base, deps.settings.pauseMaxMs));
  deps.metrics.jobFinished(ctx.queue, 'delayed');
  ctx.log.warn({ exitTier: ctx.exitTier, waits, retryInMs: delayMs }, `no exit: ${message}`);
  return delayJob(ctx.job, ctx.token, delayMs);
}

/**
 * A politeness wait: the attempts made so far (and a domain pause) are written, then the job is parked. A link of a
 * site whose wall refused the fleet's strongest tool waits no longer than WALL_MAX_WAIT_MS after that refusal, then
 * fails with the wall's error (core wallVerdict); the site's pause goes on protecting the crawler's address.
 */
async function waitForPoliteness(deps: FetchDeps, ctx: FetchJobContext, wait: Wait): Promise<FetchJobResult> {
  if (wait.reason === 'paused' && deps.wallStreaks) {
    const now = deps.clock.now().getTime();
    const verdict = wallVerdict(await deps.wallStreaks.read(ctx.domain), now, deps.settings.wallMaxWaitMs);
    if (verdict?.kind === 'fail') return finish(deps, ctx.queue, await failLink(deps, ctx, { errorType: verdict.errorType, message: verdict.message }));
    if (verdict) wait = { ...wait, retryInMs: Math.max(1, Math.min(wait.retryInMs, verdict.untilMs - now)) };
  }
  await recordWait(deps, ctx, wait.reason === 'paused' ? new Date(deps.clock.now().getTime() + wait.retryInMs) : null);
  // The job runs again: it keeps that its waits for the exits were broken by a request (only then is it written).
  if (ctx.data.exitWaits === 0 && (ctx.job.data as { exitWaits?: number }).exitWaits) await ctx.job.updateData?.({ ...(ctx.job.data as object), exitWaits: 0 });
  deps.metrics.jobFinished(ctx.queue, 'delayed');
  ctx.log.debug({ retryInMs: wait.retryInMs, reason: wait.reason }, 'politeness: fetch delayed');
  return delayJob(ctx.job, ctx.token, wait.retryInMs);
}

/**
 * What a browser met on its way to the page, for the attempt log: `challenge_passed` (the vendor of the first
 * challenge, the wall plain HTTP meets, or `unknown`) when a wall's script let the page through. The final page alone does not show it, and a domain whose pages come back
 * only after a wait is one whose plain-HTTP failures have a reason. A wall that did not clear shows in the page's own
 * heuristics (`has_captcha`, `block_vendor`).
 */
function encounterHeuristics(res: FetchResult | null | undefined): Heuristic[] {
  return res?.challenge?.cleared ? [{ type: 'challenge_passed', value: res.challenge.firstVendor ?? 'unknown' }] : [];
}

/** Steps 3 and 4: validate the response, take the policy's decision, and keep the attempt row for the apply step. */
async function analyseAndDecide(deps: FetchDeps, ctx: FetchJobContext, attempt: Try): Promise<Decision> {
  // A 304 to our conditional request has no body to validate: the stored page is still the page.
  const notModified = notModifiedDecision(ctx, attempt);
  const { validation, heuristics, textSha256 } = attempt.response && !notModified
    ? await (deps.analyzer ?? inProcessAnalyzer).analyze(analysisInputOf(attempt.response))
    : { validation: null, heuristics: [], textSha256: null };
  attempt.textSha256 = textSha256;
  const now = deps.clock.now();
  const decision = notModified ?? decideOutcome({
    errorType: attempt.errorType,
    validation,
    status: attempt.response?.status,
    fetcher: ctx.fetcher,
    attemptCount: ctx.link.attemptCount + ctx.attempts.length + 1,
    riskLevel: ctx.link.riskLevel,
    retriedThisJob: ctx.retried,
    retryAfterMs: retryAfterMsOf(attempt.response?.headers, now),
    now,
    maxAttempts: deps.settings.maxAttempts,
    maxPauseMs: deps.settings.pauseMaxMs,
    pause: deps.settings.pause,
  });
  ctx.attempts.push({
    linkId: ctx.link.id,
    url: ctx.data.url,
    fetcher: ctx.fetcher,
    success: decision.success,
    isBanned: decision.isBanned,
    errorType: decision.errorType,
    ...(attempt.error ? { errorMessage: attempt.error } : {}),
    httpStatus: attempt.response?.status ?? null,
    responseHeaders: attempt.response ? safeResponseHeaders(attempt.response.headers) : null,
    durationMs: Math.round(attempt.durationMs),
    attemptedAt: now,
    selectionSource: ctx.attempts.length > 0 || ctx.retried.retryNow ? SELECTION_SOURCES.retry : ctx.data.selectionSource,
    exitTier: ctx.exitTier,
    // Which proxy of the tier carried it, masked: `crawl stats` counts per proxy from the log.
    ...(ctx.exitTier !== DIRECT_TIER && ctx.exitUsed?.proxyUrl ? { exitProxy: maskProxyUrl(ctx.exitUsed.proxyUrl) } : {}),
    heuristics: [...ctx.urlHeuristics, ...heuristics, ...encounterHeuristics(attempt.response)],
  });
  deps.metrics.fetchObserved(ctx.fetcher, attempt.durationMs, decision.errorType ?? 'success');
  const tierCost = deps.exits?.tiers.find((t) => t.name === ctx.exitTier)?.cost ?? 0;
  deps.metrics.exitObserved?.(ctx.exitTier, {
    bytes: attempt.response?.body.byteLength ?? 0,
    blocked: decision.isBanned && decision.errorType !== ERROR_TYPES.rateLimited,
    cost: tierCost,
    ...(ctx.exitUsed?.proxyUrl ? { proxy: maskProxyUrl(ctx.exitUsed.proxyUrl) } : {}),
  });
  // The tool the router chose did not do (wrong tool, block, rate limit): its cached choice for the domain goes.
  if (decision.kind === 'switch_fetcher' || decision.kind === 'pause' || decision.isBanned) deps.setbacks?.record(ctx.domain);
  ctx.log.info({ kind: decision.kind, errorType: decision.errorType, status: attempt.response?.status, reason: decision.reason }, 'attempt');
  return decision;
}

/**
 * One request through the job's exit tier. A proxy that fails (refused, 407, timed out) is marked down fleet-wide and
 * the request goes out through the tier's next URL: no attempt is logged for it, so it is neither the fetcher's
 * failure nor the site's block. With every URL of the tier down, the job waits (PROXY_UNHEALTHY_MS) like a politeness
 * wait; its permit is released meanwhile.
 */
async function fetchThroughExit(deps: FetchDeps, ctx: FetchJobContext, headers?: Record<string, string>): Promise<Try | Wait> {
  // PROXY_DIRECT=false: nothing leaves from the worker's own address; a job without a tier takes the cheapest one.
  if (deps.exits && ctx.exitTier === DIRECT_TIER && !deps.exits.has(DIRECT_TIER)) ctx.exitTier = deps.exits.tiers[0]?.name ?? DIRECT_TIER;
  if (!deps.exits || ctx.exitTier === DIRECT_TIER) return tryFetch(deps, ctx.fetcher, ctx.data.url, headers);
  if (!deps.exits.has(ctx.exitTier)) {
    // A tier this worker does not know (configurations out of step across the fleet): the request takes this
    // worker's cheapest tier, where a block climbs its own ladder, rather than the link waiting for a tier that never comes.
    const cheapest = deps.exits.tiers[0]?.name ?? DIRECT_TIER;
    ctx.log.warn({ exitTier: ctx.exitTier, instead: cheapest }, 'exit tier not configured here: leaving from the cheapest tier');
    ctx.exitTier = cheapest;
    if (cheapest === DIRECT_TIER) return tryFetch(deps, ctx.fetcher, ctx.data.url, headers);
  }
  const tried = new Set<string>();
  // What each proxy said: a wrong password on one (407) must show even when another failed after it.
  const failures: string[] = [];
  for (;;) {
    const exit = await deps.exits.pick(ctx.exitTier, tried, ctx.domain);
    ctx.exitUsed = exit;
    if (!exit) {
      deps.metrics.exitObserved?.(ctx.exitTier, { unavailable: true });
      const detail = tried.size > 0 ? `every proxy of exit tier '${ctx.exitTier}' failed (${failures.join('; ')})` : `every proxy of exit tier '${ctx.exitTier}' is down`;
      return { wait: true, retryInMs: deps.settings.proxyUnhealthyMs ?? 60_000, reason: ERROR_TYPES.proxyUnavailable, detail };
    }
    // Plain HTTP through a session sends what the site set through that session before (the browsers keep a context
    // per site and exit for the same reason).
    const jar = deps.jars && exit.proxyUrl && ctx.fetcher === FETCHERS.simpleHttp ? await deps.jars.cookieHeader(ctx.domain, exit.proxyUrl, ctx.data.url) : undefined;
    const attempt = await tryFetch(deps, ctx.fetcher, ctx.data.url, jar ? { cookie: jar, ...headers } : headers, exit);
    if (deps.jars && exit.proxyUrl && ctx.fetcher === FETCHERS.simpleHttp && attempt.response) await deps.jars.remember(ctx.domain, exit.proxyUrl, attempt.response.headers['set-cookie'], attempt.response.finalUrl);
    if (attempt.errorType !== ERROR_TYPES.proxyUnavailable || !exit.proxyUrl) {
      // A proxy of the tier carried the request: the job's waits for its tier are no longer in a row.
      if (ctx.data.exitWaits) ctx.data = { ...ctx.data, exitWaits: 0 };
      return attempt;
    }
    tried.add(exit.proxyUrl);
    failures.push(redactCredentials(attempt.error ?? ERROR_TYPES.proxyUnavailable));
    deps.metrics.exitObserved?.(ctx.exitTier, { proxyFailed: true, proxy: maskProxyUrl(exit.proxyUrl) });
    // A proxy that refused only this site is left out for the site (as a session the site refused), not for the fleet.
    if (attempt.exitScope === 'target') await deps.exits.retireSession(ctx.domain, exit.proxyUrl, 'the proxy refused the site');
    else await deps.exits.markUnhealthy(exit.proxyUrl, failures.at(-1)!);
  }
}

/**
 * The site refused the exit session this request used (a block, not a rate limit): the session is retired for the
 * site, fleet-wide, so the next request there leaves as another identity (another URL of the tier, or a new sticky
 * session) while other sites keep using it.
 */
async function retireBlockedSession(deps: FetchDeps, ctx: FetchJobContext, decision: Decision): Promise<void> {
  const proxyUrl = ctx.exitUsed?.proxyUrl;
  if (!deps.exits || !proxyUrl || !decision.isBanned || decision.errorType === ERROR_TYPES.rateLimited) return;
  await deps.exits.retireSession(ctx.domain, proxyUrl);
  await deps.jars?.forget(ctx.domain, proxyUrl);
  if (decision.kind !== 'pause') return;
  // A site that bans one address of a pool serves its others: the tier is refused only once a second exit is.
  const refusedExits = await deps.exits.noteBlock(ctx.domain, ctx.exitTier);
  ctx.rotateExit = refusedExits <= EXIT_ROTATIONS_PER_TIER && (await deps.exits.hasOtherExit(ctx.exitTier, ctx.domain, proxyUrl));
  if (ctx.rotateExit) ctx.log.info({ proxy: maskProxyUrl(proxyUrl), exitTier: ctx.exitTier }, "the site refused this exit: the link stays on the tier and leaves through another of its exits");
}

async function tryFetch(deps: FetchDeps, fetcherName: string, url: string, headers?: Record<string, string>, exit?: FetchExit): Promise<Try> {
  const started = performance.now();
  try {
    const fetcher = deps.fetchers.get(fetcherName);
    const response = await fetcher.fetch({ url, timeoutMs: deps.settings.fetchTimeoutMs, maxBytes: deps.settings.fetchMaxBytes, signal: deps.signal, ...(headers ? { headers } : {}), ...(exit ? { exit } : {}) });
    return { response, errorType: null, durationMs: response.timings?.totalMs ?? performance.now() - started };
  } catch (err) {
    const errorType = errorTypeOf(err);
    return {
      response: null, errorType, error: err instanceof Error ? err.message : String(err), durationMs: performance.now() - started,
      ...(errorType === ERROR_TYPES.proxyUnavailable ? { exitScope: exitFailureScope(err) } : {}),
    };
  }
}
