import type { DigestTotals } from './parse-page.js';

/** Names of the crawls compared in one run. */
export const CRAWLER_NAMES = ['undici', 'crawlee', 'bullmq', 'ours'] as const;
export type CrawlerName = (typeof CRAWLER_NAMES)[number];

/** What one crawl of the synthetic web is asked to do. */
export interface CrawlSpec {
  urls: string[];
  /** Pages in flight at once. */
  concurrency: number;
  /** Redis URL for crawls that need one. */
  redisUrl: string;
}

/** What one crawl measured about itself (the synthetic web's request counts are added by the orchestrator). */
export interface CrawlMeasurement extends DigestTotals {
  /** A {@link CrawlerName}, or a many-domains-only contender (`crawlee-store`, `scrapy`). */
  name: CrawlerName | 'crawlee-store' | 'scrapy';
  /** Wall time from the first enqueue to the last page parsed, in milliseconds (process start-up excluded). */
  elapsedMs: number;
  /** CPU time of the crawling process(es), user + system, in milliseconds. */
  cpuMs: number;
  /** Peak resident set size of the crawling process(es), in bytes (sum over processes where there are several). */
  peakRssBytes: number;
  /** Anything crawl-specific worth reporting (probes, attempts logged, …). */
  extra?: Record<string, number | string>;
}
