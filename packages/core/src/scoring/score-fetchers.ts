import { DAY_MS } from '../contracts/clock.js';
import { canonicalFetcherName } from '../contracts/names.js';
import type { BestFetcherResult, FetcherScore } from '../contracts/scoring.js';

/**
 * The learning knobs, named so the database query, the router and the tests share one value.
 * - confidenceThreshold: learned data is used only when confidence is strictly above this.
 * - minSampleSize: a fetcher with fewer matching attempts is never chosen.
 * - halfLifeDays: an attempt this old counts half.
 * - fullSampleSize: the sample size at which the sample factor reaches 1 (5 samples → 0.5).
 */
export const LEARNING_DEFAULTS = {
  confidenceThreshold: 0.6,
  minSampleSize: 5,
  halfLifeDays: 30,
  fullSampleSize: 10,
} as const;

/**
 * Weight of an attempt `ageMs` old: 0.5^(ageDays / halfLifeDays) (a 30-day half-life: recent data matters more).
 * A negative age (clock skew: an attempt stamped in the future) counts as 0 so nothing weighs more than 1;
 * the SQL query clamps the same way (GREATEST(0, age)).
 */
export function decayWeight(ageMs: number, halfLifeDays: number = LEARNING_DEFAULTS.halfLifeDays): number {
  if (!(halfLifeDays > 0)) throw new RangeError(`halfLifeDays must be > 0, got ${halfLifeDays}`);
  if (Number.isNaN(ageMs)) throw new RangeError('ageMs is NaN');
  const ageDays = Math.max(0, ageMs) / DAY_MS;
  return Math.pow(0.5, ageDays / halfLifeDays);
}

/**
 * The success rate: decayed successes over the UNdecayed sample count (the design's formula, kept). Old
 * successes therefore pull the rate down instead of vanishing from both sides, which is what makes "5 old
 * successes + 2 fresh failures" fall below the threshold.
 */
export function documentSuccessRate(decayedSuccesses: number, sampleSize: number): number {
  return sampleSize > 0 ? decayedSuccesses / sampleSize : 0;
}

/** min(1, sampleSize / fullSampleSize): 5 samples → 0.5, 10 or more → 1. */
export function sampleFactor(sampleSize: number, fullSampleSize: number = LEARNING_DEFAULTS.fullSampleSize): number {
  return Math.min(1, sampleSize / fullSampleSize);
}

/** One matching attempt as the scorer needs it. */
export interface ScoredAttempt {
  fetcher: string;
  success: boolean;
  attemptedAt: Date;
}

export interface ScoreOptions {
  /** The instant ages are measured from (inject the clock's now). */
  now: Date;
  /** @defaultValue LEARNING_DEFAULTS.minSampleSize (5) */
  minSampleSize?: number;
  /** @defaultValue LEARNING_DEFAULTS.halfLifeDays (30) */
  halfLifeDays?: number;
  /** @defaultValue LEARNING_DEFAULTS.fullSampleSize (10) */
  fullSampleSize?: number;
}

/**
 * Score every fetcher over a set of distinct matching attempts. The
 * caller deduplicates attempts that matched several heuristics. Fetcher aliases are merged (`direct_access` is
 * `simple_http`). `best` is the eligible fetcher with the highest confidence; ties go to the larger sample, then
 * the name, so the choice is deterministic. Whether `best` is good enough is `isConfident`'s call.
 */
export function scoreFetchers(attempts: readonly ScoredAttempt[], opts: ScoreOptions): BestFetcherResult {
  const minSampleSize = opts.minSampleSize ?? LEARNING_DEFAULTS.minSampleSize;
  const halfLifeDays = opts.halfLifeDays ?? LEARNING_DEFAULTS.halfLifeDays;
  const fullSampleSize = opts.fullSampleSize ?? LEARNING_DEFAULTS.fullSampleSize;
  const nowMs = opts.now.getTime();
  const tallies = new Map<string, FetcherTally>();
  for (const a of attempts) {
    const name = canonicalFetcherName(a.fetcher);
    const t = tallies.get(name) ?? { fetcher: name, sampleSize: 0, decayedSuccesses: 0 };
    t.sampleSize += 1;
    if (a.success) t.decayedSuccesses += decayWeight(nowMs - a.attemptedAt.getTime(), halfLifeDays);
    tallies.set(name, t);
  }
  return scoreTallies([...tallies.values()], minSampleSize, fullSampleSize);
}

/** One fetcher's matching attempts: how many, and the decayed weight of the successful ones. */
export interface FetcherTally {
  fetcher: string;
  sampleSize: number;
  decayedSuccesses: number;
}

/**
 * The scoring step over per-fetcher tallies, wherever they were counted (here from attempts, or in Postgres by
 * @crawler/db's findBestFetcher): rate, sample factor, confidence, eligibility; best first.
 */
export function scoreTallies(
  tallies: readonly FetcherTally[],
  minSampleSize: number = LEARNING_DEFAULTS.minSampleSize,
  fullSampleSize: number = LEARNING_DEFAULTS.fullSampleSize,
): BestFetcherResult {
  const scores: FetcherScore[] = tallies.map((t) => {
    // Decayed successes over the UNdecayed sample size: old successes pull the rate down (see documentSuccessRate).
    const successRate = documentSuccessRate(t.decayedSuccesses, t.sampleSize);
    const factor = sampleFactor(t.sampleSize, fullSampleSize);
    return {
      fetcher: t.fetcher,
      sampleSize: t.sampleSize,
      decayedSuccesses: t.decayedSuccesses,
      successRate,
      sampleFactor: factor,
      confidence: successRate * factor,
      eligible: t.sampleSize >= minSampleSize,
    };
  });
  scores.sort(compareScores);
  const best = scores[0]?.eligible ? scores[0] : null;
  return { best, scores };
}

function compareScores(a: FetcherScore, b: FetcherScore): number {
  if (a.eligible !== b.eligible) return a.eligible ? -1 : 1;
  if (a.confidence !== b.confidence) return b.confidence - a.confidence;
  if (a.sampleSize !== b.sampleSize) return b.sampleSize - a.sampleSize;
  return a.fetcher < b.fetcher ? -1 : a.fetcher > b.fetcher ? 1 : 0;
}

/** Whether a learned score may be used: confidence strictly above the threshold (> 0.6, not ≥). */
export function isConfident(score: FetcherScore | null, threshold: number = LEARNING_DEFAULTS.confidenceThreshold): boolean {
  return score !== null && score.eligible && score.confidence > threshold;
}
