import { analyzeStaleTables, type PrismaClient } from '@crawler/db';
import type { Logger } from '@crawler/core';

/**
 * Keeps the planner's statistics of the crawl's tables in step with their growth (@crawler/db analyzeStaleTables),
 * every `intervalMs` while workers run. A failed check (Postgres away, a role that may not ANALYZE) is logged once
 * per outage and tried again at the next tick; it never touches a job.
 */
export class TableStatsLoop {
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #failing = false;

  constructor(private readonly opts: { prisma: PrismaClient; intervalMs: number; logger: Logger }) {}

  start(): void {
    if (this.#timer || !(this.opts.intervalMs > 0)) return;
    this.#timer = setInterval(() => void this.runOnce(), this.opts.intervalMs);
    this.#timer.unref();
  }

  /** One check, unless one is running. */
  runOnce(): Promise<void> {
    this.#running ??= this.#check().finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  async #check(): Promise<void> {
    try {
      const analyzed = await analyzeStaleTables(this.opts.prisma);
      if (analyzed.length > 0) this.opts.logger.debug({ analyzed }, 'planner statistics refreshed for tables that grew');
      this.#failing = false;
    } catch (err) {
      if (!this.#failing) this.opts.logger.warn({ err }, 'could not check table statistics; will try again');
      this.#failing = true;
    }
  }

  /** Stop the timer and wait for a running check. Idempotent. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#running;
  }
}
