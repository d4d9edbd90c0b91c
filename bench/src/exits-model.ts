/**
 * The exit-routing model: a mixed web whose sites need different (fetcher, exit tier) arms, and four strategies that
 * choose arms for its pages, scored in cost units and blocks per page. The learned strategy is the router's own
 * decision procedure made of core's pure functions (scoreTallies with time decay, rankArms' cost rule, the
 * escalation ladder, the domain's last working arm); the web answers by rule. Pure and seeded, so tests run it.
 */
import { createRandom } from './page-corpus.js';
import {
  DAY_MS,
  DIRECT_TIER,
  FETCHERS,
  armCost,
  armKey,
  decayWeight,
  escalationLadder,
  nextArm,
  rankArms,
  scoreTallies,
  type Arm,
  type ExitTier,
} from '@crawler/core';

/** What a site needs. `minTier`: the cheapest tier index plain HTTP is served from (0 direct, 1 datacenter, 2 residential). */
export interface ExitSite {
  name: string;
  /** `static`: plain HTTP works from `minTier` up; `spa`: needs a browser; `wall`: needs the stealth browser. */
  kind: 'static' | 'spa' | 'wall';
  minTier: number;
  /** From this round on the site's `minTier` becomes `to` (a site that starts or stops refusing ranges). */
  change?: { round: number; to: number };
}

/** The tiers of the model, cheapest first (what a fleet might buy: datacenter 1, residential 10 units a request). */
export const MODEL_TIERS: readonly ExitTier[] = [
  { name: DIRECT_TIER, cost: 0, urls: [] },
  { name: 'datacenter', cost: 1, urls: ['http://dc.invalid:1'] },
  { name: 'residential', cost: 10, urls: ['http://res.invalid:1'] },
];
const FETCHER_NAMES = [FETCHERS.simpleHttp, FETCHERS.playwright, FETCHERS.playwrightStealth];

/** How the web answers one request. */
export type Answer = 'page' | 'block' | 'wrong_tool';

/** The site's answer to `arm` in `round`: a refused range refuses every client, browsers included. */
export function answer(site: ExitSite, arm: Arm, round: number): Answer {
  const minTier = site.change && round >= site.change.round ? site.change.to : site.minTier;
  const tierIndex = MODEL_TIERS.findIndex((t) => t.name === arm.tier);
  if (tierIndex < minTier) return 'block';
  if (site.kind === 'wall') return arm.fetcher === FETCHERS.playwrightStealth ? 'page' : 'block';
  if (site.kind === 'spa' && arm.fetcher === FETCHERS.simpleHttp) return 'wrong_tool';
  return 'page';
}

/** The cheapest arm that gets the site's pages in `round`: the oracle. */
export function oracleArm(site: ExitSite, round: number): Arm {
  const arms = FETCHER_NAMES.flatMap((fetcher) => MODEL_TIERS.map((t) => ({ fetcher, tier: t.name })));
  return arms.filter((a) => answer(site, a, round) === 'page').sort((a, b) => armCost(a, MODEL_TIERS) - armCost(b, MODEL_TIERS))[0]!;
}

/**
 * The mixed web: 40% of sites open to all, 20% refusing the worker's range (datacenter serves), 20% refusing
 * datacenter ranges too (residential serves), 10% JavaScript apps (half of them refusing the worker's range too, so a
 * browser through datacenter), 10% bot walls; a quarter of the open sites start refusing the worker's range
 * half-way, and a quarter of the residential-only sites lift their block half-way.
 */
export function mixedWeb(sites: number, rounds: number, seed = 7): ExitSite[] {
  const rnd = createRandom(seed);
  const out: ExitSite[] = [];
  for (let i = 0; i < sites; i++) {
    const r = i / sites;
    const half = Math.floor(rounds / 2);
    if (r < 0.4) out.push({ name: `open-${i}`, kind: 'static', minTier: 0, ...(rnd() < 0.25 ? { change: { round: half, to: 1 } } : {}) });
    else if (r < 0.6) out.push({ name: `dc-${i}`, kind: 'static', minTier: 1 });
    else if (r < 0.8) out.push({ name: `res-${i}`, kind: 'static', minTier: 2, ...(rnd() < 0.25 ? { change: { round: half, to: 0 } } : {}) });
    else if (r < 0.9) out.push({ name: `spa-${i}`, kind: 'spa', minTier: i % 2 });
    else out.push({ name: `wall-${i}`, kind: 'wall', minTier: 0 });
  }
  return out;
}

/** One strategy: picks the arm for a site's next request, and hears what came of it. */
export interface ExitStrategy {
  readonly id: string;
  /** The arm for the first request of a page of `site` at `nowMs`. */
  first(site: ExitSite, nowMs: number): Arm;
  /** The arm after `arm` met `result` (block or wrong tool); null gives the page up. */
  next(site: ExitSite, arm: Arm, result: Exclude<Answer, 'page'>): Arm | null;
  /** What one request did. */
  record(site: ExitSite, arm: Arm, result: Answer, nowMs: number): void;
}

const LADDER = escalationLadder(FETCHER_NAMES, MODEL_TIERS);
const HTTP_DIRECT: Arm = { fetcher: FETCHERS.simpleHttp, tier: DIRECT_TIER };
const BROWSER: Arm = { fetcher: FETCHERS.playwright, tier: DIRECT_TIER };
/** The model's answer to a wrong tool: the browser on the same exit (as the retry policy's switch). */
const afterWrongTool = (arm: Arm): Arm | null => (arm.fetcher === FETCHERS.simpleHttp ? { ...BROWSER, tier: arm.tier } : null);

/** The cheapest working arm, known in advance. */
export function oracleStrategy(round: () => number): ExitStrategy {
  return {
    id: 'oracle',
    first: (site) => oracleArm(site, round()),
    next: () => null,
    record: () => {},
  };
}

/** Every request through the most expensive tier: plain HTTP via residential, then the stealth browser via residential. */
export function topTierStrategy(): ExitStrategy {
  const top = MODEL_TIERS[MODEL_TIERS.length - 1]!.name;
  return {
    id: 'always-top-tier',
    first: () => ({ fetcher: FETCHERS.simpleHttp, tier: top }),
    next: (_s, arm, result) => (arm.fetcher === FETCHERS.simpleHttp ? (result === 'wrong_tool' ? { fetcher: FETCHERS.playwright, tier: top } : { fetcher: FETCHERS.playwrightStealth, tier: top }) : arm.fetcher === FETCHERS.playwright ? { fetcher: FETCHERS.playwrightStealth, tier: top } : null),
    record: () => {},
  };
}

/**
 * Crawlee-style tiers without learning: each domain starts on the cheapest tier and moves up one tier for good on a
 * block (never down); a page that needs a browser after the top tier gets one.
 */
export function escalationStrategy(): ExitStrategy {
  const rung = new Map<string, number>();
  const browser = new Map<string, Arm>();
  return {
    id: 'tier-escalation',
    first: (site) => browser.get(site.name) ?? LADDER[rung.get(site.name) ?? 0]!,
    next: (site, arm, result) => {
      if (result === 'wrong_tool') {
        const b = afterWrongTool(arm);
        if (b) browser.set(site.name, b);
        return b;
      }
      const up = nextArm(LADDER, arm, MODEL_TIERS);
      if (up) {
        const i = LADDER.findIndex((a) => armKey(a) === armKey(up));
        if (i > (rung.get(site.name) ?? 0)) rung.set(site.name, i);
        if (up.fetcher !== FETCHERS.simpleHttp) browser.set(site.name, up);
      }
      return up;
    },
    record: () => {},
  };
}

/**
 * The router's procedure: the domain's decayed tallies per arm (scoreTallies, 30-day half-life), the cheapest
 * confident arm (rankArms, threshold 0.6, 5 samples) unless its latest attempt there was refused (domain memory's
 * disqualification) or a proxied arm was last shown to be needed more than `reverifyDays` ago (re-verification, so a
 * site that lifted its block is moved back down); else the domain's last working arm; else the bottom of the ladder,
 * climbing on blocks and switching tool on a wrong one.
 */
export function learnedStrategy(opts: { halfLifeDays?: number; confidenceThreshold?: number; minSampleSize?: number; reverifyDays?: number } = {}): ExitStrategy {
  const log = new Map<string, Array<{ arm: string; success: boolean; atMs: number }>>();
  const lastWorking = new Map<string, Arm>();
  /** When fresh evidence (a climb from the bottom) last showed an arm was needed, per site and arm. */
  const verified = new Map<string, number>();
  /** Whether the site's current page started from evidence (learned or remembered) rather than the ladder's bottom. */
  const fromEvidence = new Map<string, boolean>();
  const halfLife = opts.halfLifeDays ?? 30;
  const reverifyMs = (opts.reverifyDays ?? 21) * DAY_MS;
  return {
    id: 'learned',
    first: (site, nowMs) => {
      const entries = log.get(site.name) ?? [];
      const tallies = new Map<string, { fetcher: string; sampleSize: number; decayedSuccesses: number }>();
      const latest = new Map<string, boolean>();
      for (const a of entries) {
        const t = tallies.get(a.arm) ?? { fetcher: a.arm, sampleSize: 0, decayedSuccesses: 0 };
        t.sampleSize += 1;
        if (a.success) t.decayedSuccesses += decayWeight(nowMs - a.atMs, halfLife);
        tallies.set(a.arm, t);
        latest.set(a.arm, a.success);
      }
      const usable = scoreTallies([...tallies.values()], opts.minSampleSize ?? 5).scores.filter((sc) => latest.get(sc.fetcher) !== false);
      const best = rankArms(usable, MODEL_TIERS, { confidenceThreshold: opts.confidenceThreshold ?? 0.6 }).best;
      const stale = (arm: Arm) => arm.tier !== DIRECT_TIER && nowMs - (verified.get(`${site.name} ${armKey(arm)}`) ?? -Infinity) > reverifyMs;
      const remembered = lastWorking.get(site.name);
      const choice = best && !stale(best.arm) ? best.arm : remembered && !stale(remembered) ? remembered : null;
      fromEvidence.set(site.name, choice !== null);
      return choice ?? HTTP_DIRECT;
    },
    next: (site, arm, result) => {
      fromEvidence.set(site.name, false);
      // A refused remembered arm is forgotten: the next page starts again from evidence.
      if (lastWorking.get(site.name) && armKey(lastWorking.get(site.name)!) === armKey(arm)) lastWorking.delete(site.name);
      return result === 'wrong_tool' ? afterWrongTool(arm) : nextArm(LADDER, arm, MODEL_TIERS);
    },
    record: (site, arm, result, atMs) => {
      const entries = log.get(site.name) ?? [];
      entries.push({ arm: armKey(arm), success: result === 'page', atMs });
      // The router reads a window of the domain's latest attempts; keep the model's log as bounded.
      if (entries.length > 200) entries.shift();
      log.set(site.name, entries);
      if (result !== 'page') return;
      lastWorking.set(site.name, arm);
      if (!fromEvidence.get(site.name)) verified.set(`${site.name} ${armKey(arm)}`, atMs);
    },
  };
}

/** What one strategy cost over the run. */
export interface ExitRunResult {
  strategy: string;
  pages: number;
  got: number;
  requests: number;
  costUnits: number;
  blocks: number;
  costPerPage: number;
  blocksPerPage: number;
  /** Cost per page over the oracle's in the same run. */
  costVsOracle?: number;
  /** Share of requests by arm key. */
  arms: Record<string, number>;
}

/** Crawl `pagesPerRound` pages of every site per round (one round a day), each page climbing at most the whole ladder. */
export function runExitModel(sites: readonly ExitSite[], strategy: ExitStrategy, opts: { rounds: number; pagesPerRound: number; currentRound?: { value: number } }): ExitRunResult {
  let requests = 0;
  let costUnits = 0;
  let blocks = 0;
  let got = 0;
  let pages = 0;
  const arms: Record<string, number> = {};
  for (let round = 0; round < opts.rounds; round++) {
    if (opts.currentRound) opts.currentRound.value = round;
    for (let p = 0; p < opts.pagesPerRound; p++) {
      const nowMs = round * DAY_MS + p * 60_000;
      for (const site of sites) {
        pages += 1;
        let arm: Arm | null = strategy.first(site, nowMs);
        for (let hop = 0; arm && hop <= LADDER.length + 1; hop++) {
          const result = answer(site, arm, round);
          requests += 1;
          costUnits += armCost(arm, MODEL_TIERS);
          arms[armKey(arm)] = (arms[armKey(arm)] ?? 0) + 1;
          strategy.record(site, arm, result, nowMs);
          if (result === 'page') {
            got += 1;
            break;
          }
          if (result === 'block') blocks += 1;
          arm = strategy.next(site, arm, result);
        }
      }
    }
  }
  return { strategy: strategy.id, pages, got, requests, costUnits, blocks, costPerPage: costUnits / Math.max(1, got), blocksPerPage: blocks / Math.max(1, pages), arms };
}
