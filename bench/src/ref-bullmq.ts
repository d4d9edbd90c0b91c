import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { Agent, request } from 'undici';
import { addDigest, createTotals, digestHtml, type DigestTotals } from './parse-page.js';

/** Options of {@link crawlWithBullmq}. */
export interface BullmqCrawlOptions {
  urls: string[];
  concurrency: number;
  redisUrl: string;
  /** Key prefix, unique per run so parallel runs never share keys. */
  prefix: string;
}

const QUEUE = 'bench-fetch';
const ENQUEUE_BATCH = 1_000;

/**
 * The queue floor: one BullMQ queue, one Worker at `concurrency`, each job fetching and parsing one page with the
 * same undici agent as the limit. What any BullMQ-based crawler pays before it does anything of its own.
 */
export async function crawlWithBullmq(options: BullmqCrawlOptions): Promise<DigestTotals> {
  const producer = new Redis(options.redisUrl, { maxRetriesPerRequest: 3 });
  const workerConn = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  const agent = new Agent({ connections: options.concurrency, keepAliveTimeout: 60_000 });
  const queue = new Queue(QUEUE, { connection: producer, prefix: options.prefix });
  const totals = createTotals();
  let settled = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const count = (): void => {
    if (++settled >= options.urls.length) resolveDone();
  };
  const worker = new Worker<{ url: string }>(
    QUEUE,
    async (job) => {
      const url = job.data.url;
      try {
        const res = await request(url, { dispatcher: agent });
        const html = await res.body.text();
        if (res.statusCode >= 400) totals.failedPages++;
        else addDigest(totals, digestHtml(html, url));
      } catch {
        totals.failedPages++;
      }
      count();
    },
    { connection: workerConn, prefix: options.prefix, concurrency: options.concurrency, autorun: true },
  );
  try {
    for (let i = 0; i < options.urls.length; i += ENQUEUE_BATCH) {
      const batch = options.urls.slice(i, i + ENQUEUE_BATCH);
      await queue.addBulk(batch.map((url) => ({ name: 'fetch', data: { url }, opts: { removeOnComplete: true, removeOnFail: true } })));
    }
    await done;
  } finally {
    await worker.close();
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await agent.close();
    producer.disconnect();
    workerConn.disconnect();
  }
  return totals;
}
