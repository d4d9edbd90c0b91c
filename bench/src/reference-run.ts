import type { DigestTotals } from './parse-page.js';
import { crawlWithBullmq } from './ref-bullmq.js';
import { crawlWithCrawlee } from './ref-crawlee.js';
import { crawlWithUndici } from './ref-undici.js';
import type { CrawlMeasurement, CrawlSpec } from './reference-result.js';

/** The references a run can compare against. */
export type ReferenceName = 'undici' | 'crawlee' | 'crawlee-store' | 'bullmq';

async function runReference(name: ReferenceName, spec: CrawlSpec): Promise<DigestTotals> {
  switch (name) {
    case 'undici':
      return crawlWithUndici(spec);
    case 'crawlee':
      return crawlWithCrawlee(spec);
    case 'crawlee-store':
      return crawlWithCrawlee({ ...spec, keepPages: true });
    case 'bullmq':
      return crawlWithBullmq({ ...spec, prefix: `{crawler-bench-${process.pid}}` });
  }
}

/** Crawl with one reference in this process and measure it: wall time of the crawl call, this process's CPU and peak RSS. */
export async function measureReference(name: ReferenceName, spec: CrawlSpec): Promise<CrawlMeasurement> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const totals = await runReference(name, spec);
  const elapsedMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return {
    name,
    ...totals,
    elapsedMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    // maxRSS is in kilobytes on Linux.
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
  };
}
