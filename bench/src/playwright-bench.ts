/**
 * Our Playwright fetcher against Crawlee's PlaywrightCrawler over the same JS-rendered pages, same concurrency,
 * same Chromium, same run. Each side runs in its own child process so RSS (summed over the child and its browser
 * processes) belongs to one crawler only. Usage: `node bench/dist/playwright-bench.js [pages] [concurrency]`.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsRenderedPage, startTestServer, type TestServer } from '@crawler/testkit';
import { startRssSampler, summariseRss, type RssSample } from './playwright-rss.js';
import { benchEnv } from './env.js';

const CHROMIUM = benchEnv().chromiumPath;
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--disable-sync',
];

type Side = 'ours' | 'crawlee';

interface SideResult {
  side: Side;
  pages: number;
  rendered: number;
  failed: number;
  elapsedMs: number;
  pagesPerSec: number;
  rss: ReturnType<typeof summariseRss>;
  samples: RssSample[];
}

/** The marker each page shows only once its script ran: proof the page was rendered, not just loaded. */
const renderedMarker = (i: number) => `Rendered sentence number ${i}.`;

async function serveCorpus(): Promise<TestServer> {
  return startTestServer({
    '/p/*': (req, res) => {
      const i = Number((req.url ?? '').split('/')[2]);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(jsRenderedPage({ title: `Page ${i}`, paragraphs: [renderedMarker(i), 'The rest of the article is ordinary prose about a harbour town.'] }));
    },
  });
}

async function runOurs(urls: string[], concurrency: number): Promise<Omit<SideResult, 'side' | 'pages'>> {
  const { createPlaywrightFetcher } = await import('@crawler/fetchers');
  const fetcher = createPlaywrightFetcher({ allowPrivateNetworks: true, chromiumPath: CHROMIUM, browser: { maxPages: concurrency } });
  let done = 0;
  let rendered = 0;
  let failed = 0;
  const sampler = startRssSampler(() => done);
  const t0 = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < urls.length) {
      const i = next++;
      try {
        const r = await fetcher.fetch({ url: urls[i] as string });
        if (r.text?.includes(renderedMarker(i))) rendered++;
      } catch {
        failed++;
      }
      done++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsedMs = performance.now() - t0;
  const samples = sampler.stop();
  await fetcher.close();
  return { rendered, failed, elapsedMs, pagesPerSec: (urls.length * 1000) / elapsedMs, rss: summariseRss(samples), samples };
}

async function runCrawlee(urls: string[], concurrency: number): Promise<Omit<SideResult, 'side' | 'pages'>> {
  const { PlaywrightCrawler, Configuration, log } = await import('@crawlee/playwright');
  const { chromium } = await import('playwright');
  log.setLevel(log.LEVELS.WARNING);
  const storageDir = mkdtempSync(join(tmpdir(), 'crawler-bench-pw-crawlee-'));
  const config = new Configuration({
    persistStorage: false,
    purgeOnStart: true,
    storageClientOptions: { localDataDirectory: storageDir, persistStorage: false, writeMetadata: false },
  });
  let done = 0;
  let rendered = 0;
  let failed = 0;
  const indexOf = new Map(urls.map((u, i) => [u, i]));
  const crawler = new PlaywrightCrawler(
    {
      // min = max: autoscaling must neither under- nor over-shoot the concurrency we run at.
      minConcurrency: concurrency,
      maxConcurrency: concurrency,
      maxRequestRetries: 1,
      launchContext: { launcher: chromium, launchOptions: { executablePath: CHROMIUM, args: ARGS, headless: true } },
      requestHandler: async ({ page, request }) => {
        const html = await page.content();
        if (html.includes(renderedMarker(indexOf.get(request.url) ?? -1))) rendered++;
        done++;
      },
      failedRequestHandler: async () => {
        failed++;
        done++;
      },
    },
    config,
  );
  const sampler = startRssSampler(() => done);
  const t0 = performance.now();
  try {
    await crawler.run(urls);
  } finally {
    await crawler.teardown().catch(() => undefined);
  }
  const elapsedMs = performance.now() - t0;
  const samples = sampler.stop();
  rmSync(storageDir, { recursive: true, force: true });
  return { rendered, failed, elapsedMs, pagesPerSec: (urls.length * 1000) / elapsedMs, rss: summariseRss(samples), samples };
}

async function child(side: Side, pages: number, concurrency: number): Promise<void> {
  const server = await serveCorpus();
  const urls = Array.from({ length: pages }, (_, i) => server.url(`/p/${i}`));
  try {
    const r = side === 'ours' ? await runOurs(urls, concurrency) : await runCrawlee(urls, concurrency);
    process.stdout.write(`\nRESULT ${JSON.stringify({ side, pages, ...r })}\n`);
  } finally {
    await server.close();
  }
}

function runChild(side: Side, pages: number, concurrency: number): Promise<SideResult> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', side, String(pages), String(concurrency)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    proc.stdout.on('data', (b: Buffer) => (out += b.toString()));
    proc.on('error', reject);
    proc.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      if (code !== 0 || !line) return reject(new Error(`${side} child exited ${code}: ${out.slice(-2000)}`));
      resolve(JSON.parse(line.slice('RESULT '.length)) as SideResult);
    });
  });
}

const mib = (b: number) => (b / 1024 / 1024).toFixed(0);

async function main(): Promise<void> {
  const [, , flag, a, b, c] = process.argv;
  if (flag === '--child') return child(a as Side, Number(b), Number(c));
  const pages = Number(flag ?? 500);
  const concurrency = Number(a ?? 4);
  const chromiumVersion = execFileSync(CHROMIUM, ['--version']).toString().trim();
  const ours = await runChild('ours', pages, concurrency);
  const crawlee = await runChild('crawlee', pages, concurrency);
  const summary = {
    at: new Date().toISOString(),
    chromium: chromiumVersion,
    pages,
    concurrency,
    ratioPagesPerSec: ours.pagesPerSec / crawlee.pagesPerSec,
    ours: { ...ours, samples: undefined },
    crawlee: { ...crawlee, samples: undefined },
  };
  const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'playwright-bench.json'), JSON.stringify({ ...summary, samples: { ours: ours.samples, crawlee: crawlee.samples } }, null, 2));
  const row = (r: SideResult) =>
    `| ${r.side.padEnd(7)} | ${r.pagesPerSec.toFixed(2).padStart(7)} | ${String(r.rendered).padStart(8)}/${r.pages} | ${String(r.failed).padStart(6)} | ${mib(r.rss.peakWarmupBytes).padStart(10)} | ${mib(r.rss.peakAfterWarmupBytes).padStart(11)} | ${r.rss.growthAfterWarmup.toFixed(2).padStart(6)} |`;
  console.log(`\nPlaywright fetcher vs Crawlee PlaywrightCrawler — ${pages} JS-rendered pages, concurrency ${concurrency}, ${chromiumVersion}`);
  console.log('| side    | pages/s | rendered | failed | peak MiB ≤100 | peak MiB >100 | growth |');
  console.log('|---------|---------|----------|--------|---------------|---------------|--------|');
  console.log(row(ours));
  console.log(row(crawlee));
  console.log(`\nours / crawlee pages/s = ${summary.ratioPagesPerSec.toFixed(2)}×`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
