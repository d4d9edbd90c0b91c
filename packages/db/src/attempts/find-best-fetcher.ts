import {
  canonicalFetcherName,
  DAY_MS,
  scoreTallies,
  LEARNING_DEFAULTS,
  type BestFetcherResult,
  type Heuristic,
} from '@crawler/core';
import type { PrismaClient } from '../client.js';
import type { FindBestFetcherOptions } from './types.js';
import { NOT_EVIDENCE_SQL_LIST } from '../sql-lists.js';
import { sqlOf } from '../sql.js';

/** One fetcher's aggregates as Postgres returns them, before scoring. */
export interface FetcherAggregate {
  fetcher: string;
  sampleSize: number;
  decayedSuccesses: number;
}

/** The rollups' time origin: weights are stored as 2^((attempted_at − this) / 30 days). */
export const ROLLUP_EPOCH_MS = Date.UTC(2020, 0, 1);
/** The half-life the rollups are built for; any other half-life takes the exact scan. */
export const ROLLUP_HALF_LIFE_DAYS = 30;
/** Beyond this many distinct query pairs, 2^n − 1 subset probes stop being cheaper than the scan. */
export const MAX_ROLLUP_QUERY_PAIRS = 12;
/**
 * Rollup weights cannot clamp attempts stamped after `now` to weight 1 as the scan does (core's decayWeight); an
 * attempt a minute in the future weighs 1.000016 instead. Beyond this, the exact scan answers.
 */
export const ROLLUP_FUTURE_TOLERANCE_MS = 60_000;

const KEY_SEP = '\u001f';
const SUBSET_SEP = '\u001e';

// FindBestFetcher's aggregation (the distinct attempts matching ANY heuristic: decayed successes and sample size per
// fetcher), answered one of two ways:
//
// - rollup (every query type listed in heuristic_rollup_types, half-life 30 d): inclusion–exclusion over the
//   2^n − 1 subsets of the n query pairs, read from heuristic_rollups (migration 20261122000300): per fetcher,
//   |∪ P_q| = Σ_S (−1)^{|S|+1} |∩_{q∈S} P_q|, and likewise the decayed successes, whose decay factorises as
//   2^((t−E)/30d)·2^(−(now−E)/30d). Cost: 2^n − 1 primary-key probes, independent of the matching attempts.
// - exact scan (anything else): the DISTINCT attempts matching ANY pair, read from idx_heur_type_value (index-only) and
//   de-duplicated with DISTINCT ON over a sort of the ids (about 2× faster than hashing the tuple), decayed as
//   exp(−ln2·age/halfLife) on date_part (float8: extract() is numeric since Postgres 14 and cost more than the scan).
//   Ages below zero (clock skew) count as zero, like core's decayWeight.
//
// Two statements, not one with both branches: the attempt log is partitioned by time (migration 20261128000100) and a
// statement naming it plans and locks every partition, which the rollup path, the one the router takes, never reads.
// The rollup statement checks the query's types itself and answers a single row with a null fetcher when one is not
// rolled up; the scan then runs (a second round trip, for queries the router does not make).
//
// Rate-limited and refused-certificate attempts are no evidence about the tool (core NOT_TOOL_EVIDENCE_ERROR_TYPES): the
// rollups leave them out (migration 20261210010000) and the scan through a hashed anti-join on idx_attempts_not_evidence.
const ROLLUP_SQL = `
WITH fast AS (
  SELECT NOT EXISTS (
    SELECT 1 FROM unnest($1::text[]) AS q(t) WHERE NOT EXISTS (SELECT 1 FROM heuristic_rollup_types rt WHERE rt.heuristic_type = q.t)
  ) AS ok
)
SELECT true AS rolled, r.fetcher,
       coalesce(sum(r.sign * r.attempts) FILTER (WHERE r.pooled), 0)::float8 AS sample_size,
       coalesce(sum(r.sign * r.success_weight) FILTER (WHERE r.pooled), 0)::float8 AS weight,
       max(r.max_attempted_at) AS max_attempted_at,
       coalesce(sum(r.attempts) FILTER (WHERE r.subset_key = $3), 0)::float8 AS alone_size,
       coalesce(sum(r.success_weight) FILTER (WHERE r.subset_key = $3), 0)::float8 AS alone_weight
FROM (
  -- = ANY keeps this a primary-key probe per subset (a join on unnest was planned as a sequential scan); the
  -- inclusion–exclusion sign is (−1)^(|S|+1), |S| = separators + 1. $3 is the one heuristic also scored alone (its
  -- singleton subset: one more probe), or NULL.
  SELECT fetcher, attempts, success_weight, max_attempted_at, subset_key, subset_key = ANY($2::text[]) AS pooled,
         CASE WHEN (length(subset_key) - length(replace(subset_key, chr(30), ''))) % 2 = 0 THEN 1 ELSE -1 END AS sign
  FROM heuristic_rollups
  WHERE subset_key = ANY($2::text[]) OR subset_key = $3
) AS r
WHERE (SELECT ok FROM fast)
GROUP BY r.fetcher
HAVING sum(r.sign * r.attempts) FILTER (WHERE r.pooled) > 0 OR sum(r.attempts) FILTER (WHERE r.subset_key = $3) > 0
UNION ALL
SELECT false, NULL, 0, 0, NULL, 0, 0 WHERE NOT (SELECT ok FROM fast)`;

const SCAN_SQL = `
SELECT false AS rolled, fetcher, count(*)::float8 AS sample_size,
       coalesce(sum(exp(least(0::float8, date_part('epoch', attempted_at - $3::timestamptz)) * (ln(2::float8) / ($4::float8 * 86400))))
                FILTER (WHERE success), 0)::float8 AS weight,
       NULL::timestamptz AS max_attempted_at, 0::float8 AS alone_size, 0::float8 AS alone_weight
FROM (
  SELECT DISTINCT ON (ah.attempt) ah.attempt, ah.fetcher, ah.success, ah.attempted_at
  FROM attempt_heuristics ah
  WHERE (ah.heuristic_type, ah.heuristic_value) IN (SELECT * FROM unnest($1::text[], $2::text[]))
    AND ah.attempt NOT IN (SELECT fa.id FROM fetcher_attempts fa WHERE fa.error_type IN (${NOT_EVIDENCE_SQL_LIST}))
  ORDER BY ah.attempt
) AS matched
GROUP BY fetcher`;

interface Row {
  rolled: boolean;
  fetcher: string | null;
  sample_size: number;
  weight: number;
  max_attempted_at: Date | null;
  alone_size: number;
  alone_weight: number;
}

function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** Every non-empty subset of the (byte-ordered) keys as a rollup subset key, with its inclusion–exclusion sign. */
export function rollupSubsets(keys: readonly string[]): { subsetKeys: string[]; signs: number[] } {
  const sorted = [...keys].sort(byteOrder);
  const subsetKeys: string[] = [];
  const signs: number[] = [];
  for (let mask = 1; mask < 1 << sorted.length; mask++) {
    const members = sorted.filter((_, i) => (mask >> i) & 1);
    subsetKeys.push(members.join(SUBSET_SEP));
    signs.push(members.length % 2 === 1 ? 1 : -1);
  }
  return { subsetKeys, signs };
}

/** Sum raw aggregates per canonical fetcher name (`direct_access` rows join `simple_http`). */
export function mergeAliases(rows: readonly FetcherAggregate[]): FetcherAggregate[] {
  const merged = new Map<string, FetcherAggregate>();
  for (const r of rows) {
    const name = canonicalFetcherName(r.fetcher);
    const m = merged.get(name) ?? { fetcher: name, sampleSize: 0, decayedSuccesses: 0 };
    m.sampleSize += r.sampleSize;
    m.decayedSuccesses += r.decayedSuccesses;
    merged.set(name, m);
  }
  return [...merged.values()];
}

/** The scoring step over the aggregates: rate, sample factor, confidence, eligibility; best first. */
export function scoreAggregates(
  rows: readonly FetcherAggregate[],
  minSampleSize: number = LEARNING_DEFAULTS.minSampleSize,
  fullSampleSize: number = LEARNING_DEFAULTS.fullSampleSize,
): BestFetcherResult {
  return scoreTallies(mergeAliases(rows), minSampleSize, fullSampleSize);
}

/** findBestFetcher's answer: the pooled score, and the score of `options.alone`'s attempts alone when it was asked for. */
export type BestFetcherAnswer = BestFetcherResult & {
  /** What the attempts matching `options.alone` say by themselves: how many there are, and their own score. */
  alone?: { heuristic: Heuristic; attempts: number; result: BestFetcherResult };
};

/**
 * Run the aggregation in Postgres (one round trip on the rollups) and score it. Empty heuristics match nothing.
 * `options.alone` is scored by itself as well, in the same statement (one more rollup probe).
 */
export async function queryBestFetcher(
  prisma: PrismaClient,
  heuristics: readonly Heuristic[],
  now: Date,
  options: FindBestFetcherOptions = {},
): Promise<BestFetcherAnswer> {
  const halfLifeDays = options.halfLifeDays ?? LEARNING_DEFAULTS.halfLifeDays;
  if (!(halfLifeDays > 0)) throw new RangeError(`halfLifeDays must be > 0, got ${halfLifeDays}`);
  const minSampleSize = options.minSampleSize ?? LEARNING_DEFAULTS.minSampleSize;
  const fullSampleSize = options.fullSampleSize ?? LEARNING_DEFAULTS.fullSampleSize;
  const pairs = new Map<string, Heuristic>();
  for (const h of heuristics) pairs.set(`${h.type}\u0000${h.value}`, h);
  const alone = options.alone ?? null;
  if (pairs.size === 0 && alone === null) return { best: null, scores: [] };
  const list = [...pairs.values()];
  const keys = list.map((h) => `${h.type}${KEY_SEP}${h.value}`);
  const aloneKey = alone ? `${alone.type}${KEY_SEP}${alone.value}` : null;
  const rollupable =
    options.strategy !== 'scan' &&
    halfLifeDays === ROLLUP_HALF_LIFE_DAYS &&
    list.length <= MAX_ROLLUP_QUERY_PAIRS &&
    ![...keys, ...(aloneKey ? [aloneKey] : [])].some((k) => /[\u001e]/.test(k) || k.split(KEY_SEP).length !== 2);
  const { subsetKeys } = rollupable ? rollupSubsets(keys) : { subsetKeys: [] as string[] };
  const types = [...list.map((h) => h.type), ...(alone ? [alone.type] : [])];
  const scan = async (hs: readonly Heuristic[]) =>
    hs.length === 0 ? [] : sqlOf(prisma).query<Row>(SCAN_SQL, [hs.map((h) => h.type), hs.map((h) => h.value), now.toISOString(), halfLifeDays]);
  let rows = rollupable ? await sqlOf(prisma).query<Row>(ROLLUP_SQL, [types, subsetKeys, aloneKey]) : null;
  if (
    rows === null ||
    rows.some((r) => r.rolled === false && r.fetcher === null) ||
    rows.some((r) => r.rolled && r.max_attempted_at !== null && new Date(r.max_attempted_at).getTime() > now.getTime() + ROLLUP_FUTURE_TOLERANCE_MS)
  ) {
    // The exact scan: the pooled heuristics, then the one scored alone (a second statement; the router's queries are rolled up).
    const [pooled, own] = await Promise.all([scan(list), alone ? scan([alone]) : Promise.resolve([])]);
    rows = [...pooled, ...own.map((r) => ({ ...r, sample_size: 0, weight: 0, alone_size: r.sample_size, alone_weight: r.weight }))];
  }
  const scale = Math.pow(2, -(now.getTime() - ROLLUP_EPOCH_MS) / (ROLLUP_HALF_LIFE_DAYS * DAY_MS));
  const decayed = (r: Row, weight: number) =>
    // Inclusion–exclusion can leave a float residue of ~1e-16 × the terms; never let it go negative.
    r.rolled ? Math.max(0, Number(weight) * scale) : Number(weight);
  const pooledRows = rows.filter((r) => Math.round(Number(r.sample_size)) > 0);
  const result: BestFetcherAnswer = scoreAggregates(
    pooledRows.map((r) => ({ fetcher: r.fetcher ?? '', sampleSize: Math.round(Number(r.sample_size)), decayedSuccesses: decayed(r, r.weight) })),
    minSampleSize,
    fullSampleSize,
  );
  if (alone) {
    const own = rows
      .filter((r) => r.fetcher !== null && Math.round(Number(r.alone_size)) > 0)
      .map((r) => ({ fetcher: r.fetcher!, sampleSize: Math.round(Number(r.alone_size)), decayedSuccesses: decayed(r, r.alone_weight) }));
    result.alone = { heuristic: alone, attempts: own.reduce((n, r) => n + r.sampleSize, 0), result: scoreAggregates(own, minSampleSize, fullSampleSize) };
  }
  return result;
}
