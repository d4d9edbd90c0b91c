/**
 * Where one big page's memory goes on its way through a fetch worker, stage by stage, without Redis or Postgres: the
 * plain-HTTP fetch (undici, the body read), the analysis (on a thread of the pool, as the worker runs it, or here with
 * --threads 0), the text the crawl's link discovery reads and its links, and the compressed row the outcome writes.
 * Each stage keeps what the worker keeps alive across it (the response, its text once read). Printed per stage: the
 * process's RSS, its peak so far (getrusage maxRSS, which a sampling timer misses during a synchronous parse), and the
 * main heap's and off-heap sizes, as growth from before the page.
 *
 *   node --expose-gc dist/page-memory.js --case links500k [--threads 1]
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { HOSTILE_BODIES } from './hostile-bodies.js';

const MiB = 1024 * 1024;

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] ?? fallback : fallback;
}

interface Mark { stage: string; rssMiB: number; peakMiB: number; heapMiB: number; externalMiB: number; ms: number }

async function main(): Promise<void> {
  const name = arg('case', 'links500k');
  const threads = Number(arg('threads', '1'));
  const make = HOSTILE_BODIES[name];
  if (!make) throw new Error(`unknown case ${name}; one of ${Object.keys(HOSTILE_BODIES).join(', ')}`);
  // Made by another process: making it here would set this one's peak RSS before the page is fetched.
  const file = join(tmpdir(), `page-memory-${name}.html`);
  if (process.argv.includes('--make')) {
    writeFileSync(file, make());
    return;
  }
  if (!existsSync(file)) execFileSync(process.execPath, [process.argv[1]!, '--case', name, '--make']);
  const { createHttpFetcher } = await import('@crawler/fetchers');
  const { AnalysisPool, analysisInputOf } = await import('@crawler/pipeline');
  const { extractLinks } = await import('@crawler/core');
  const { prepareContentRow } = await import('@crawler/db');

  // The page is made before anything is measured, and the warm-up page is a small one.
  const page = readFileSync(file);
  const small = Buffer.from('<!doctype html><html><head><title>t</title></head><body><p>hello there</p><a href="/a">a</a></body></html>');
  let serve: Buffer = small;
  const server = createServer((_q, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': String(serve.length) });
    res.end(serve);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const fetcher = createHttpFetcher({ allowPrivateNetworks: true });
  const pool = new AnalysisPool({ threads });
  pool.warm();

  const onePage = async (mark: (stage: string) => void) => {
    const res = await fetcher.fetch({ url, timeoutMs: 60_000, maxBytes: 10 * MiB });
    mark('fetched');
    const analysis = await pool.analyze(analysisInputOf(res));
    mark('analysed');
    const text = res.text;
    mark('text');
    const links = text === null ? null : extractLinks(text, res.finalUrl, { maxLinks: 5000, feeds: true });
    mark('links');
    const row = await prepareContentRow({ linkId: 'l', body: res.body, contentType: res.contentType, httpStatus: res.status, finalUrl: res.finalUrl, fetcher: 'simple_http', headers: res.headers, textSha256: analysis.textSha256 } as never, new Date());
    mark('compressed');
    return { links: links?.links.length ?? 0, truncated: links?.truncated ?? 0, stored: (row.params[1] as Uint8Array).byteLength, blocked: analysis.validation.isBlocked };
  };

  for (let i = 0; i < 3; i++) await onePage(() => undefined);
  (globalThis as { gc?: () => void }).gc?.();
  await new Promise((r) => setTimeout(r, 200));
  serve = page;
  const m0 = process.memoryUsage();
  const peak0MiB = (process.resourceUsage().maxRSS * 1024 - m0.rss) / MiB;
  const t0 = performance.now();
  const marks: Mark[] = [];
  const mark = (stage: string) => {
    const m = process.memoryUsage();
    marks.push({
      stage, rssMiB: (m.rss - m0.rss) / MiB, peakMiB: (process.resourceUsage().maxRSS * 1024 - m0.rss) / MiB,
      heapMiB: (m.heapUsed - m0.heapUsed) / MiB, externalMiB: (m.external - m0.external) / MiB, ms: performance.now() - t0,
    });
  };
  const result = await onePage(mark);
  const r = (x: number) => Math.round(x * 10) / 10;
  console.log(JSON.stringify({ case: name, bodyMiB: r(page.length / MiB), threads, ...result, peakBeforeMiB: r(peak0MiB) }));
  for (const m of marks) console.log(`  ${m.stage.padEnd(11)} rss ${r(m.rssMiB)}  peak ${r(m.peakMiB)}  heap ${r(m.heapMiB)}  external ${r(m.externalMiB)}  at ${Math.round(m.ms)} ms`);
  await pool.close();
  server.close();
}

await main();
process.exit(0);
