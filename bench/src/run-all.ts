#!/usr/bin/env node
/**
 * The whole benchmark suite: `npm run bench` (root) or `node bench/dist/run-all.js [flags]`.
 * Crawls the synthetic web with each reference and with our crawler at each size, prints tables of pages/s with
 * ratios measured in the same run, writes JSON into bench/results/, then runs the store and browser benches if
 * their modules exist.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseWithUsage } from './cli-args.js';
import { forkRpcChild, type RpcChild } from './child-rpc.js';
import { crawlWithOurs, oursUnavailableReason } from './ours.js';
import { checksumMismatches, formatScaleTable, formatSizeTable, figuresOf, ratiosWithin, type CrawlRow } from './report.js';
import { CRAWLER_NAMES, type CrawlerName, type CrawlMeasurement } from './reference-result.js';
import { listPageUrls, type RequestStats } from './synthetic-web.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const BENCH_ROOT = resolve(HERE, '..');

const USAGE = `usage: node bench/dist/run-all.js [options]
  --sizes 1000           pages per crawl, comma-separated (default 1000; the scale table wants 1000,10000)
  --large                add the 50k size
  --second-pages 1000    pages of our second crawl (known domains), capped at each size
  --concurrency 16       pages in flight for every crawler
  --latency-ms 0         fixed server delay per request
  --domains 4            loopback domains (127.0.0.10, .11, ...)
  --crawlers LIST        subset of ${CRAWLER_NAMES.join(',')} (default all)
  --rounds 1             repeat each size and keep the median row per crawler
  --store                also run the store's findBestFetcher bench at 10k and 100k attempts (1M with --large)
  --browser              also run the Playwright bench (bench/dist/playwright-bench.js)
  --redis-url URL        default redis://127.0.0.1:6379
  --out DIR              default bench/results`;

interface RunOptions {
  sizes: number[];
  concurrency: number;
  latencyMs: number;
  domains: number;
  crawlers: CrawlerName[];
  rounds: number;
  store: boolean;
  browser: boolean;
  large: boolean;
  secondPages: number;
  redisUrl: string;
  outDir: string;
}

function parseOptions(argv: string[]): RunOptions {
  const { values } = parseWithUsage('run-all', USAGE, () => parseArgs({
    args: argv,
    options: {
      sizes: { type: 'string', default: '1000' },
      'second-pages': { type: 'string', default: '1000' },
      large: { type: 'boolean', default: false },
      concurrency: { type: 'string', default: '16' },
      'latency-ms': { type: 'string', default: '0' },
      domains: { type: 'string', default: '4' },
      crawlers: { type: 'string', default: CRAWLER_NAMES.join(',') },
      rounds: { type: 'string', default: '1' },
      store: { type: 'boolean', default: false },
      browser: { type: 'boolean', default: false },
      'redis-url': { type: 'string', default: 'redis://127.0.0.1:6379' },
      out: { type: 'string', default: join(BENCH_ROOT, 'results') },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }));
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const positive = (name: string, v: string, min = 1): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name}: expected an integer >= ${min}, got ${JSON.stringify(v)}`);
    return n;
  };
  const sizes = values.sizes.split(',').map((s) => positive('sizes', s.trim()));
  if (values.large && !sizes.includes(50_000)) sizes.push(50_000);
  const crawlers = values.crawlers.split(',').map((s) => s.trim()) as CrawlerName[];
  for (const c of crawlers) if (!CRAWLER_NAMES.includes(c)) throw new Error(`--crawlers: unknown crawler ${JSON.stringify(c)}`);
  return {
    sizes,
    concurrency: positive('concurrency', values.concurrency),
    latencyMs: positive('latency-ms', values['latency-ms'], 0),
    domains: positive('domains', values.domains),
    crawlers,
    rounds: positive('rounds', values.rounds),
    store: values.store,
    browser: values.browser,
    large: values.large,
    secondPages: positive('second-pages', values['second-pages']),
    redisUrl: values['redis-url'],
    outDir: resolve(values.out),
  };
}

interface CpuUsage {
  user: number;
  system: number;
}
const cpuMsBetween = (a: CpuUsage, b: CpuUsage): number => (b.user - a.user + b.system - a.system) / 1000;

/** Run one reference in a fresh process. */
async function runReference(name: Exclude<CrawlerName, 'ours'>, urls: string[], opts: RunOptions): Promise<CrawlMeasurement> {
  const child = forkRpcChild(join(HERE, 'reference-child.js'));
  try {
    return await child.call<CrawlMeasurement>('crawl', { name, spec: { urls, concurrency: opts.concurrency, redisUrl: opts.redisUrl } });
  } finally {
    await child.stop();
  }
}

async function measureAtServer<T>(web: RpcChild, fn: () => Promise<T>): Promise<{ value: T; server: RequestStats; serverCpuMs: number }> {
  await web.call('reset');
  const cpu0 = await web.call<CpuUsage>('cpu');
  const value = await fn();
  const server = await web.call<RequestStats>('stats');
  const cpu1 = await web.call<CpuUsage>('cpu');
  return { value, server, serverCpuMs: cpuMsBetween(cpu0, cpu1) };
}

/** One round at one size: every crawler in turn, each against the same pages. */
async function runSize(size: number, opts: RunOptions, oursReady: boolean, round: number): Promise<CrawlRow[]> {
  const web = forkRpcChild(join(HERE, 'synthetic-web-child.js'));
  const rows: CrawlRow[] = [];
  const base = { size, runSize: size, concurrency: opts.concurrency, latencyMs: opts.latencyMs };
  try {
    // Twice the pages: our second crawl needs unseen pages on the same domains.
    const { origins } = await web.call<{ origins: string[] }>('start', { pages: size * 2, domains: opts.domains, latencyMs: opts.latencyMs });
    const all = listPageUrls(origins, size * 2);
    const urls = all.slice(0, size);
    // Each round starts with a different crawler, so a load spike or a warm page cache favours no one systematically.
    const shift = (round - 1) % opts.crawlers.length;
    const order = [...opts.crawlers.slice(shift), ...opts.crawlers.slice(0, shift)];
    for (const name of order) {
      process.stdout.write(`  ${name.padEnd(8)} ${size} pages … `);
      try {
        if (name === 'ours') {
          if (!oursReady) {
            process.stdout.write('skipped (not runnable, see above)\n');
            continue;
          }
          let firstServer: RequestStats | null = null;
          let firstCpu = 0;
          let cpuMark = await web.call<CpuUsage>('cpu');
          await web.call('reset');
          const result = await crawlWithOurs({
            urls,
            // The second crawl measures learning, not scale: a thousand unseen pages say as much as fifty thousand.
            secondUrls: all.slice(size, size + Math.min(size, opts.secondPages)),
            concurrency: opts.concurrency,
            redisUrl: opts.redisUrl,
            betweenCrawls: async () => {
              firstServer = await web.call<RequestStats>('stats');
              const now = await web.call<CpuUsage>('cpu');
              firstCpu = cpuMsBetween(cpuMark, now);
              cpuMark = now;
              await web.call('reset');
            },
          });
          const secondServer = await web.call<RequestStats>('stats');
          const secondCpu = cpuMsBetween(cpuMark, await web.call<CpuUsage>('cpu'));
          rows.push({ ...base, label: 'ours', measurement: result.first, server: firstServer!, serverCpuMs: firstCpu });
          rows.push({ ...base, size: Math.min(size, opts.secondPages), label: 'ours (2nd crawl)', measurement: result.second, server: secondServer, serverCpuMs: secondCpu });
        } else {
          const { value, server, serverCpuMs } = await measureAtServer(web, () => runReference(name, urls, opts));
          rows.push({ ...base, label: name, measurement: value, server, serverCpuMs });
        }
        const mine = rows.filter((r) => r.label === name || r.label.startsWith(`${name} (`));
        process.stdout.write(`${mine.map((r) => `${figuresOf(r).pagesPerSec.toFixed(0)} pages/s${r.label === name ? '' : ` ${r.label.slice(name.length + 1)}`}`).join(', ')}\n`);
      } catch (err) {
        process.stdout.write(`FAILED: ${(err as Error).message}\n`);
      }
    }
  } finally {
    await web.stop();
  }
  return rows;
}

function median(values: (number | null)[]): number | null {
  const v = values.filter((x): x is number => x !== null).sort((a, b) => a - b);
  return v.length === 0 ? null : v.length % 2 ? v[(v.length - 1) / 2]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2;
}

/**
 * Per (size, label): the row with the median pages/s over rounds, carrying the MEDIAN OF PER-ROUND RATIOS. A ratio is
 * only taken between crawls of the same round (minutes apart), never across rounds.
 */
function medianRows(rounds: CrawlRow[][]): CrawlRow[] {
  const groups = new Map<string, { rows: CrawlRow[]; ratios: NonNullable<CrawlRow['ratios']>[] }>();
  for (const round of rounds) {
    for (const size of new Set(round.map((r) => r.runSize))) {
      const ofSize = round.filter((r) => r.runSize === size);
      for (const [row, ratios] of ratiosWithin(ofSize)) {
        const key = `${row.runSize}\u0000${row.label}`;
        const g = groups.get(key) ?? { rows: [], ratios: [] };
        g.rows.push(row);
        g.ratios.push(ratios);
        groups.set(key, g);
      }
    }
  }
  return [...groups.values()].map((g) => {
    const sorted = [...g.rows].sort((a, b) => figuresOf(a).pagesPerSec - figuresOf(b).pagesPerSec);
    const row = sorted[Math.floor((sorted.length - 1) / 2)]!;
    if (rounds.length === 1) return row;
    return {
      ...row,
      ratios: {
        vsLimit: median(g.ratios.map((r) => r.vsLimit)),
        vsPeer: median(g.ratios.map((r) => r.vsPeer)),
        cpuVsPeer: median(g.ratios.map((r) => r.cpuVsPeer)),
      },
    };
  });
}

/** Run a sibling bench module (store, browser) if it was built, in its own process with inherited output. */
async function runOptionalBench(file: string, args: string[]): Promise<number | null> {
  const path = join(HERE, file);
  if (!existsSync(path)) {
    console.log(`\n(${file} not present: skipped)`);
    return null;
  }
  console.log(`\n## ${file}\n`);
  return new Promise((resolveExit) => {
    const child = spawn(process.execPath, [path, ...args], { stdio: 'inherit' });
    child.on('exit', (code) => resolveExit(code ?? 1));
  });
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const startedAt = new Date();
  console.log(`# crawler bench ${startedAt.toISOString()}`);
  console.log(`cpus ${cpus().length}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}, concurrency ${opts.concurrency}, latency ${opts.latencyMs} ms, domains ${opts.domains}`);
  let oursReady = false;
  if (opts.crawlers.includes('ours')) {
    const reason = await oursUnavailableReason();
    oursReady = reason === null;
    if (reason) console.log(`our crawler is not runnable yet: ${reason}`);
  }

  const rounds: CrawlRow[][] = [];
  for (let round = 1; round <= opts.rounds; round++) {
    const rows: CrawlRow[] = [];
    for (const size of opts.sizes) {
      console.log(`\nround ${round}/${opts.rounds}, ${size} pages`);
      rows.push(...(await runSize(size, opts, oursReady, round)));
    }
    rounds.push(rows);
  }
  const rows = medianRows(rounds);

  for (const size of opts.sizes) {
    const ofSize = rows.filter((r) => r.runSize === size);
    if (ofSize.length === 0) continue;
    console.log(`\n## ${size} pages, concurrency ${opts.concurrency}, latency ${opts.latencyMs} ms${opts.rounds > 1 ? `, median of ${opts.rounds}` : ''}\n`);
    console.log(formatSizeTable(ofSize));
    for (const r of ofSize.filter((x) => x.label.startsWith('ours'))) {
      const e = r.measurement.extra ?? {};
      const n = (k: string, d = 1) => Number(e[k] ?? 0).toFixed(d);
      console.log(
        `\n${r.label}: probes/page ${n('probesPerPage', 3)} (decisions: learned ${e.learnedDecisions}, probe ${e.probeDecisions}, other ${e.otherDecisions}), ` +
          `attempts ${e.attempts}, content rows ${e.contentRows}, CPU ms/page router ${n('routerCpuMsPerPage')} fetcher ${n('fetcherCpuMsPerPage')}, ` +
          `wall ${(r.measurement.elapsedMs / 1000).toFixed(1)} s (bench-observed ${(Number(e.observedWallMs ?? 0) / 1000).toFixed(1)} s)`,
      );
    }
  }
  if (opts.sizes.length > 1) console.log(`\n## throughput by size\n\n${formatScaleTable(rows)}`);
  const mismatches = checksumMismatches(rows);
  if (mismatches.length > 0) console.log(`\nWARNING: crawls parsed different content:\n  ${mismatches.join('\n  ')}`);

  await mkdir(opts.outDir, { recursive: true });
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  const report = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model, loadavgAtEnd: loadavg(), node: process.version },
    options: opts,
    rows: rows.map((r) => ({ ...r, figures: figuresOf(r) })),
    allRounds: opts.rounds > 1 ? rounds.map((round) => round.map((r) => ({ ...r, figures: figuresOf(r) }))) : undefined,
    checksumMismatches: mismatches,
  };
  const file = join(opts.outDir, `crawl-${stamp}.json`);
  await writeFile(file, JSON.stringify(report, null, 2));
  await writeFile(join(opts.outDir, 'crawl-latest.json'), JSON.stringify(report, null, 2));
  console.log(`\nresults: ${file}`);

  // The store bench takes attempt counts as arguments; a million attempts takes minutes to load, so only with --large.
  if (opts.store) await runOptionalBench('store-bench.js', opts.large ? ['10000', '100000', '1000000'] : ['10000', '100000']);
  if (opts.browser) await runOptionalBench('playwright-bench.js', []);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
