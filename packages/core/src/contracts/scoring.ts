/**
 * One fetcher's standing for a set of heuristics (FindBestFetcher). The database query and the
 * pure scoring function both produce this shape, so they can be tested against each other.
 */
export interface FetcherScore {
  fetcher: string;
  /** Distinct matching attempts, undecayed. */
  sampleSize: number;
  /** Sum over successful attempts of 0.5^(ageDays / halfLifeDays). */
  decayedSuccesses: number;
  /** decayedSuccesses / sampleSize: old successes pull the rate down. */
  successRate: number;
  /** min(1, sampleSize / 10). */
  sampleFactor: number;
  /** successRate × sampleFactor. */
  confidence: number;
  /** False when sampleSize is below the minimum sample; such a fetcher is never chosen. */
  eligible: boolean;
}

/** The learned choice for a URL, with every fetcher's score for `explain`. */
export interface BestFetcherResult {
  /** The eligible fetcher with the highest confidence, or null when none is eligible. */
  best: FetcherScore | null;
  /** Every fetcher that matched, eligible or not, best first. */
  scores: FetcherScore[];
}
