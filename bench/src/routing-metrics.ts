/**
 * Routing-quality figures from what the sites saw (their request logs are the ground truth: a page counts as got
 * when its site served it, whatever the crawler believed). Pure: the run hands in logs and its own page list.
 */
import { DAY_MS } from '@crawler/core';
import { IDEAL_FETCHER, type SiteKind, type SiteRequest } from '@crawler/sim-web';

/** One page the crawl asked for. */
export interface CrawledPage {
  domain: string;
  path: string;
  round: number;
}

/** A change of kind of one site, for the adaptation measure. */
export interface SiteChange {
  domain: string;
  name: string;
  from: SiteKind;
  to: SiteKind;
  atMs: number;
}

export interface AdaptationResult {
  site: string;
  change: string;
  /** Pages of the site asked for after the change before the first of an unbroken run of ideal pages; null: never. */
  pagesToAdapt: number | null;
  /** Simulated days from the change to that first ideal page; null: never. */
  daysToAdapt: number | null;
  pagesAfterChange: number;
}

export interface StrategyMetrics {
  pages: number;
  /** Pages their site served (ground truth). */
  served: number;
  successRate: number;
  /** Page requests the sites received, over pages served. */
  requestsPerPage: number;
  /** Page loads by a browser, over pages served. */
  browserLoadsPerPage: number;
  /** Requests refused by a site: sent while it was pausing us (429) or stopped at its bot wall. */
  blocks: number;
  /** The same three figures over the warm rounds only (round >= warmFromRound). */
  warm: { pages: number; served: number; requestsPerPage: number; browserLoadsPerPage: number; blocks: number };
  adaptation: AdaptationResult[];
}

/** Which client class the ideal fetcher of a kind is seen as. */
function idealClient(kind: SiteKind): 'plain' | 'browser' {
  return IDEAL_FETCHER[kind] === 'simple_http' ? 'plain' : 'browser';
}

const key = (domain: string, path: string) => `${domain} ${path}`;

/**
 * Figures of one strategy. `logs` are each site's request logs (by domain); `pages` every page asked for, in the
 * order asked. A page is "ideal" when it took one request, from the ideal fetcher's client class, and was served:
 * no probe, no wrong tool, no block.
 */
export function computeStrategyMetrics(input: {
  pages: readonly CrawledPage[];
  logs: ReadonlyMap<string, readonly SiteRequest[]>;
  changes: readonly SiteChange[];
  warmFromRound: number;
}): StrategyMetrics {
  const byPage = new Map<string, SiteRequest[]>();
  for (const [domain, log] of input.logs) {
    for (const r of log) {
      const k = key(domain, r.path);
      let list = byPage.get(k);
      if (!list) byPage.set(k, (list = []));
      list.push(r);
    }
  }
  const tally = (pages: readonly CrawledPage[]) => {
    let served = 0;
    let requests = 0;
    let browser = 0;
    let blocks = 0;
    for (const p of pages) {
      const reqs = byPage.get(key(p.domain, p.path)) ?? [];
      requests += reqs.length;
      browser += reqs.filter((r) => r.client === 'browser').length;
      blocks += reqs.filter((r) => r.outcome === 'rate_limited' || r.outcome === 'challenge').length;
      if (reqs.some((r) => r.outcome === 'served')) served += 1;
    }
    return { pages: pages.length, served, requestsPerPage: served ? requests / served : Number.POSITIVE_INFINITY, browserLoadsPerPage: served ? browser / served : 0, blocks };
  };
  const all = tally(input.pages);
  const warm = tally(input.pages.filter((p) => p.round >= input.warmFromRound));

  const adaptation: AdaptationResult[] = input.changes.map((c) => {
    const after = input.pages.filter((p) => p.domain === c.domain && (byPage.get(key(p.domain, p.path))?.[0]?.atMs ?? Number.POSITIVE_INFINITY) >= c.atMs);
    // Pages never requested at all (still waiting out a pause) are not ideal either; keep them in asked order.
    const asked = input.pages.filter((p) => p.domain === c.domain && !byPage.has(key(p.domain, p.path)));
    const ordered = [...after, ...asked.filter((p) => !after.includes(p))];
    const ideal = ordered.map((p) => {
      const reqs = byPage.get(key(p.domain, p.path)) ?? [];
      return reqs.length === 1 && reqs[0]!.outcome === 'served' && reqs[0]!.client === idealClient(c.to) && reqs[0]!.kind === c.to;
    });
    let firstOfRun: number | null = null;
    for (let i = ideal.length - 1; i >= 0 && ideal[i]; i--) firstOfRun = i;
    const at = firstOfRun === null ? null : byPage.get(key(ordered[firstOfRun]!.domain, ordered[firstOfRun]!.path))![0]!.atMs;
    return {
      site: c.name,
      change: `${c.from}→${c.to}`,
      pagesToAdapt: firstOfRun,
      daysToAdapt: at === null ? null : (at - c.atMs) / DAY_MS,
      pagesAfterChange: ordered.length,
    };
  });
  return { pages: all.pages, served: all.served, successRate: all.pages ? all.served / all.pages : 0, requestsPerPage: all.requestsPerPage, browserLoadsPerPage: all.browserLoadsPerPage, blocks: all.blocks, warm, adaptation };
}
