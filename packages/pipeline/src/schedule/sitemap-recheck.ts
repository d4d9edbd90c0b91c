import { linksChangedPerSitemap, systemClock, type Clock, type Logger } from '@crawler/core';
import type { ScheduleStore } from '@crawler/db';
import type { Redis } from 'ioredis';
import type { SitemapAdmission } from '../crawls/crawl-frontier.js';
import type { SitemapFileState, SitemapReport } from '../crawls/sitemaps.js';
import { Periodic } from '../periodic.js';
import { SitemapFileStates } from './sitemap-file-states.js';

/** Settings of {@link SitemapRecheck}. */
export interface SitemapRecheckSettings {
  /** Time between re-reads of each crawl's sitemaps; 0: off. @defaultValue SITEMAP_RECHECK_INTERVAL_MS (900000) */
  intervalMs: number;
  /** Known links one re-read of a crawl makes due at most. @defaultValue SITEMAP_RECHECK_MAX_LINKS (1000) */
  maxLinks: number;
  /** Newly listed pages one re-read of a crawl admits at most. @defaultValue SITEMAP_RECHECK_MAX_NEW_LINKS (1000) */
  maxNewLinks: number;
}

/** One pass's figures. */
export interface SitemapRecheckPass {
  /** Crawls whose sitemaps this process read in the pass (others were read by another process this period). */
  crawls: number;
  /** Links made due now because their sitemap's `<lastmod>` is newer than their last visit. */
  pulled: number;
  /** Pages listed since the crawl last read its sitemaps, admitted to it as new links. */
  admitted: number;
  /** Sitemap files (robots.txt included) that answered 304: unchanged, not downloaded. */
  unchanged: number;
}

/**
 * Re-reads the sitemaps of continuous crawls (running, `sitemaps` on, with a revisit policy) every `intervalMs`:
 * pages newly listed are admitted to the crawl as its creation admits sitemap entries (CrawlFrontier.admitSitemapUrls:
 * scope, limits, dedup), and each of the crawl's scheduled links whose `<lastmod>` is newer than its last visit is made
 * due now; a lastmod that says unchanged leaves the link on its schedule. The revisit scheduler then claims them as any
 * due link, so the politeness gate and the route-queue bound apply. One process of the fleet reads a crawl's sitemaps
 * per period: a Redis key per crawl, set for the period and never released, is the claim (a process that dies keeps
 * its turn).
 *
 * Re-reads are conditional: the validators each file sent at the last complete re-read (SitemapFileStates) go back as
 * `If-None-Match` / `If-Modified-Since`, and a 304 file adds nothing (its pages were admitted and its lastmods acted on
 * then). They are kept only after a re-read that acted on everything it read: one that a bound cut short (the files or
 * URLs a read may take, `maxLinks`, `maxNewLinks`), that met a lastmod still in the future, or that failed keeps the
 * previous ones, so the files it did not finish come back in full next time.
 */
export class SitemapRecheck {
  readonly #periodic: Periodic<SitemapRecheckPass>;
  readonly #states: SitemapFileStates;
  #failing = false;

  constructor(
    private readonly deps: {
      schedule: ScheduleStore;
      /** Reads a crawl's sitemaps as its creation did, conditionally with `previous` (CrawlFrontier.readCrawlSitemaps). */
      readSitemaps: (crawl: { seeds: string[]; trackingParams: string[] | null }, previous: ReadonlyMap<string, SitemapFileState>) => Promise<SitemapReport | null>;
      /** Admits the listed pages the crawl does not have yet (CrawlFrontier.admitSitemapUrls). */
      admitNew: (crawlId: string, urls: readonly string[], maxLinks: number) => Promise<SitemapAdmission>;
      redis: Redis;
      /** Prefix of the per-crawl claim and file-state keys (the queue prefix). */
      prefix: string;
      logger: Logger;
      settings: SitemapRecheckSettings;
      clock?: Clock;
    },
  ) {
    this.#periodic = new Periodic(() => this.#pass(), deps.settings.intervalMs);
    this.#states = new SitemapFileStates(deps.redis, deps.prefix, deps.settings.intervalMs);
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
    const pass: SitemapRecheckPass = { crawls: 0, pulled: 0, admitted: 0, unchanged: 0 };
    try {
      for (const crawl of await schedule.sitemapCrawls()) {
        // The claim lasts a period less a margin, so the process that read it last period can take it again on its
        // next tick however the timers drift.
        const claimMs = Math.max(1_000, Math.floor(settings.intervalMs * 0.9));
        if ((await redis.set(`${prefix}:sitemap-recheck:${crawl.id}`, '1', 'PX', claimMs, 'NX')) !== 'OK') continue;
        const previous = await this.#states.load(crawl.id);
        const report = await this.deps.readSitemaps(crawl, previous);
        if (report === null) continue;
        pass.crawls += 1;
        pass.unchanged += report.unchanged?.length ?? 0;
        const admission = await this.deps.admitNew(crawl.id, report.urls, settings.maxNewLinks);
        pass.admitted += admission.admitted;
        if (admission.admitted > 0) logger.info({ crawlId: crawl.id, admitted: admission.admitted, more: admission.more }, 'sitemap: newly listed pages admitted');
        const urls = [...report.lastModified.keys()];
        const stored = urls.length === 0 ? [] : await schedule.scheduledVisits(crawl.id, urls);
        const now = clock.now();
        const ids = linksChangedPerSitemap(report.lastModified, stored, { nowMs: now.getTime(), maxLinks: settings.maxLinks });
        const pulled = await schedule.pullForward(ids, now);
        pass.pulled += pulled.length;
        if (pulled.length > 0) logger.info({ crawlId: crawl.id, pulled: pulled.length, listed: urls.length }, 'sitemap lastmod: changed pages made due now');
        // Everything read was acted on: the next re-read may skip what has not changed since. A lastmod still in the
        // future is judged once it is past, so its file must be read again.
        const complete = !report.truncated && !admission.more && ids.length < settings.maxLinks && ![...report.lastModified.values()].some((t) => t > now.getTime());
        if (complete) await this.#states.save(crawl.id, report.fileStates ?? new Map());
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
