import { silentLogger, type Logger } from '@crawler/core';
import type { PrismaClient } from '../client.js';
import { withDbErrors } from '../errors.js';
import type { StoreDeps } from '../attempts/types.js';

/** One heuristic's predictive power: the information gain about success of knowing it. */
export interface HeuristicGain {
  heuristicType: string;
  heuristicValue: string;
  conditionalSuccessRate: number;
  sampleSize: number;
  /** |conditional success rate − baseline success rate| */
  informationGain: number;
}

/** Options for the importance analytics. */
export interface ImportanceOptions {
  /** Only (type, value) pairs with MORE than this many rows count (the document's HAVING COUNT(*) > 10). @defaultValue 10 */
  minSamples?: number;
}

// The document's queries, with the baseline computed in the same statement instead of bound as :baseline.
const GAINS_SQL = `
WITH baseline AS (
  SELECT AVG(CASE WHEN success THEN 1.0 ELSE 0.0 END) AS rate FROM fetcher_attempts
)
SELECT ah.heuristic_type, ah.heuristic_value,
       AVG(CASE WHEN fa.success THEN 1.0 ELSE 0.0 END)::float8 AS conditional_success_rate,
       COUNT(*)::int AS sample_size,
       ABS(AVG(CASE WHEN fa.success THEN 1.0 ELSE 0.0 END) - (SELECT rate FROM baseline))::float8 AS information_gain
FROM fetcher_attempts fa
JOIN attempt_heuristics ah ON fa.id = ah.attempt AND fa.attempted_at = ah.attempted_at
GROUP BY ah.heuristic_type, ah.heuristic_value
HAVING COUNT(*) > $1
ORDER BY information_gain DESC, ah.heuristic_type, ah.heuristic_value`;

const UPDATE_SQL = `
WITH gains AS (${GAINS_SQL})
UPDATE attempt_heuristics ah
SET importance_score = gains.information_gain
FROM gains
WHERE ah.heuristic_type = gains.heuristic_type AND ah.heuristic_value = gains.heuristic_value
  AND ah.importance_score IS DISTINCT FROM gains.information_gain`;

/** The weekly analytics: which heuristics predict success, stored as importance_score. */
export class ImportanceAnalytics {
  readonly #prisma: PrismaClient;
  readonly #log: Logger;

  constructor(deps: StoreDeps) {
    this.#prisma = deps.prisma;
    this.#log = (deps.logger ?? silentLogger).child({ component: 'importance-analytics' });
  }

  /** P(success) over every attempt, or null when there are none. */
  async baselineSuccessRate(): Promise<number | null> {
    const [row] = await withDbErrors('baseline success rate', () =>
      this.#prisma.$queryRawUnsafe<{ rate: number | null }[]>(
        'SELECT AVG(CASE WHEN success THEN 1.0 ELSE 0.0 END)::float8 AS rate FROM fetcher_attempts',
      ),
    );
    return row?.rate ?? null;
  }

  /** P(success | type = value) and its information gain for every pair with more than `minSamples` rows. */
  async conditionalSuccessRates(options: ImportanceOptions = {}): Promise<HeuristicGain[]> {
    const rows = await withDbErrors('conditional success rates', () =>
      this.#prisma.$queryRawUnsafe<
        { heuristic_type: string; heuristic_value: string; conditional_success_rate: number; sample_size: number; information_gain: number }[]
      >(GAINS_SQL, options.minSamples ?? 10),
    );
    return rows.map((r) => ({
      heuristicType: r.heuristic_type,
      heuristicValue: r.heuristic_value,
      conditionalSuccessRate: r.conditional_success_rate,
      sampleSize: r.sample_size,
      informationGain: r.information_gain,
    }));
  }

  /** Write each qualifying pair's information gain into importance_score; returns the rows changed. */
  async updateImportanceScores(options: ImportanceOptions = {}): Promise<number> {
    const changed = await withDbErrors('update importance scores', () =>
      this.#prisma.$executeRawUnsafe(UPDATE_SQL, options.minSamples ?? 10),
    );
    this.#log.info({ changed }, 'importance scores updated');
    return changed;
  }
}
