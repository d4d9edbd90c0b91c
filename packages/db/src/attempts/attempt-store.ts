import { CrawlerError, DAY_MS, silentLogger, systemClock, type Clock, type Heuristic, type Logger } from '@crawler/core';
import type { PrismaClient } from '../client.js';
import { DB_ERROR_CODES, translateDbError, withDbErrors } from '../errors.js';
import { domainBanRate, domainStats, errorTypeStats, fetcherStats, proxyStats, pruneBefore, tierStats, velocity } from './attempt-stats.js';
import { queryBestFetcher, type BestFetcherAnswer } from './find-best-fetcher.js';
import { AttemptBatchError, INVALID_ATTEMPT, insertAttempts } from './log-attempts.js';
import type { AttemptInput, AttemptStats, FindBestFetcherOptions, ProxyStats, PruneResult, StoreDeps, VelocityBucket } from './types.js';

/** Default retention of the attempt log: 90 days (three half-lives: older attempts weigh under 1/8). */
export const DEFAULT_RETENTION_DAYS = 90;

/**
 * The attempt log and the learning query. Every method is one round trip unless noted;
 * failures surface as CrawlerErrors with `db_*` codes.
 */
export class AttemptStore {
  readonly #prisma: PrismaClient;
  readonly #clock: Clock;
  readonly #log: Logger;

  constructor(deps: StoreDeps) {
    this.#prisma = deps.prisma;
    this.#clock = deps.clock ?? systemClock;
    this.#log = (deps.logger ?? silentLogger).child({ component: 'attempt-store' });
  }

  /** Record one attempt and all its heuristics atomically; returns the attempt id. */
  async logAttempt(input: AttemptInput): Promise<bigint> {
    const [id] = await this.logAttempts([input]);
    return id as bigint;
  }

  /**
   * Record many attempts and their heuristics in one statement (one round trip, atomic); ids in input order.
   * When one input is bad (invalid, or its link was deleted meanwhile) the rest are still written one by one and
   * an {@link AttemptBatchError} says which were: a bad row never costs the batch its evidence.
   */
  async logAttempts(inputs: readonly AttemptInput[]): Promise<bigint[]> {
    const now = this.#clock.now();
    try {
      const ids = await withDbErrors('log attempts', () => insertAttempts(this.#prisma, inputs, now));
      this.#log.debug({ count: ids.length }, 'attempts logged');
      return ids;
    } catch (err) {
      if (inputs.length < 2 || !isRowProblem(err)) throw err;
      return this.#logOneByOne(inputs, now);
    }
  }

  async #logOneByOne(inputs: readonly AttemptInput[], now: Date): Promise<never> {
    const ids: (bigint | null)[] = [];
    const failures: { index: number; error: CrawlerError }[] = [];
    for (const [index, input] of inputs.entries()) {
      try {
        const [id] = await insertAttempts(this.#prisma, [input], now);
        ids.push(id ?? null);
      } catch (err) {
        const error = translateDbError(err, `log attempt #${index}`);
        if (!isRowProblem(error)) throw error;
        ids.push(null);
        failures.push({ index, error });
      }
    }
    this.#log.warn({ count: inputs.length, failed: failures.map((f) => ({ index: f.index, code: f.error.code, err: f.error.message })) }, 'attempt batch partly rejected');
    throw new AttemptBatchError(ids, failures);
  }

  /**
   * FindBestFetcher: every fetcher's score over the distinct attempts matching ANY of `heuristics`,
   * best eligible first. One round trip; the aggregation runs in Postgres. With `options.alone`, the answer's `alone`
   * also scores that heuristic's attempts by themselves (the router's section).
   */
  async findBestFetcher(heuristics: readonly Heuristic[], options: FindBestFetcherOptions = {}): Promise<BestFetcherAnswer> {
    const now = options.now ?? this.#clock.now();
    return withDbErrors('find best fetcher', () => queryBestFetcher(this.#prisma, heuristics, now, options));
  }

  /** Share of the domain's attempts in the last `days` days that were banned; 0 without attempts. */
  async getDomainBanRate(domain: string, days: number): Promise<number> {
    return withDbErrors('domain ban rate', () => domainBanRate(this.#prisma, domain, days, this.#clock.now()));
  }

  /**
   * Attempts, success rate and ban rate per fetcher over the last `sinceDays` days, or the last `sinceMinutes` minutes
   * when given (what the fleet is doing now), priors excluded.
   */
  async statsByFetcher(options: { sinceDays?: number; sinceMinutes?: number } = {}): Promise<AttemptStats[]> {
    const windowMs = options.sinceMinutes !== undefined ? options.sinceMinutes * 60_000 : (options.sinceDays ?? 7) * DAY_MS;
    const since = new Date(this.#clock.now().getTime() - windowMs);
    return withDbErrors('stats by fetcher', () => fetcherStats(this.#prisma, since));
  }

  /** Failed attempts per error type over the last `sinceMinutes` minutes, most first (priors excluded). */
  async errorsByType(options: { sinceMinutes: number }): Promise<AttemptStats[]> {
    const since = new Date(this.#clock.now().getTime() - options.sinceMinutes * 60_000);
    return withDbErrors('errors by type', () => errorTypeStats(this.#prisma, since));
  }

  /** Attempts, success and ban rates per exit tier over the last `sinceDays` (default 7). */
  async statsByTier(options: { sinceDays?: number } = {}): Promise<AttemptStats[]> {
    const since = new Date(this.#clock.now().getTime() - (options.sinceDays ?? 7) * DAY_MS);
    return withDbErrors('stats by exit tier', () => tierStats(this.#prisma, since));
  }

  /** The same per proxy of each tier (masked `http://***@host:port`), busiest first; direct attempts are left out. */
  async statsByProxy(options: { sinceDays?: number } = {}): Promise<ProxyStats[]> {
    const since = new Date(this.#clock.now().getTime() - (options.sinceDays ?? 7) * DAY_MS);
    return withDbErrors('stats by proxy', () => proxyStats(this.#prisma, since));
  }

  /** The same per domain, busiest first. */
  async statsByDomain(options: { sinceDays?: number; limit?: number } = {}): Promise<AttemptStats[]> {
    const since = new Date(this.#clock.now().getTime() - (options.sinceDays ?? 7) * DAY_MS);
    return withDbErrors('stats by domain', () => domainStats(this.#prisma, since, options.limit ?? 50));
  }

  /** Learning velocity: per bucket, the share of attempts routed by learned data and the number of probes. */
  async learningVelocity(options: { sinceHours?: number; bucket?: 'hour' | 'day' } = {}): Promise<VelocityBucket[]> {
    const since = new Date(this.#clock.now().getTime() - (options.sinceHours ?? 24) * 3_600_000);
    return withDbErrors('learning velocity', () => velocity(this.#prisma, since, options.bucket ?? 'hour'));
  }

  /** Retention: delete attempts older than `olderThanDays` (heuristics cascade), in batches. Several round trips. */
  async pruneAttempts(options: { olderThanDays?: number; batchSize?: number } = {}): Promise<PruneResult> {
    const days = options.olderThanDays ?? DEFAULT_RETENTION_DAYS;
    const before = new Date(this.#clock.now().getTime() - days * DAY_MS);
    const result = await withDbErrors('prune attempts', () => pruneBefore(this.#prisma, before, options.batchSize ?? 10_000));
    this.#log.info({ ...result, olderThanDays: days }, 'attempts pruned');
    return result;
  }
}

function isRowProblem(err: unknown): boolean {
  return err instanceof CrawlerError && (err.code === INVALID_ATTEMPT || err.code === DB_ERROR_CODES.constraint);
}
