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
  /**
   * Keep every page as Crawlee's users do: its default persisted storage (request queue and dataset on disk) and
   * `pushData` of each page (URL, status, title, body) to the default dataset. @defaultValue false (in memory,
   * nothing kept)
   */
  keepPages?: boolean;
}

/**
 * The peer: Crawlee's CheerioCrawler with its defaults except what makes the comparison fair: a fixed concurrency
 * (min = max, so autoscaling cannot under- or over-shoot ours), in-memory storage under a throwaway directory, one
 * retry like ours, and no per-domain delay (Crawlee's default, and ours in the bench).
 */
export async function crawlWithCrawlee(options: CrawleeCrawlOptions): Promise<DigestTotals> {
  log.setLevel(log.LEVELS.WARNING);
  const storageDir = await mkdtemp(join(tmpdir(), 'crawler-bench-crawlee-'));
  const persist = options.keepPages === true;
  const config = new Configuration({
    persistStorage: persist,
    purgeOnStart: true,
    storageClientOptions: persist ? { localDataDirectory: storageDir } : { localDataDirectory: storageDir, persistStorage: false, writeMetadata: false },
  });
  const totals = createTotals();
  const crawler = new CheerioCrawler(
    {
      minConcurrency: options.concurrency,
      maxConcurrency: options.concurrency,
      maxRequestRetries: 1,
      requestHandler: async ({ $, request, body, response, pushData }) => {
        // Crawlee bundles its own cheerio (1.0.0-rc.12); the calls the digest makes exist in both versions.
        const digest = digestDocument($ as unknown as CheerioAPI, request.loadedUrl ?? request.url);
        addDigest(totals, digest);
        if (persist) {
          await pushData({ url: request.loadedUrl ?? request.url, status: response.statusCode, title: digest.title, body: String(body) });
        }
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
