import type { ReconcileLoop } from '../reconcile/reconciler.js';
import type { RevisitScheduler } from '../schedule/revisit-scheduler.js';
import type { SitemapRecheck } from '../schedule/sitemap-recheck.js';
import type { TableStatsLoop } from './table-stats-loop.js';

/** How to build each loop; called once, when the loop is first needed. */
export interface BackgroundLoopFactories {
  reconcile(): ReconcileLoop;
  tableStats(): TableStatsLoop;
  scheduler(): RevisitScheduler;
  sitemapRecheck(): SitemapRecheck;
}

/**
 * The periodic work of a process that runs workers, beside the workers themselves: the reconciler (lost jobs rebuilt
 * from Postgres, at start and then periodically), the table-statistics keeper (plans made on a fresh database's empty
 * tables would otherwise stay), the revisit scheduler (due links enqueued; SCHEDULER_INTERVAL_MS=0: off) and the
 * sitemap re-read of continuous crawls (SITEMAP_RECHECK_INTERVAL_MS=0: off).
 */
export class BackgroundLoops {
  readonly #make: BackgroundLoopFactories;
  #reconcile: ReconcileLoop | null = null;
  #tableStats: TableStatsLoop | null = null;
  #scheduler: RevisitScheduler | null = null;
  #sitemapRecheck: SitemapRecheck | null = null;

  constructor(make: BackgroundLoopFactories) {
    this.#make = make;
  }

  /** The revisit scheduler (built on first use, so a CLI command can ask it without starting the loops). */
  scheduler(): RevisitScheduler {
    this.#scheduler ??= this.#make.scheduler();
    return this.#scheduler;
  }

  /** Start every loop; starting again is a no-op for a loop already running. */
  start(): void {
    this.#reconcile ??= this.#make.reconcile();
    this.#reconcile.start();
    this.#tableStats ??= this.#make.tableStats();
    this.#tableStats.start();
    this.scheduler().start();
    this.sitemapRecheck().start();
  }

  /** The sitemap re-read (built on first use). */
  sitemapRecheck(): SitemapRecheck {
    this.#sitemapRecheck ??= this.#make.sitemapRecheck();
    return this.#sitemapRecheck;
  }

  /** Stop each loop that was built, each as its own shutdown step. */
  async stop(step: (name: string, fn: () => Promise<unknown>) => Promise<void>): Promise<void> {
    await step('reconciler', async () => this.#reconcile?.stop());
    await step('table statistics', async () => this.#tableStats?.stop());
    await step('revisit scheduler', async () => this.#scheduler?.stop());
    await step('sitemap re-read', async () => this.#sitemapRecheck?.stop());
  }
}
