/**
 * Store benchmark: findBestFetcher latency at 10k, 100k and 1M attempts (8 heuristics each, one domain on 10%).
 * Run after build: `node bench/dist/store-bench.js [sizes...]`. Latencies are wall-clock per call through the
 * AttemptStore (one round trip), reported as p50/p95 and as ratios to two references measured in the same run on the
 * same client: a trivial `SELECT 1` round trip, and the floor of the query itself (a bare count of the matching index
 * entries, no de-duplication and no decay), so the figures survive a busy machine.
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { AttemptStore } from '@crawler/db';
import { createTestDatabase } from '@crawler/db/testing';
import type { Heuristic } from '@crawler/core';
import { HOT_DOMAIN, loadAttempts } from './store-load.js';

const QUERIES: Record<string, Heuristic[]> = {
  // https://hot.example/news/2024/story.html as core's URL extractor describes it
  'hot url (domain+suffix+depth)': [
    { type: 'domain', value: HOT_DOMAIN },
    { type: 'suffix', value: '.html' },
    { type: 'path_depth', value: '3' },
  ],
  'hot domain only': [{ type: 'domain', value: HOT_DOMAIN }],
  'cold domain + rare suffix': [
    { type: 'domain', value: 'd42.example' },
    { type: 'suffix', value: '.aspx' },
  ],
};

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function time(fn: () => Promise<unknown>, budgetMs: number, maxRuns: number): Promise<number[]> {
  for (let i = 0; i < 3; i++) await fn();
  const out: number[] = [];
  const start = performance.now();
  while (out.length < maxRuns && (out.length < 10 || performance.now() - start < budgetMs)) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
  const run = sizes.length ? sizes : [10_000, 100_000, 1_000_000];
  const lines: string[] = [];
  for (const n of run) {
    const db = await createTestDatabase(`bench_store_${n}`);
    try {
      const t0 = performance.now();
      await loadAttempts(db.url, n);
      const loadS = (performance.now() - t0) / 1000;
      const store = new AttemptStore({ prisma: db.prisma });
      // Write cost with the rollup triggers on: 2,000 attempts of the same shape, in batches of 50.
      const batch = (b: number) =>
        Array.from({ length: 50 }, (_, i) => ({
          url: `https://hot.example/w/${b}/${i}.html`,
          fetcher: 'simple_http',
          success: i % 5 !== 0,
          heuristics: [
            { type: 'domain', value: i % 10 === 0 ? HOT_DOMAIN : `d${(b * 50 + i) % 5000}.example` },
            { type: 'suffix', value: '.html' },
            { type: 'path_depth', value: String(1 + (i % 8)) },
            { type: 'contains_static', value: 'true' },
            { type: 'status_200', value: 'true' },
            { type: 'server_nginx', value: 'true' },
            { type: 'has_spa', value: 'false' },
            { type: 'empty_body', value: 'false' },
          ],
        }));
      const w0 = performance.now();
      for (let b = 0; b < 40; b++) await store.logAttempts(batch(b));
      const writeS = (performance.now() - w0) / 1000;
      const rt = await time(() => db.prisma.$queryRawUnsafe('SELECT 1'), 2000, 200);
      const rtP50 = percentile(rt, 50);
      console.log(`\nload average ${loadavg().map((x) => x.toFixed(1)).join(' ')} on ${cpus().length} cores`);
      console.log(`${n.toLocaleString('en')} attempts (${(n * 8).toLocaleString('en')} heuristic rows), loaded in ${loadS.toFixed(1)} s; SELECT 1 round trip p50 ${rtP50.toFixed(2)} ms; logAttempts ${(2000 / writeS).toFixed(0)} attempts/s (batches of 50)`);
      for (const [name, hs] of Object.entries(QUERIES)) {
        const r = await store.findBestFetcher(hs);
        const matched = r.scores.reduce((s, x) => s + x.sampleSize, 0);
        const samples = await time(() => store.findBestFetcher(hs), 15_000, 200);
        const scan = await time(() => store.findBestFetcher(hs, { strategy: 'scan' }), 8_000, 50);
        const floor = await time(
          () =>
            db.prisma.$queryRawUnsafe(
              'SELECT count(*) FROM attempt_heuristics WHERE (heuristic_type, heuristic_value) IN (SELECT * FROM unnest($1::text[], $2::text[]))',
              hs.map((h) => h.type),
              hs.map((h) => h.value),
            ),
          5_000,
          100,
        );
        const p50 = percentile(samples, 50);
        const p95 = percentile(samples, 95);
        const floorP50 = percentile(floor, 50);
        const line = `| ${n.toLocaleString('en')} | ${name} | ${matched.toLocaleString('en')} | ${samples.length} | ${p50.toFixed(1)} | ${p95.toFixed(1)} | ${(p50 / rtP50).toFixed(0)}× | ${floorP50.toFixed(1)} | ${(p50 / floorP50).toFixed(2)}× | ${percentile(scan, 50).toFixed(1)} | ${percentile(scan, 95).toFixed(1)} |`;
        console.log(line);
        lines.push(line);
      }
    } finally {
      await db.drop();
    }
  }
  console.log('\n| attempts | query | distinct matching attempts | runs | p50 ms | p95 ms | p50 / SELECT 1 | scan floor p50 ms | p50 / floor | exact scan p50 ms | exact scan p95 ms |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const l of lines) console.log(l);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
