import {
  DIRECT_TIER,
  FETCHERS,
  armAllowed,
  armKey,
  canonicalFetcherName,
  escalationLadder,
  nextArm,
  parseArmKey,
  rankArms,
  type Arm,
  type ArmRanking,
  type BestFetcherResult,
  type ExitTier,
} from '@crawler/core';

/** What the arm helpers read of the router's settings. */
export interface ArmSettings {
  /** Canonical names of the fetchers the fleet runs. */
  known: ReadonlySet<string>;
  confidenceThreshold: number;
  /** The exit tiers, cheapest first (config.exitTiers). @defaultValue direct only */
  exitTiers?: readonly ExitTier[];
}

const DIRECT_ONLY: readonly ExitTier[] = [{ name: DIRECT_TIER, cost: 0, urls: [] }];

/** The configured tiers (direct alone when none are given). */
export function tiersOf(s: ArmSettings): readonly ExitTier[] {
  return s.exitTiers && s.exitTiers.length > 0 ? s.exitTiers : DIRECT_ONLY;
}

/** Whether any proxied tier is configured: only then does an exit take part in the choice. */
export function hasProxiedTiers(s: ArmSettings): boolean {
  return tiersOf(s).some((t) => t.name !== DIRECT_TIER);
}

/** Whether the fleet can run `arm`: a known fetcher on a configured tier. */
export function runsArm(s: ArmSettings, arm: Arm): boolean {
  return s.known.has(canonicalFetcherName(arm.fetcher)) && tiersOf(s).some((t) => t.name === arm.tier) && armAllowed(arm);
}

/** An arm key (a RouteJob's nextFetcher, a wall's fetcher) read back, or null when the fleet cannot run it. */
export function runnableArm(s: ArmSettings, key: string | null | undefined): Arm | null {
  if (!key) return null;
  const arm = parseArmKey(key);
  const canonical = { fetcher: canonicalFetcherName(arm.fetcher), tier: arm.tier };
  return runsArm(s, canonical) ? canonical : null;
}

/**
 * The store's arm-keyed scores as the learned step reads them. With proxied tiers, the cost rule (core rankArms), without the `avoid` arm:
 * `best` is the confident arm with the lowest expected cost per success, (fetcher cost + tier cost) / P(success). With
 * the direct tier alone, the choice stays the most confident fetcher, over the direct arms only. Arms the fleet
 * cannot run (a fetcher it does not run, a tier no longer configured) are left out either way.
 */
export function armView(learned: BestFetcherResult, s: ArmSettings, avoid: string | null = null): { learned: BestFetcherResult; ranking: ArmRanking | null } {
  if (!hasProxiedTiers(s)) {
    const scores = learned.scores.filter((sc) => parseArmKey(sc.fetcher).tier === DIRECT_TIER);
    const bestIsDirect = learned.best !== null && parseArmKey(learned.best.fetcher).tier === DIRECT_TIER;
    const best = bestIsDirect ? learned.best : scores[0]?.eligible ? scores[0] : null;
    return { learned: { best: best ?? null, scores }, ranking: null };
  }
  // The arm a link was just refused on is left out, so the next cheapest confident arm (plain HTTP from another
  // address) is taken rather than a probe from the address that was refused.
  const scores = avoid ? learned.scores.filter((sc) => canonicalFetcherName(sc.fetcher) !== avoid) : learned.scores;
  const ranking = rankArms(scores, tiersOf(s), { confidenceThreshold: s.confidenceThreshold, runs: (arm) => runsArm(s, { fetcher: canonicalFetcherName(arm.fetcher), tier: arm.tier }) });
  return { learned: { best: ranking.best?.score ?? null, scores: ranking.arms.map((a) => a.score) }, ranking };
}

/**
 * Where a blocked arm goes next: the next rung of the ladder (plain HTTP up the tiers, then stealth up them) when proxied
 * tiers are configured, else null (the retry policy's tool escalation stands).
 */
export function escalatedArm(s: ArmSettings, blocked: Arm): Arm | null {
  if (!hasProxiedTiers(s)) return null;
  const ladder = escalationLadder([...s.known], tiersOf(s));
  return nextArm(ladder, blocked, tiersOf(s));
}

/** Whether `arm` is plain HTTP from the probe's (cheapest) tier: the arm a probe's bot wall speaks for. */
export function isProbedPlainArm(s: ArmSettings, arm: Arm): boolean {
  return s.known.has(FETCHERS.simpleHttp) && armKey({ fetcher: canonicalFetcherName(arm.fetcher), tier: arm.tier }) === armKey({ fetcher: FETCHERS.simpleHttp, tier: tiersOf(s)[0]!.name });
}

/**
 * Where a choice of plain HTTP from the probe's tier goes on a domain whose probe just met a bot wall (a `.pdf`'s
 * evidence from other sites, the seed priors, a decision cached before the wall was seen): plain HTTP would meet the
 * same wall whatever the URL's suffix, so to the wall's tool (`wallFetcher`, an arm key). Null when `chosen` is another
 * arm, or the wall's tool is not runnable, is that same arm, or is the one the link avoids.
 */
export function armPastWall(s: ArmSettings, chosen: Arm, wallFetcher: string, avoid: string | null = null): Arm | null {
  if (!isProbedPlainArm(s, chosen)) return null;
  const wall = runnableArm(s, wallFetcher);
  if (!wall || armKey(wall) === avoid || isProbedPlainArm(s, wall)) return null;
  return wall;
}

/** The arm a probe that met a wall sends the domain to: one rung above plain HTTP on the probe's (cheapest) tier. */
export function wallArm(s: ArmSettings, probeChoice: string): Arm {
  const probed = tiersOf(s)[0]!.name;
  return escalatedArm(s, { fetcher: FETCHERS.simpleHttp, tier: probed }) ?? { fetcher: canonicalFetcherName(probeChoice), tier: probed };
}

export { armKey };
