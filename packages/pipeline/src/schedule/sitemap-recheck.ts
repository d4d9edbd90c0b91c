import { linksChangedPerSitemap, systemClock, type Clock, type Logger } from '@crawler/core';
import type { ScheduleStore } from '@crawler/db';
import type { Redis } from 'ioredis';
import type { SitemapReport } from '../crawls/sitemaps.js';
import { Periodic } from '../periodic.js';

/** Settings of {@link SitemapRecheck}. */
export interface SitemapRecheckSettings {
  /** Time between re-reads of each crawl's sitemaps; 0: off. @defaultValue SITEMAP_RECHECK_INTERVAL_MS (900000) */
  intervalMs: number;
  /** Links one re-read of a crawl makes due at most. @defaultValue SITEMAP_RECHECK_MAX_LINKS (1000) */
  maxLinks: number;
}

/** One pass's figures. */
export interface SitemapRecheckPass {
  /** Crawls whose sitemaps this process read in the pass (others were read by another process this period). */
  crawls: number;
  /** Links made due now because their sitemap's `<lastmod>` is newer than their last visit. */
  pulled: number;
}

/**
 * Re-reads the sitemaps of continuous crawls (running, `sitemaps` on, with a revisit policy) every `intervalMs` and
 * makes due now each of the crawl's scheduled links whose `<lastmod>` is newer than its last visit; a lastmod that
 * says unchanged leaves the link on its schedule. The revisit scheduler then claims them as any due link, so the
 * politeness gate and the route-queue bound apply. One process of the fleet reads a crawl's sitemaps per period: a
 * Redis key per crawl, set for the period and never released, is the claim (a process that dies keeps its turn).
 */
export class SitemapRecheck {
  readonly #periodic: Periodic<SitemapRecheckPass>;
  #failing = false;

  constructor(
    private readonly deps: {
      schedule: ScheduleStore;
      /** Reads a crawl's sitemaps as its creation did (CrawlFrontier.readCrawlSitemaps). */
      readSitemaps: (crawl: { seeds: string[]; trackingParams: string[] | null }) => Promise<SitemapReport | null>;
      redis: Redis;
      /** Prefix of the per-crawl claim keys (the queue prefix). */
      prefix: string;
      logger: Logger;
      settings: SitemapRecheckSettings;
      clock?: Clock;
    },
  ) {
    this.#periodic = new Periodic(() => this.#pass(), deps.settings.intervalMs);
  }

  start(): void {
    this.#periodic.start();
  }

  /** One pass now, unless one is running (then that one); null once stopped. */
  runOnce(): Promise<SitemapRecheckPass | null> {
    return this.#periodic.runOnce();
  }

  async #pass(): Promise<SitemapRecheckPass> {
    const { schedule, redis, prefix, logger, settings } = this.deps;
    const clock = this.deps.clock ?? systemClock;
    const pass: SitemapRecheckPass = { crawls: 0, pulled: 0 };
    try {
      for (const crawl of await schedule.sitemapCrawls()) {
        // The claim lasts a period less a margin, so the process that read it last period can take it again on its
        // next tick however the timers drift.
        const claimMs = Math.max(1_000, Math.floor(settings.intervalMs * 0.9));
        if ((await redis.set(`${prefix}:sitemap-recheck:${crawl.id}`, '1', 'PX', claimMs, 'NX')) !== 'OK') continue;
        const report = await this.deps.readSitemaps(crawl);
        if (report === null) continue;
        pass.crawls += 1;
        const urls = [...report.lastModified.keys()];
        if (urls.length === 0) continue;
        const stored = await schedule.scheduledVisits(crawl.id, urls);
        const now = clock.now();
        const ids = linksChangedPerSitemap(report.lastModified, stored, { nowMs: now.getTime(), maxLinks: settings.maxLinks });
        const pulled = await schedule.pullForward(ids, now);
        pass.pulled += pulled.length;
        if (pulled.length > 0) logger.info({ crawlId: crawl.id, pulled: pulled.length, listed: urls.length }, 'sitemap lastmod: changed pages made due now');
      }
      this.#failing = false;
    } catch (err) {
      if (!this.#failing) logger.warn({ err, ...pass }, 'sitemap re-read failed; will try again');
      this.#failing = true;
    }
    return pass;
  }

  /** Stop the timer and wait for a running pass. Idempotent. */
  stop(): Promise<void> {
    return this.#periodic.stop();
  }
}
