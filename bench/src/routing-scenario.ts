/**
 * The routing-quality benchmark's simulated web: which sites exist, what kind each is, when some change kind, and
 * what a perfect hand-written route table says at any moment. Fixed, not random, so every strategy of a run and
 * every run see the same web.
 */
import { DAY_MS } from '@crawler/core';
import { IDEAL_FETCHER, type KindChange, type SiteKind, type SiteSpec } from '@crawler/sim-web';

/** Shape of a scenario; the defaults are the published run. */
export interface RoutingScenarioOptions {
  /** Simulated epoch ms of day 0. */
  startMs: number;
  /** Rounds crawled; each round is `daysPerRound` simulated days. @defaultValue 6 */
  rounds?: number;
  /** @defaultValue 8 */
  daysPerRound?: number;
  /** New pages per domain per round. @defaultValue 1 */
  pagesPerRound?: number;
  /** Multiplies the number of sites of each kind (1 → 50 domains). @defaultValue 1 */
  scale?: number;
}

export interface ScenarioSite {
  spec: SiteSpec;
  /** Changes of kind by simulated time, for the oracle and the adaptation measure. */
  changes: Array<{ kind: SiteKind; atMs: number }>;
}

export interface RoutingScenario {
  startMs: number;
  rounds: number;
  daysPerRound: number;
  pagesPerRound: number;
  sites: ScenarioSite[];
}

/**
 * 50 domains at scale 1: 18 static, 8 JavaScript-rendered, 6 bot-walled, 8 rate-limiting, 10 file hosts; a
 * browser is needed for 14 of them (28%), as in a web where most pages are still server-rendered. Part-way, 5 static
 * sites put up a bot wall (at 40% of the run) and 4 SPAs move to server rendering (at 55%); 2 other SPAs rate-limit.
 */
export function buildRoutingScenario(opts: RoutingScenarioOptions): RoutingScenario {
  // 6 rounds of 8 days (48 days: longer than the 30-day half-life) at one page per domain per round keep the
  // browser work of the always-browser strategy to a few minutes on two cores.
  const rounds = opts.rounds ?? 6;
  const daysPerRound = opts.daysPerRound ?? 8;
  const pagesPerRound = opts.pagesPerRound ?? 1;
  const scale = opts.scale ?? 1;
  const days = rounds * daysPerRound;
  // Changes land on a round boundary's day, so the oracle can update its table exactly when a site changes.
  const at = (share: number) => opts.startMs + Math.round((days * share) / daysPerRound) * daysPerRound * DAY_MS;
  const wallAt = at(0.4);
  const ssrAt = at(0.55);
  // Rate limits per simulated hour, and a round is crawled within its first hour: a rate-limiting site tolerates
  // exactly our pace (one request per page), so every extra request (a probe that cannot be reused, a wrong tool)
  // runs into its limit. Two of the SPAs sit behind a limit of one extra request per round.
  const pageLimit = { maxRequests: pagesPerRound, windowMs: 3_600_000 };
  const spaLimit = { maxRequests: pagesPerRound + 1, windowMs: 3_600_000 };

  const sites: ScenarioSite[] = [];
  const add = (n: number, kind: SiteKind, change?: { kind: SiteKind; atMs: number }, count = 0, limited = 0) => {
    for (let i = 0; i < n * scale; i++) {
      const rateLimit = kind === 'ratelimit' ? pageLimit : i >= (n - limited) * scale ? spaLimit : undefined;
      const changes = change && i < count * scale ? [change] : [];
      const spec: SiteSpec = {
        kind,
        name: `${kind}${changes.length ? `→${changes[0]!.kind}` : ''}-${sites.length}`,
        changes: changes.map((c): KindChange => ({ kind: c.kind, atMs: c.atMs })),
        ...(rateLimit ? { rateLimit } : {}),
      };
      sites.push({ spec, changes });
    }
  };
  add(18, 'static', { kind: 'botwall', atMs: wallAt }, 5);
  add(8, 'spa', { kind: 'static', atMs: ssrAt }, 4, 2);
  // Both realistic walls: a cookie-and-reload interstitial for everyone, one of them refusing automation.
  add(3, 'botwall');
  add(3, 'interstitial');
  add(8, 'ratelimit');
  add(10, 'files');
  return { startMs: opts.startMs, rounds, daysPerRound, pagesPerRound, sites };
}

/** The kind of a scenario site at simulated time `atMs`. */
export function scenarioKindAt(site: ScenarioSite, atMs: number): SiteKind {
  let kind = site.spec.kind;
  for (const c of site.changes) if (atMs >= c.atMs) kind = c.kind;
  return kind;
}

/** The oracle's route for a site at `atMs`: the cheapest fetcher that gets its pages. */
export function oracleRoute(site: ScenarioSite, atMs: number): string {
  return IDEAL_FETCHER[scenarioKindAt(site, atMs)];
}
