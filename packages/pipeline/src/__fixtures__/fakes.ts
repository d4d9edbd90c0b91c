import { randomUUID } from 'node:crypto';
import { ManualClock, noopMetrics, openGate, allowAllRobots, silentLogger, type BestFetcherResult } from '@crawler/core';
import type { FetchJobInput, RouteJobInput } from '@crawler/queue';
import type { FetchResult } from '@crawler/fetchers';
import type { LinkChange, LinkRecord, LinkRepo, NewLink } from '../ports.js';
import type { StoredProbe } from '../probe/probe-store.js';
import type { AppliedOutcome, AttemptRecord, FetcherLike, OutcomeSink, OutcomeWrite } from '../ports.js';
import type { JobHandle } from '../job-control.js';

/** An in-memory LinkRepo for processor unit tests. */
export class MemoryLinks implements LinkRepo {
  readonly rows = new Map<string, LinkRecord>();

  add(url: string, patch: Partial<LinkRecord> = {}): LinkRecord {
    const row: LinkRecord = {
      id: randomUUID(), url, initialUrl: url, domain: new URL(url).hostname, status: 'queued', pausedUntil: null, riskLevel: 0,
      attemptCount: 0, lastAttemptAt: null, learningModeEnabled: null, fetcher: null, selectionSource: null, lastErrorType: null, lastError: null, generation: 0,
      ...patch,
    };
    this.rows.set(row.id, row);
    return row;
  }

  async upsertMany(links: NewLink[]) {
    return links.map((l) => {
      const existing = [...this.rows.values()].find((r) => r.url === l.url);
      if (existing) return { ...existing, created: false };
      return { ...this.add(l.url, { initialUrl: l.initialUrl, domain: l.domain }), created: true };
    });
  }

  async get(id: string) {
    const r = this.rows.get(id);
    return r ? { ...r } : null;
  }

  async update(id: string, patch: LinkChange) {
    const r = this.rows.get(id);
    if (!r) return;
    const { attemptsMade, ...fields } = patch;
    Object.assign(r, Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)));
    if (attemptsMade) r.attemptCount += attemptsMade;
  }

  async updateUnlessFinished(id: string, patch: LinkChange) {
    const r = this.rows.get(id);
    if (!r || r.status === 'done' || r.status === 'failed') return false;
    await this.update(id, patch);
    return true;
  }

  async readRoutable(id: string, now: Date, generation: number) {
    const r = this.rows.get(id);
    if (!r || r.status === 'done' || r.status === 'failed' || (r.pausedUntil && r.pausedUntil.getTime() > now.getTime()) || r.generation > generation) return null;
    return { ...r };
  }

  async countAttempts(id: string, n: number, at: Date) {
    const r = this.rows.get(id)!;
    r.attemptCount += n;
    r.lastAttemptAt = at;
  }
}

/**
 * The outcome store's contract in memory, over MemoryLinks: the attempts are logged (always), the link change applies
 * only while the link is unfinished, and the page is stored only when it did.
 */
export class MemoryOutcomes implements OutcomeSink {
  readonly attempts: AttemptRecord[] = [];
  readonly pages: NonNullable<OutcomeWrite['page']>[] = [];
  readonly writes: OutcomeWrite[] = [];

  constructor(private readonly links: MemoryLinks) {}

  async apply(write: OutcomeWrite): Promise<AppliedOutcome> {
    this.writes.push(write);
    this.attempts.push(...write.attempts);
    const row = this.links.rows.get(write.linkId);
    const last = write.attempts.at(-1)?.attemptedAt;
    const unfinished = row !== undefined && row.status !== 'done' && row.status !== 'failed';
    if (row) {
      if (unfinished) Object.assign(row, Object.fromEntries(Object.entries(write.link).filter(([, v]) => v !== undefined)));
      row.attemptCount += write.attempts.length;
      if (last) row.lastAttemptAt = last;
    }
    if (unfinished && write.page) this.pages.push(write.page);
    return { linkUpdated: unfinished, status: row?.status ?? null, contentId: unfinished && write.page ? BigInt(this.pages.length) : null, visit: unfinished && write.page ? 'new' : null, attemptIds: write.attempts.map((_, i) => BigInt(this.attempts.length - write.attempts.length + i + 1)) };
  }
}

/** A job stub that records moveToDelayed. */
export function fakeJob(data: unknown, queueName?: string): JobHandle & { queueName?: string; delayedTo: number[] } {
  const delayedTo: number[] = [];
  return { id: 'job-1', data, queueName, delayedTo, moveToDelayed: async (ts: number) => void delayedTo.push(ts) };
}

/** A FetchResult with sensible defaults. */
export function response(url: string, over: Partial<FetchResult> & { html?: string } = {}): FetchResult {
  const text = over.html ?? over.text ?? null;
  const body = over.body ?? new TextEncoder().encode(text ?? '');
  return {
    fetcher: 'simple_http', url, finalUrl: url, status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, contentType: 'text/html',
    redirectChain: [], timings: { startedAt: 0, headersMs: 1, totalMs: 5 }, ...over, body, text,
  };
}

/** A long static article: clearly readable without JavaScript. */
export const STATIC_HTML = `<!doctype html><html><head><title>Static</title></head><body><article><h1>A static page</h1>${'<p>Plain server-rendered prose about crawling politely and learning which fetcher works for which site.</p>'.repeat(12)}</article></body></html>`;
/** A React-style shell with no text. */
export const SPA_HTML = '<!doctype html><html><head><title>App</title></head><body><div id="root"></div><script src="/static/js/main.js"></script></body></html>';
/** An empty but valid HTML page. */
export const EMPTY_HTML = '<!doctype html><html><head><title>x</title></head><body></body></html>';

/** Everything the processors need, as stubs that record what happened. */
export function makeHarness(opts: { best?: BestFetcherResult; route?: string | null } = {}) {
  const links = new MemoryLinks();
  const clock = new ManualClock(new Date('2026-01-01T00:00:00Z'));
  const fetchJobs: FetchJobInput[] = [];
  const routeJobs: Array<{ input: RouteJobInput; delayMs?: number }> = [];
  const outcomes = new MemoryOutcomes(links);
  const attempts = outcomes.attempts;
  const saved = outcomes.pages;
  const probes = new Map<string, StoredProbe>();
  const pausedDomains: Array<{ domain: string; untilMs: number }> = [];
  const fetchCalls: string[] = [];
  let fetchQueue: Array<FetchResult | Error> = [];
  const fetcher = (name: string): FetcherLike => ({
    name,
    close: async () => {},
    fetch: async ({ url }) => {
      fetchCalls.push(`${name} ${url}`);
      const next = fetchQueue.shift();
      if (!next) throw new Error('no scripted response');
      if (next instanceof Error) throw next;
      return { ...next, fetcher: name };
    },
  });
  return {
    links, clock, fetchJobs, routeJobs, attempts, saved, outcomes, probes, pausedDomains, fetchCalls,
    script(...r: Array<FetchResult | Error>) {
      fetchQueue = r;
    },
    common: {
      links,
      clock,
      logger: silentLogger,
      metrics: noopMetrics,
      robots: allowAllRobots,
      gate: { ...openGate, pauseDomainFor: async (domain: string, durationMs: number) => void pausedDomains.push({ domain, untilMs: clock.now().getTime() + durationMs }) },
      enqueueFetch: async (input: FetchJobInput) => {
        fetchJobs.push(input);
        return 'f';
      },
    },
    probeStore: {
      save: async (linkId: string, p: StoredProbe) => {
        probes.set(`probe:${linkId}`, p);
        return `probe:${linkId}`;
      },
      load: async (key: string) => probes.get(key) ?? null,
      delete: async (key: string) => void probes.delete(key),
    },
    learning: { findBestFetcher: async () => opts.best ?? { best: null, scores: [] } },
    routes: { fetcherFor: async () => opts.route ?? null },
    fetchers: { get: (name: string) => fetcher(name) },
    enqueueRoute: async (input: RouteJobInput, o: { delayMs?: number }) => {
      routeJobs.push({ input, delayMs: o.delayMs });
      return 'r';
    },
  };
}
