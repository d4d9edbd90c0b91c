import { DIRECT_TIER, ERROR_TYPES, FETCHERS, errorTypeOf, maskProxyUrl, redactCredentials } from '@crawler/core';
import type { FetchResult as FetchJobResult } from '@crawler/queue';
import { exitFailureScope, type FetchExit } from '@crawler/fetchers';
import { EXIT_ROTATIONS_PER_TIER } from '../exits/exit-pool.js';
import { delayJob } from '../job-control.js';
import { failLink, recordExitWait, type Decision, type FetchJobContext } from './fetch-outcome.js';
import type { FetchDeps, Try, Wait } from './fetch-processor.js';

/*
 * The fetch worker's requests (fetch-processor.ts, step 2): one fetch through the job's exit tier (PROXY_TIERS), over
 * the tier's proxies until one carries it, the session a block retires, and the wait for a tier with none up.
 */

/**
 * No proxy of the job's tier could carry the request (all down, or all refused the site). The job waits and tries
 * again, each wait twice the last (from PROXY_UNHEALTHY_MS, capped at PAUSE_MAX_MS), and the link says why meanwhile;
 * the MAX_ATTEMPTS-th time in a row the link fails with proxy_unavailable and what the proxies said: a tier whose
 * proxies never come back must not hold its links (and a crawl waiting for them) for ever.
 */
export async function waitForExits(deps: FetchDeps, ctx: FetchJobContext, detail: string): Promise<FetchJobResult> {
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
 * One request through the job's exit tier. A proxy that fails (refused, 407, timed out) is marked down fleet-wide and
 * the request goes out through the tier's next URL: no attempt is logged for it, so it is neither the fetcher's
 * failure nor the site's block. With every URL of the tier down, the job waits (PROXY_UNHEALTHY_MS) like a politeness
 * wait; its permit is released meanwhile.
 */
export async function fetchThroughExit(deps: FetchDeps, ctx: FetchJobContext, headers?: Record<string, string>): Promise<Try | Wait> {
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
export async function retireBlockedSession(deps: FetchDeps, ctx: FetchJobContext, decision: Decision): Promise<void> {
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
