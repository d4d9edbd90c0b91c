import { analyzeStaleTables, ensureAttemptPartitions, type PrismaClient } from '@crawler/db';
import type { Logger } from '@crawler/core';
import { Periodic } from '../periodic.js';

/**
 * Keeps the planner's statistics of the crawl's tables in step with their growth (@crawler/db analyzeStaleTables)
 * and the attempt log's day partitions created a week ahead (ensureAttemptPartitions: no cron needed, every worker
 * process does it, one at a time), every `intervalMs` while workers run. A failed check (Postgres away, a role that may not ANALYZE) is logged once
 * per outage and tried again at the next tick; it never touches a job.
 */
export class TableStatsLoop {
  readonly #periodic: Periodic<void>;
  #failing = false;

  constructor(private readonly opts: { prisma: PrismaClient; intervalMs: number; logger: Logger }) {
    this.#periodic = new Periodic(() => this.#check(), opts.intervalMs);
  }

  start(): void {
    this.#periodic.start();
  }

  /** One check, unless one is running. */
  async runOnce(): Promise<void> {
    await this.#periodic.runOnce();
  }

  async #check(): Promise<void> {
    try {
      const created = await ensureAttemptPartitions(this.opts.prisma);
      if (created > 0) this.opts.logger.info({ created }, 'attempt log partitions created ahead');
      const analyzed = await analyzeStaleTables(this.opts.prisma);
      if (analyzed.length > 0) this.opts.logger.debug({ analyzed }, 'planner statistics refreshed for tables that grew');
      this.#failing = false;
    } catch (err) {
      if (!this.#failing) this.opts.logger.warn({ err }, 'could not check table statistics; will try again');
      this.#failing = true;
    }
  }

  /** Stop the timer and wait for a running check. Idempotent. */
  stop(): Promise<void> {
    return this.#periodic.stop();
  }
}
