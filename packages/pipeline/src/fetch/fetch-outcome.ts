import { ERROR_TYPES, FETCHERS, LINK_STATUSES, extractUrlHeuristics, SELECTION_SOURCES, canonicalFetcherName, fetchersAbove, redactCredentials, type Heuristic, type Logger, type decideOutcome } from '@crawler/core';
import type { FetchJob, FetchResult as FetchJobResult } from '@crawler/queue';
import type { FetchExit } from '@crawler/fetchers';
import type { AppliedOutcome, AttemptRecord, LinkRecord, OutcomeWrite } from '../ports.js';
import type { JobHandle } from '../job-control.js';
import type { RevisitValidators } from '@crawler/db';
import { isNotModified, revisitedPageText } from './conditional.js';
import type { FetchDeps, PendingLinkWrite, Try } from './fetch-processor.js';
import { domainPauseReason } from './site-pause.js';
import { armKey, escalatedArm, hasProxiedTiers } from '../router/arm-choice.js';
import type { ArmBlock } from './blocked-arms.js';

/** The longest `last_error` a decision writes: the reason and the error's message, not a page of stack. */
const LAST_ERROR_MAX = 600;

/** The retry policy's decision for one attempt. */
export type Decision = ReturnType<typeof decideOutcome>;

/** One fetch job as its steps see it. */
export interface FetchJobContext {
  job: JobHandle;
  token: string | undefined;
  queue: string;
  data: FetchJob;
  /** Canonical name of the job's fetcher. */
  fetcher: string;
  /** The exit tier the job's requests leave from (FetchJob.exitTier, `direct` when none). */
  exitTier: string;
  /** The exit (proxy URL of the tier) the job's latest request used; unset for direct. */
  exitUsed?: FetchExit | null;
  /** The site refused the exit, not yet its tier: the link stays on the arm and leaves through another exit. */
  rotateExit?: boolean;
  /** The link as read when the job started. */
  link: LinkRecord;
  /** The router's decision on the link, not written yet: the job's first write carries it (FetchJobHandle.pendingLink). */
  pendingLink?: PendingLinkWrite;
  log: Logger;
  domain: string;
  urlHeuristics: Heuristic[];
  /** Attempts this job made, written with its outcome (never before it: the log and the link move together). */
  attempts: AttemptRecord[];
  /** What the retry policy already spent in this job. */
  retried: { retryNow?: boolean; switchFetcher?: boolean };
  /** The validators this job's plain-HTTP request carried (a revisit of a page that had them), once looked up. */
  conditional?: RevisitValidators | null;
}

/** Why a link fails, for {@link failLink}. */
export interface FailLinkOptions {
  /** Stable error code recorded as the link's last_error_type. */
  errorType: string;
  /** Human-readable reason recorded as the link's last_error. */
  message: string;
  /** The response status that made the link fail, when there was one. */
  httpStatus?: number;
}

/**
 * One write of this job's outcome: its attempts, `link` and (on success) the page. A routing decision still pending
 * (an inline fetch's) goes in the same statement, under the outcome's own change.
 */
async function write(deps: FetchDeps, ctx: FetchJobContext, link: OutcomeWrite['link'], page?: OutcomeWrite['page'], notModified?: OutcomeWrite['notModified']): Promise<AppliedOutcome> {
  const pending = ctx.pendingLink?.change;
  const applied = await deps.outcomes.apply({ linkId: ctx.link.id, attempts: ctx.attempts, link: pending ? { ...pending, ...link } : link, page, ...(notModified ? { notModified } : {}) });
  if (ctx.pendingLink) ctx.pendingLink.change = null;
  return applied;
}

/**
 * Step 5, apply: write the decision's outcome in one statement, then the side effects that live in Redis (the next
 * job, a domain pause, the probe body's deletion). A crash between the two leaves the link in Postgres saying what
 * should happen next; the reconciler re-creates the missing job.
 */
export async function applyDecision(deps: FetchDeps, known: ReadonlySet<string>, ctx: FetchJobContext, decision: Decision, attempt: Try): Promise<FetchJobResult> {
  const { fetcher, data } = ctx;
  const attempts = ctx.attempts.length;
  const httpStatus = attempt.response?.status;
  const errorType = decision.errorType ?? undefined;
  // A failure without a response says what happened in words too: `max_attempts:network_error: UND_ERR_SOCKET: …`.
  // Any credentials a message quotes (a proxy URL's) are masked: GET /links/:id shows it. A server error names its
  // status (`http_error: HTTP 502`), which its error type alone does not.
  const reason = attempt.error && !attempt.response
    ? redactCredentials(`${decision.reason}: ${attempt.error}`).slice(0, LAST_ERROR_MAX)
    : decision.errorType === ERROR_TYPES.httpError && httpStatus !== undefined ? `${decision.reason}: HTTP ${httpStatus}` : decision.reason;
  switch (decision.kind) {
    case 'success': {
      const res = attempt.response!;
      // The site served a page: its streak of refusals is over (the next block starts a new one).
      await deps.wallStreaks?.clear(ctx.domain);
      const done = { status: LINK_STATUSES.done, riskLevel: 0, pausedUntil: null, fetcher, lastErrorType: null, lastError: null } as const;
      if (isNotModified(ctx, attempt)) {
        // The stored page is still the page: its links are followed again for this crawl (a new crawl of a site
        // crawled before needs them), and the visit is logged without a body.
        if (ctx.link.crawlId && deps.discovery) {
          const stored = await revisitedPageText(deps, ctx);
          if (stored) await deps.discovery.discover({ link: ctx.link, ...stored });
        }
        await write(deps, ctx, done, undefined, { fetcher, httpStatus: res.status, finalUrl: res.finalUrl, headers: res.headers });
        await dropProbe(deps, ctx);
        return { outcome: 'done', fetcher, attempts, httpStatus: res.status };
      }
      // A failure here fails the job like a failed write: it is retried, and the frontier's dedup makes the links it
      // already admitted duplicates on the second pass.
      // Links' queries are encoded in the document's encoding: a browser's, whose text is its UTF-8 DOM, is handed on apart.
      const documentCharset = res.documentCharset ?? res.charset;
      if (ctx.link.crawlId && deps.discovery) {
        const { offScope } = await deps.discovery.discover({ link: ctx.link, finalUrl: res.finalUrl, contentType: res.contentType, httpStatus: res.status, text: res.text, headers: res.headers, ...(documentCharset === undefined ? {} : { charset: documentCharset }) });
        // Found by the crawl, landed on another site: not the crawl's page to keep. The fetch worked (its attempt says
        // so) and the link is settled, not failed (a login link answering with the SSO's page is no failure of the
        // crawl); it says where it went, and no page is stored.
        if (offScope !== null) {
          const lastError = `redirected to ${offScope}, outside the crawl's scope: not stored, its links not followed`;
          await write(deps, ctx, { ...done, lastErrorType: ERROR_TYPES.redirectedOffScope, lastError });
          await dropProbe(deps, ctx);
          ctx.log.info({ finalUrl: offScope }, 'redirected off the crawl\'s scope: not stored');
          return { outcome: 'done', fetcher, attempts, httpStatus: res.status };
        }
      }
      await write(deps, ctx, done, {
        linkId: ctx.link.id, body: res.body, contentType: res.contentType, httpStatus: res.status, finalUrl: res.finalUrl, fetcher, headers: res.headers,
        textSha256: attempt.textSha256 ?? null,
      });
      await dropProbe(deps, ctx);
      return { outcome: 'done', fetcher, attempts, httpStatus: res.status };
    }
    case 'switch_fetcher': {
      const next = decision.nextFetcher ? canonicalFetcherName(decision.nextFetcher) : null;
      if (!next || !known.has(next)) {
        const message = `${decision.reason}: ${next ?? 'no fetcher'} to switch to is not configured`;
        return failLink(deps, ctx, { errorType: decision.errorType ?? ERROR_TYPES.wrongTool, message, httpStatus });
      }
      const applied = await write(deps, ctx, { status: LINK_STATUSES.fetching, fetcher: next, selectionSource: SELECTION_SOURCES.retry, lastErrorType: decision.errorType });
      if (applied.linkUpdated) {
        await deps.enqueueFetch({
          // The other tool leaves from the same exit: the address was not what failed.
          linkId: ctx.link.id, url: data.url, fetcher: next, ...(ctx.exitTier !== 'direct' ? { exitTier: ctx.exitTier } : {}), selectionSource: SELECTION_SOURCES.retry, generation: data.generation,
          attemptsBefore: ctx.link.attemptCount + attempts, retryOf: { fetcher, errorType: decision.errorType ?? ERROR_TYPES.wrongTool }, priority: data.priority,
        });
      }
      await dropProbe(deps, ctx);
      return { outcome: 'switched', fetcher, attempts, errorType, httpStatus };
    }
    case 'pause': {
      const now = deps.clock.now();
      const pausedUntil = decision.pausedUntil ?? new Date(now.getTime() + (decision.pauseMs ?? 0));
      const generation = Math.max(data.generation, ctx.link.generation) + 1;
      const applied = await write(deps, ctx, {
        status: LINK_STATUSES.paused, pausedUntil, riskLevel: decision.riskLevel, lastErrorType: decision.errorType, lastError: reason, generation,
      });
      // The fleet's domain pause for a site that pushed back was written when the attempt was decided (fetch-processor).
      if (decision.isBanned) deps.metrics.ban(ctx.domain);
      deps.metrics.pause(ctx.domain, decision.errorType ?? 'unknown');
      if (applied.linkUpdated) {
        // The re-route carries the policy's escalation and the refused fetcher: asking the learned store again would
        // hand back the fetcher the site just blocked. A rate limit names the same fetcher (pace, not the tool),
        // which is not a refused one.
        await deps.enqueueRoute({ linkId: ctx.link.id, url: data.url, generation, reason: 'resume', priority: data.priority, ...escalationOf(deps, known, ctx, decision) }, { delayMs: pausedUntil.getTime() - now.getTime() });
      }
      await dropProbe(deps, ctx);
      return { outcome: 'paused', fetcher, attempts, errorType, httpStatus, pausedUntil: pausedUntil.toISOString() };
    }
    case 'fail':
      return failLink(deps, ctx, { errorType: decision.errorType ?? ERROR_TYPES.internal, message: reason, httpStatus });
    case 'retry_now':
      throw new Error('retry_now is handled by the fetch loop, not applied');
  }
}

/**
 * A refusal (a block, not a pace): the jobs the fleet already routed to this arm of the site climb the same way without
 * a request (blocked-arms.ts). Written while the refused request's permit is held, so the next job let through finds it.
 */
export async function recordRefusal(deps: FetchDeps, known: ReadonlySet<string>, ctx: FetchJobContext, decision: Decision): Promise<void> {
  if (!deps.blockedArms || decision.kind !== 'pause' || !decision.isBanned || decision.errorType === ERROR_TYPES.rateLimited) return;
  // The site refused one exit, not the arm: the jobs routed to the arm leave through the tier's other exits.
  if (ctx.rotateExit) return;
  await deps.blockedArms.record(ctx.domain, armKey({ fetcher: ctx.fetcher, tier: ctx.exitTier }), {
    atMs: Date.now(), errorType: decision.errorType ?? 'blocked', reason: decision.reason, ...escalationOf(deps, known, ctx, decision),
  });
}

/**
 * Whether the fleet has a tool left to send after this refusal: the next arm of the exit ladder or the retry policy's
 * next tool when the fleet runs it, else a stronger browser it runs (the router picks it for a link that avoids the
 * refused one). False: the wall refused the top of this fleet's ladder.
 */
export function hasStrongerTool(deps: FetchDeps, known: ReadonlySet<string>, ctx: FetchJobContext, decision: Decision): boolean {
  const next = escalationOf(deps, known, ctx, decision).nextFetcher;
  if (next && known.has(canonicalFetcherName(next.split('@')[0]!))) return true;
  if (hasProxiedTiers({ known, confidenceThreshold: 1, exitTiers: deps.settings.exitTiers })) return false;
  // A refused tool with a stronger one in the fleet (core FETCHER_LADDER) has not exhausted the ladder.
  return fetchersAbove(ctx.fetcher, known).length > 0;
}

/** The re-route of a paused link: the exit ladder's next arm with proxied tiers, else the retry policy's next tool. */
function escalationOf(deps: FetchDeps, known: ReadonlySet<string>, ctx: FetchJobContext, decision: Decision): { nextFetcher?: string; blockedFetcher?: string } {
  const next = decision.nextFetcher ? canonicalFetcherName(decision.nextFetcher) : null;
  return exitEscalation(deps, known, ctx, decision) ?? (next ? { nextFetcher: next, ...(next !== ctx.fetcher ? { blockedFetcher: ctx.fetcher } : {}) } : {});
}

/**
 * The site refused this job's arm after the job was routed (`block`, another link's refusal): the link climbs as that
 * one did — paused while the site's pause lasts, then routed with the same escalation — and no request is made, so
 * no attempt is logged and the site's pause does not grow.
 */
export async function climbAfterRefusal(deps: FetchDeps, ctx: FetchJobContext, block: ArmBlock): Promise<FetchJobResult> {
  const now = deps.clock.now();
  const untilMs = await deps.gate.domainPausedUntil(ctx.domain);
  const pausedUntil = untilMs !== null && untilMs > now.getTime() ? new Date(untilMs) : null;
  const generation = Math.max(ctx.data.generation, ctx.link.generation) + 1;
  const arm = armKey({ fetcher: ctx.fetcher, tier: ctx.exitTier });
  const lastError = `${block.reason}: the site refused ${arm} after this link was routed to it; climbing without a request`;
  const applied = await write(deps, ctx, pausedUntil
    ? { status: LINK_STATUSES.paused, pausedUntil, lastErrorType: block.errorType, lastError, generation }
    : { status: LINK_STATUSES.queued, lastErrorType: block.errorType, lastError, generation });
  if (applied.linkUpdated) {
    const escalation = { ...(block.nextFetcher ? { nextFetcher: block.nextFetcher } : {}), ...(block.blockedFetcher ? { blockedFetcher: block.blockedFetcher } : {}) };
    await deps.enqueueRoute({ linkId: ctx.link.id, url: ctx.data.url, generation, reason: 'resume', priority: ctx.data.priority, ...escalation }, { delayMs: pausedUntil ? pausedUntil.getTime() - now.getTime() : 0 });
  }
  // (A job carrying a stored probe never gets here: its page costs no request.)
  ctx.log.info({ arm, errorType: block.errorType, nextFetcher: block.nextFetcher, pausedUntil: pausedUntil?.toISOString() }, 'arm refused by the site since this link was routed: climbing without a request');
  return pausedUntil
    ? { outcome: 'paused', fetcher: ctx.fetcher, attempts: 0, errorType: block.errorType, pausedUntil: pausedUntil.toISOString() }
    : { outcome: 'switched', fetcher: ctx.fetcher, attempts: 0, errorType: block.errorType };
}

/**
 * With proxied tiers, the re-route of a paused link names arms: a rate limit resumes on the same arm (pace, not
 * another exit); a block of one exit of a tier with others left stays on the arm (another exit takes it); any other
 * block climbs the exit ladder (plain HTTP up the tiers, then the browsers) and names the refused arm.
 * Null without proxied tiers or for other pauses: the retry policy's tool escalation stands.
 */
function exitEscalation(deps: FetchDeps, known: ReadonlySet<string>, ctx: FetchJobContext, decision: Decision): { nextFetcher?: string; blockedFetcher?: string } | null {
  const settings = { known, confidenceThreshold: 1, exitTiers: deps.settings.exitTiers };
  if (!hasProxiedTiers(settings)) return null;
  const arm = { fetcher: ctx.fetcher, tier: ctx.exitTier };
  if (decision.errorType === ERROR_TYPES.rateLimited) return { nextFetcher: armKey(arm) };
  if (!decision.isBanned) return null;
  // The first exit of a proxied tier a site refuses is that address's ban: another exit of the tier before a dearer one.
  if (ctx.rotateExit) return { nextFetcher: armKey(arm) };
  const next = escalatedArm(settings, arm);
  return next ? { nextFetcher: armKey(next), blockedFetcher: armKey(arm) } : { blockedFetcher: armKey(arm) };
}

/**
 * The attempt a link's refused certificate is: robots.txt is read before the page, over the same TLS handshake, so
 * when the origin's certificate is refused there the page's request is never sent, yet a request left for the site on
 * the link's behalf (a refused certificate is not cached: each link makes its own). It is logged as plain HTTP's (the
 * reader of robots.txt) with the page's URL heuristics, so the attempt log and the link's attempt count show it.
 */
export function certificateAttempt(link: Pick<LinkRecord, 'id' | 'url'>, err: { code: string; message: string }, at: Date, heuristics: readonly Heuristic[] = extractUrlHeuristics(link.url)): AttemptRecord {
  return {
    linkId: link.id, url: link.url, fetcher: FETCHERS.simpleHttp, success: false, isBanned: false, errorType: err.code,
    // Says which request it was: the page itself was never asked for.
    errorMessage: `${err.message} (the handshake of robots.txt of ${new URL(link.url).origin}, read before the page)`, httpStatus: null, responseHeaders: null, durationMs: null, attemptedAt: at, heuristics,
  };
}

/** Fail the link (with this job's attempts) and say so in the log. */
export async function failLink(deps: FetchDeps, ctx: FetchJobContext, opts: FailLinkOptions): Promise<FetchJobResult> {
  await write(deps, ctx, { status: LINK_STATUSES.failed, lastErrorType: opts.errorType, lastError: opts.message });
  await dropProbe(deps, ctx);
  ctx.log.warn({ errorType: opts.errorType }, `link failed: ${opts.message}`);
  return { outcome: 'failed', fetcher: ctx.fetcher, attempts: ctx.attempts.length, errorType: opts.errorType, httpStatus: opts.httpStatus };
}

/**
 * Before a politeness wait: the attempts made so far are written (a retry that hit the gate), and when the domain is
 * paused the link shows it (`paused` until then). Nothing to write otherwise.
 */
export async function recordWait(deps: FetchDeps, ctx: FetchJobContext, pausedUntil: Date | null): Promise<void> {
  if (ctx.attempts.length === 0 && !pausedUntil) return;
  await write(deps, ctx, pausedUntil ? { status: LINK_STATUSES.paused, pausedUntil, ...(await domainPauseReason(deps.gate, ctx.domain)) } : {});
  // Written: the job's next run starts from the link as it is now, not from these attempts again.
  ctx.link = { ...ctx.link, attemptCount: ctx.link.attemptCount + ctx.attempts.length };
  ctx.attempts = [];
}

/**
 * Before a wait for the exits: the attempts made so far are written, and the link says why it waits (its status
 * unchanged: the job still carries it).
 */
export async function recordExitWait(deps: FetchDeps, ctx: FetchJobContext, message: string): Promise<void> {
  await write(deps, ctx, { lastErrorType: ERROR_TYPES.proxyUnavailable, lastError: message.slice(0, LAST_ERROR_MAX) });
  ctx.link = { ...ctx.link, attemptCount: ctx.link.attemptCount + ctx.attempts.length };
  ctx.attempts = [];
}

/** The probe body served its purpose (or never will): a leftover only costs Redis memory until its TTL, so log and go on. */
async function dropProbe(deps: FetchDeps, ctx: FetchJobContext): Promise<void> {
  if (!ctx.data.probe) return;
  await deps.probeStore.delete(ctx.data.probe.key).catch((err: unknown) => ctx.log.warn({ err, key: ctx.data.probe?.key }, 'could not delete the probe body'));
}
