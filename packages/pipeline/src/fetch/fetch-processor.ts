import {
  ERROR_TYPES,
  LINK_STATUSES,
  SELECTION_SOURCES,
  canonicalFetcherName,
  decideOutcome,
  domainOf,
  errorTypeOf,
  extractUrlHeuristics,
  isUrlPolicyError,
  parseRetryAfterMs,
  safeResponseHeaders,
  type Clock,
  type Heuristic,
  type Logger,
  type PipelineMetrics,
  type PolitenessGate,
  type RobotsPolicy,
  type ValidationResult,
} from '@crawler/core';
import { FetchJobSchema, parseJobData, type FetchJob, type FetchJobInput, type FetchResult as FetchJobResult, type RouteJobInput } from '@crawler/queue';
import type { FetchResult } from '@crawler/fetchers';
import type { LinkPatch, LinkRecord, LinkRepo } from '../links/link-repo.js';
import type { AttemptRecord, ContentSink, FetcherSource } from '../ports.js';
import type { ProbeStore } from '../probe/probe-store.js';
import { delayJob, type JobHandle } from '../job-control.js';
import { analyzeResponse } from './response-analysis.js';
import type { LinkDiscovery } from '../crawls/crawl-frontier.js';

/** The fetch workers' settings (a slice of CrawlerConfig). */
export interface FetchSettings {
  /** Fetchers the fleet runs; a switch to another one fails the link instead of queueing a job nobody takes. */
  fetcherNames: string[];
  maxAttempts: number;
  pauseMaxMs: number;
  fetchTimeoutMs: number;
  fetchMaxBytes: number;
}

export interface FetchDeps {
  settings: FetchSettings;
  links: LinkRepo;
  enqueueFetch(input: FetchJobInput): Promise<string>;
  enqueueRoute(input: RouteJobInput, opts: { delayMs?: number }): Promise<string>;
  fetchers: FetcherSource;
  probeStore: Pick<ProbeStore, 'load' | 'delete'>;
  /** Buffered attempt log (AttemptBuffer.add). */
  recordAttempt(row: AttemptRecord): void;
  content: ContentSink;
  gate: PolitenessGate;
  robots: RobotsPolicy;
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
}

/** One try: a response or an error type, how long it took, and whether it cost a request. */
interface Try {
  response: FetchResult | null;
  errorType: string | null;
  errorMessage?: string;
  durationMs: number;
}

/**
 * The fetch worker's processor (document 003 phase_fetch): politeness, robots, the probe's body or a fetch,
 * validation, heuristics, the retry policy's decision (the four cases), an attempt row for every try, and the link's
 * next state. A politeness wait is a delayed job, not an attempt.
 */
export function createFetchProcessor(deps: FetchDeps) {
  const known = new Set(deps.settings.fetcherNames.map(canonicalFetcherName));

  return async function processFetch(job: JobHandle & { queueName?: string }, token?: string): Promise<FetchJobResult> {
    const queue = job.queueName ?? 'fetch';
    const data = parseJobData(FetchJobSchema, job.data, { queue, jobId: job.id });
    const fetcherName = canonicalFetcherName(data.fetcher);
    const log = deps.logger.child({ jobId: job.id, queue, linkId: data.linkId, url: data.url, fetcher: fetcherName });
    const link = await deps.links.get(data.linkId);
    const finish = (r: FetchJobResult): FetchJobResult => {
      deps.metrics.jobFinished(queue, r.outcome);
      return r;
    };
    if (!link) return finish({ outcome: 'skipped', fetcher: fetcherName, attempts: 0, errorType: 'link_missing' });
    if (link.status === LINK_STATUSES.done || link.status === LINK_STATUSES.failed) {
      return finish({ outcome: 'skipped', fetcher: fetcherName, attempts: 0 });
    }
    const now0 = deps.clock.now();
    if (link.pausedUntil && link.pausedUntil.getTime() > now0.getTime()) {
      deps.metrics.jobFinished(queue, 'delayed');
      return delayJob(job, token, link.pausedUntil.getTime() - now0.getTime());
    }
    if (link.attemptCount >= deps.settings.maxAttempts) {
      return finish(await failLink(deps, link, fetcherName, 0, link.lastErrorType ?? ERROR_TYPES.internal, `max_attempts:${link.lastErrorType ?? 'unknown'}`, data));
    }

    let verdict;
    try {
      verdict = await deps.robots.check(data.url);
    } catch (err) {
      // The URL itself is refused (SSRF guard, scheme): the same answer for any request, so the link fails with it.
      if (isUrlPolicyError(err)) return finish(await failLink(deps, link, fetcherName, 0, err.code, err.message, data));
      throw err;
    }
    if (!verdict.allowed) {
      return finish(await failLink(deps, link, fetcherName, 0, ERROR_TYPES.robotsDisallowed, verdict.reason ?? 'disallowed by robots.txt', data));
    }
    if (!known.has(fetcherName)) {
      return finish(await failLink(deps, link, fetcherName, 0, ERROR_TYPES.unknownFetcher, `fetcher '${fetcherName}' is not configured`, data));
    }

    const domain = domainOf(data.url);
    const preHeuristics = extractUrlHeuristics(data.url);
    const retried: { retryNow?: boolean; switchFetcher?: boolean } = {};
    let attempts = 0;
    let useProbe = data.probe !== undefined;
    // Attempts not yet added to the link's attempt_count: they ride on the link's next write (one statement, not two).
    let uncounted = 0;
    let lastAttemptAt = now0;
    const counted = (patch: LinkPatch): LinkPatch => {
      if (uncounted === 0) return patch;
      const out = { ...patch, attemptsMade: uncounted, lastAttemptAt };
      uncounted = 0;
      return out;
    };

    for (;;) {
      let attempt: Try;
      const stored = useProbe && data.probe ? await deps.probeStore.load(data.probe.key) : null;
      useProbe = false;
      if (stored) {
        // The router's probe already fetched this page with plain HTTP: reuse it, the page costs one request.
        attempt = {
          response: { fetcher: fetcherName, url: data.url, finalUrl: stored.finalUrl, status: stored.status, headers: stored.headers, body: stored.body, contentType: stored.contentType, text: stored.text, redirectChain: [], timings: { startedAt: now0.getTime(), headersMs: null, totalMs: 0 } },
          errorType: null,
          durationMs: 0,
        };
        log.debug('probe body reused');
      } else {
        const gate = await deps.gate.acquire(domain);
        if (!gate.granted) {
          if (gate.reason === 'paused') {
            // The domain is paused (a block on another of its pages): this link waits the pause out too, visibly.
            await deps.links.updateUnlessFinished(link.id, counted({ status: LINK_STATUSES.paused, pausedUntil: new Date(deps.clock.now().getTime() + gate.retryInMs) }));
          } else if (uncounted > 0) {
            await deps.links.countAttempts(link.id, uncounted, lastAttemptAt);
            uncounted = 0;
          }
          deps.metrics.jobFinished(queue, 'delayed');
          log.debug({ retryInMs: gate.retryInMs, reason: gate.reason }, 'politeness: fetch delayed');
          return delayJob(job, token, gate.retryInMs);
        }
        try {
          attempt = await tryFetch(deps, fetcherName, data.url);
        } finally {
          await gate.permit.release();
        }
      }

      const now = deps.clock.now();
      let validation: ValidationResult | null = null;
      let postHeuristics: Heuristic[] = [];
      if (attempt.response) ({ validation, heuristics: postHeuristics } = analyzeResponse(attempt.response));
      const retryAfterMs = parseRetryAfterMs(attempt.response?.headers['retry-after'], now);
      attempts += 1;
      const decision = decideOutcome({
        errorType: attempt.errorType,
        validation,
        status: attempt.response?.status,
        fetcher: fetcherName,
        attemptCount: link.attemptCount + attempts,
        riskLevel: link.riskLevel,
        retriedThisJob: retried,
        retryAfterMs,
        now,
        maxAttempts: deps.settings.maxAttempts,
        maxPauseMs: deps.settings.pauseMaxMs,
      });
      deps.recordAttempt({
        linkId: link.id,
        url: data.url,
        fetcher: fetcherName,
        success: decision.success,
        isBanned: decision.isBanned,
        errorType: decision.errorType,
        httpStatus: attempt.response?.status ?? null,
        responseHeaders: attempt.response ? safeResponseHeaders(attempt.response.headers) : null,
        durationMs: Math.round(attempt.durationMs),
        attemptedAt: now,
        selectionSource: attempts > 1 ? SELECTION_SOURCES.retry : data.selectionSource,
        heuristics: [...preHeuristics, ...postHeuristics],
      });
      uncounted += 1;
      lastAttemptAt = now;
      deps.metrics.fetchObserved(fetcherName, attempt.durationMs, decision.errorType ?? 'success');
      log.info({ kind: decision.kind, errorType: decision.errorType, status: attempt.response?.status, reason: decision.reason }, 'attempt');

      switch (decision.kind) {
        case 'success': {
          const res = attempt.response!;
          const page = { linkId: link.id, body: res.body, contentType: res.contentType, httpStatus: res.status, finalUrl: res.finalUrl, fetcher: fetcherName, headers: res.headers };
          try {
            // A failure here fails the job like a failed write: it is retried, and the frontier's dedup makes the
            // links it already admitted duplicates on the second pass.
            if (link.crawlId && deps.discovery) await deps.discovery.discover({ link, finalUrl: res.finalUrl, contentType: res.contentType, httpStatus: res.status, text: res.text });
            if (deps.content.saveAndComplete) {
              // The page and the link's new state in one statement (once per page: the hot path).
              await deps.content.saveAndComplete(page, { attemptsMade: uncounted, lastAttemptAt });
              uncounted = 0;
            } else {
              await deps.content.save(page);
              await deps.links.update(link.id, counted({ status: LINK_STATUSES.done, riskLevel: 0, pausedUntil: null, fetcher: fetcherName, lastErrorType: null, lastError: null }));
            }
          } catch (err) {
            // The job will be retried: its attempts still count towards the link's limit.
            if (uncounted > 0) await deps.links.countAttempts(link.id, uncounted, lastAttemptAt).catch(() => {});
            throw err;
          }
          if (data.probe) await deps.probeStore.delete(data.probe.key).catch(() => {});
          return finish({ outcome: 'done', fetcher: fetcherName, attempts, httpStatus: res.status });
        }
        case 'retry_now':
          retried.retryNow = true;
          continue;
        case 'switch_fetcher': {
          const next = decision.nextFetcher ? canonicalFetcherName(decision.nextFetcher) : null;
          if (!next || !known.has(next)) {
            const why = `${decision.reason}: ${next ?? 'no fetcher'} to switch to is not configured`;
            return finish(await failLink(deps, link, fetcherName, attempts, decision.errorType ?? ERROR_TYPES.wrongTool, why, data, undefined, counted({})));
          }
          await deps.links.updateUnlessFinished(link.id, counted({ status: LINK_STATUSES.fetching, fetcher: next, selectionSource: SELECTION_SOURCES.retry, lastErrorType: decision.errorType }));
          await deps.enqueueFetch({ linkId: link.id, url: data.url, fetcher: next, selectionSource: SELECTION_SOURCES.retry, generation: data.generation, attemptsBefore: link.attemptCount + attempts, retryOf: { fetcher: fetcherName, errorType: decision.errorType ?? ERROR_TYPES.wrongTool } });
          if (data.probe) await deps.probeStore.delete(data.probe.key).catch(() => {});
          return finish({ outcome: 'switched', fetcher: fetcherName, attempts, errorType: decision.errorType ?? undefined, httpStatus: attempt.response?.status });
        }
        case 'pause': {
          const pausedUntil = decision.pausedUntil ?? new Date(now.getTime() + (decision.pauseMs ?? 0));
          await deps.links.updateUnlessFinished(link.id, counted({ status: LINK_STATUSES.paused, pausedUntil, riskLevel: decision.riskLevel, lastErrorType: decision.errorType, lastError: decision.reason }));
          if (decision.isBanned) {
            // The whole site pushed back, not just this page: the fleet stops asking it until the pause ends.
            await deps.gate.pauseDomain(domain, pausedUntil.getTime(), decision.errorType ?? 'blocked');
            deps.metrics.ban(domain);
          }
          deps.metrics.pause(domain, decision.errorType ?? 'unknown');
          // The re-route carries the policy's escalation and the refused fetcher: asking the learned store again would
          // hand back the fetcher the site just blocked (measured: bot walls re-challenged every round, bench README-routing).
          // A rate limit names the same fetcher (pace, not the tool), which is not a refused one.
          const next = decision.nextFetcher ? canonicalFetcherName(decision.nextFetcher) : null;
          const escalation = next ? { nextFetcher: next, ...(next !== fetcherName ? { blockedFetcher: fetcherName } : {}) } : {};
          await deps.enqueueRoute({ linkId: link.id, url: data.url, generation: data.generation + 1, reason: 'resume', ...escalation }, { delayMs: pausedUntil.getTime() - now.getTime() });
          if (data.probe) await deps.probeStore.delete(data.probe.key).catch(() => {});
          return finish({ outcome: 'paused', fetcher: fetcherName, attempts, errorType: decision.errorType ?? undefined, httpStatus: attempt.response?.status, pausedUntil: pausedUntil.toISOString() });
        }
        case 'fail':
          return finish(await failLink(deps, link, fetcherName, attempts, decision.errorType ?? ERROR_TYPES.internal, decision.reason, data, attempt.response?.status, counted({})));
      }
    }
  };
}

async function tryFetch(deps: FetchDeps, fetcherName: string, url: string): Promise<Try> {
  const started = performance.now();
  try {
    const fetcher = deps.fetchers.get(fetcherName);
    const response = await fetcher.fetch({ url, timeoutMs: deps.settings.fetchTimeoutMs, maxBytes: deps.settings.fetchMaxBytes, signal: deps.signal });
    return { response, errorType: null, durationMs: response.timings?.totalMs ?? performance.now() - started };
  } catch (err) {
    return { response: null, errorType: errorTypeOf(err), errorMessage: err instanceof Error ? err.message : String(err), durationMs: performance.now() - started };
  }
}

async function failLink(
  deps: FetchDeps,
  link: LinkRecord,
  fetcher: string,
  attempts: number,
  errorType: string,
  message: string,
  data: FetchJob,
  httpStatus?: number,
  /** Pending changes to write with the failure (uncounted attempts). */
  extra: LinkPatch = {},
): Promise<FetchJobResult> {
  await deps.links.updateUnlessFinished(link.id, { ...extra, status: LINK_STATUSES.failed, lastErrorType: errorType, lastError: message });
  if (data.probe) await deps.probeStore.delete(data.probe.key).catch(() => {});
  deps.logger.child({ linkId: link.id, url: link.url, fetcher }).warn({ errorType }, `link failed: ${message}`);
  return { outcome: 'failed', fetcher, attempts, errorType, httpStatus };
}

