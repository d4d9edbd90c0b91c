import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheerioCrawler, Configuration, log } from '@crawlee/cheerio';
import type { CheerioAPI } from 'cheerio';
import { addDigest, createTotals, digestDocument, type DigestTotals } from './parse-page.js';

/** Options of {@link crawlWithCrawlee}. */
export interface CrawleeCrawlOptions {
  urls: string[];
  concurrency: number;
}

/**
 * The peer: Crawlee's CheerioCrawler with its defaults except what makes the comparison fair: a fixed concurrency
 * (min = max, so autoscaling cannot under- or over-shoot ours), in-memory storage under a throwaway directory, one
 * retry like ours, and no per-domain delay (Crawlee's default, and ours in the bench).
 */
export async function crawlWithCrawlee(options: CrawleeCrawlOptions): Promise<DigestTotals> {
  log.setLevel(log.LEVELS.WARNING);
  const storageDir = await mkdtemp(join(tmpdir(), 'crawler-bench-crawlee-'));
  const config = new Configuration({
    persistStorage: false,
    purgeOnStart: true,
    storageClientOptions: { localDataDirectory: storageDir, persistStorage: false, writeMetadata: false },
  });
  const totals = createTotals();
  const crawler = new CheerioCrawler(
    {
      minConcurrency: options.concurrency,
      maxConcurrency: options.concurrency,
      maxRequestRetries: 1,
      requestHandler: async ({ $, request }) => {
        // Crawlee bundles its own cheerio (1.0.0-rc.12); the calls the digest makes exist in both versions.
        addDigest(totals, digestDocument($ as unknown as CheerioAPI, request.loadedUrl ?? request.url));
      },
      failedRequestHandler: async () => {
        totals.failedPages++;
      },
    },
    config,
  );
  try {
    await crawler.run(options.urls);
  } finally {
    await crawler.teardown().catch(() => undefined);
    await rm(storageDir, { recursive: true, force: true });
  }
  return totals;
}
