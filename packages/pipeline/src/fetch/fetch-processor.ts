import {
  DIRECT_TIER,
  ERROR_TYPES,
  SKIP_REASONS,
  SELECTION_SOURCES,
  canonicalFetcherName,
  decideOutcome,
  domainOf,
  extractUrlHeuristics,
  maskProxyUrl,
  lazyChild,
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
  wallPauseMs,
  wallVerdict,
} from '@crawler/core';
import { FetchJobSchema, parseJobData, type FetchResult as FetchJobResult, type FetchJobInput, type RouteJobInput } from '@crawler/queue';
import type { ExitFailureScope, FetchResult } from '@crawler/fetchers';
import type { ExitPool } from '../exits/exit-pool.js';
import type { SessionJars } from '../exits/session-jars.js';
import type { LinkRecord, LinkRepo, OutcomeLinkChange } from '../ports.js';
import type { FetcherSource, OutcomeSink, RevisitSource } from '../ports.js';
import type { ProbeStore } from '../probe/probe-store.js';
import { delayJob, type JobHandle } from '../job-control.js';
import { analysisInputOf } from './response-analysis.js';
import { fetchThroughExit, retireBlockedSession, waitForExits } from './fetch-exits.js';
import { gateJob, refusedSinceRouted } from './fetch-gate.js';
import { inProcessAnalyzer, type ResponseAnalyzer } from './analysis-pool.js';
import type { LinkDiscovery } from '../crawls/crawl-frontier.js';
import type { DomainSetbacks } from '../router/decision-cache.js';
import { applyDecision, climbAfterRefusal, failLink, hasStrongerTool, recordRefusal, recordWait, type Decision, type FetchJobContext } from './fetch-outcome.js';
import type { WallStreaks } from './wall-streaks.js';
import type { BlockedArms } from './blocked-arms.js';
import { armKey } from '../router/arm-choice.js';
import { conditionalHeaders, notModifiedDecision } from './conditional.js';
import { pauseDomainUntil, type PauseSettings } from './site-pause.js';

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
export interface Wait {
  wait: true;
  retryInMs: number;
  reason: string;
  /** For a wait on the exits: what the last proxy tried said, or that none was up. */
  detail?: string;
}

/**
 * The fetch worker's processor, in the order a reader follows it:
 * 1. **gate**: the link is unfinished, not paused, under its attempt limit, allowed by robots.txt, for a fetcher
 *    this fleet runs (otherwise the job ends here; fetch-gate.ts);
 * 2. **fetch or reuse the probe**: the router's stored probe body when there is one, else a request through the
 *    politeness gate and the job's exit tier (fetch-exits.ts; a politeness wait is a delayed job, not an attempt);
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
