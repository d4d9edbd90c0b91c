import { Agent, request } from 'undici';
import { addDigest, createTotals, digestHtml, type DigestTotals } from './parse-page.js';

/** Options of {@link crawlWithUndici}. */
export interface UndiciCrawlOptions {
  urls: string[];
  concurrency: number;
  /** Per-request timeout, in milliseconds. @defaultValue 30000 */
  timeoutMs?: number;
}

/**
 * The limit: a bare keep-alive undici loop with `concurrency` workers pulling URLs from one list, parsing each page
 * with cheerio. No queue, no store, no retries: nothing a crawler could do less of.
 */
export async function crawlWithUndici(options: UndiciCrawlOptions): Promise<DigestTotals> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  // One pool per origin, sized to the concurrency, so connection setup is paid once and never queued behind.
  const agent = new Agent({ connections: options.concurrency, keepAliveTimeout: 60_000, pipelining: 1 });
  const totals = createTotals();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < options.urls.length) {
      const url = options.urls[next++]!;
      try {
        const res = await request(url, { dispatcher: agent, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
        const html = await res.body.text();
        if (res.statusCode >= 400) totals.failedPages++;
        else addDigest(totals, digestHtml(html, url));
      } catch {
        totals.failedPages++;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(options.concurrency, options.urls.length) }, worker));
  } finally {
    await agent.close();
  }
  return totals;
}
