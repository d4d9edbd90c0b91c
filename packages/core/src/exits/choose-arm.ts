import type { FetcherScore } from '../contracts/scoring.js';
import { isConfident } from '../scoring/score-fetchers.js';
import { armCost, expectedCostPerSuccess, parseArmKey, FETCHER_COST_UNITS, type Arm, type ExitTier } from './exit-tiers.js';

/** One arm's standing: its learned score (keyed by arm), its price and its expected cost per page got. */
export interface ArmScore {
  arm: Arm;
  score: FetcherScore;
  /** Cost units of one request by this arm. */
  cost: number;
  /** cost / successRate: what a page got this way costs on average. */
  expectedCost: number;
  /** Clears the confidence threshold (eligible and confidence above it). */
  confident: boolean;
}

/** The arms ranked for a URL, and the one chosen. */
export interface ArmRanking {
  /** The confident arm with the lowest expected cost per success; null when none is confident. */
  best: ArmScore | null;
  /** Every scored arm the fleet runs: confident ones first, each group cheapest first. */
  arms: ArmScore[];
}

/**
 * The cost rule: among the arms whose learned confidence clears the threshold, the one with the lowest expected cost
 * per success, (fetcher CPU cost + tier cost) / P(success); ties go to the more confident arm. An arm whose tier is not
 * configured (any more) or whose fetcher the fleet does not run is left out. Scores are keyed by arm (core armKey).
 */
export function rankArms(
  scores: readonly FetcherScore[],
  tiers: readonly ExitTier[],
  opts: { confidenceThreshold: number; runs?: (arm: Arm) => boolean; fetcherCosts?: Readonly<Record<string, number>> },
): ArmRanking {
  const arms: ArmScore[] = [];
  for (const score of scores) {
    const arm = parseArmKey(score.fetcher);
    if (!tiers.some((t) => t.name === arm.tier)) continue;
    if (opts.runs && !opts.runs(arm)) continue;
    const cost = armCost(arm, tiers, opts.fetcherCosts ?? FETCHER_COST_UNITS);
    arms.push({ arm, score, cost, expectedCost: expectedCostPerSuccess(cost, score.successRate), confident: isConfident(score, opts.confidenceThreshold) });
  }
  arms.sort((a, b) => {
    if (a.confident !== b.confident) return a.confident ? -1 : 1;
    if (a.expectedCost !== b.expectedCost) return a.expectedCost - b.expectedCost;
    return b.score.confidence - a.score.confidence;
  });
  const best = arms[0]?.confident ? arms[0] : null;
  return { best, arms };
}
