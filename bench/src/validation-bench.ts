/**
 * Validation cost per page, as a ratio to a cheerio parse of the same page measured in the same run.
 *
 * Our fetch worker runs validateResponse on every page it fetches; the reference crawlers only parse the page once
 * with cheerio (htmlparser2) and read its text. This bench times both over the same synthetic article pages (the
 * pages the crawl bench serves), interleaved round by round so machine load hits both alike, and reports CPU
 * milliseconds per page and the ratio validate / (cheerio load + text).
 *
 *   node bench/dist/validation-bench.js [--pages 200] [--rounds 7] [--fixtures]
 *
 * --fixtures adds a line for the labelled validation corpora (packages/core/src/validation/__fixtures__ and
 * __holdout__): mostly small challenge, SPA and empty pages.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from 'cheerio';
import { validateResponse, type ResponseSnapshot } from '@crawler/core';
import { benchArgs } from './cli-args.js';
import { pageTargetBytes, renderPage } from './page-corpus.js';

const { values } = benchArgs({
  script: 'validation-bench',
  options: {
    pages: { type: 'string', default: '200', description: 'synthetic article pages, each validated and parsed with cheerio' },
    rounds: { type: 'string', default: '7', description: 'interleaved rounds; the median CPU time per page is reported' },
    fixtures: { type: 'boolean', default: false, description: 'add a line for the labelled validation corpora (__fixtures__ and __holdout__)' },
  },
});
const PAGES = Number(values.pages);
const ROUNDS = Number(values.rounds);

/** The synthetic web's pages, with the same link shapes (relative nav, some cross-domain related links). */
function syntheticPages(n: number): ResponseSnapshot[] {
  const nav = Array.from({ length: 12 }, (_, i) => `/story/${i * 7}`);
  const related = Array.from({ length: 20 }, (_, i) => (i % 4 === 0 ? `http://127.0.0.11:40000/story/${i * 13}` : `/story/${i * 13}`));
  return Array.from({ length: n }, (_, index) => ({
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8', server: 'nginx' },
    body: Buffer.from(renderPage({ index, targetBytes: pageTargetBytes(index), navHrefs: nav, relatedHrefs: related })),
  }));
}

/** The labelled corpora, as the corpus tests feed them. */
function fixturePages(): ResponseSnapshot[] {
  const root = join(dirname(fileURLToPath(import.meta.url)), '../../packages/core/src/validation');
  const out: ResponseSnapshot[] = [];
  for (const dir of ['__fixtures__', '__holdout__']) {
    const manifest = JSON.parse(readFileSync(join(root, dir, 'manifest.json'), 'utf8')) as { file: string; status: number; headers: Record<string, string> }[];
    for (const e of manifest) out.push({ status: e.status, headers: e.headers, body: readFileSync(join(root, dir, e.file)) });
  }
  return out;
}

/** CPU time (user + system) of `fn`, in ms. */
function cpuMs(fn: () => void): number {
  const start = process.cpuUsage();
  fn();
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
}

let sink = 0;
const validateAll = (pages: readonly ResponseSnapshot[]) => () => {
  for (const p of pages) sink += validateResponse(p).visibleTextLength;
};
// The reference's work: decode, cheerio load on htmlparser2, body text (what parse-page.ts digests).
const cheerioAll = (pages: readonly ResponseSnapshot[]) => () => {
  for (const p of pages) {
    const html = typeof p.body === 'string' ? p.body : Buffer.from(p.body).toString('utf8');
    sink += load(html, { xml: { xmlMode: false, decodeEntities: true } })('body').text().length;
  }
};

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

function measure(label: string, pages: readonly ResponseSnapshot[]): void {
  const v = validateAll(pages);
  const c = cheerioAll(pages);
  // Warm up both paths so the JIT has settled before anything is counted.
  for (let i = 0; i < 2; i++) {
    v();
    c();
  }
  const vs: number[] = [];
  const cs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    vs.push(cpuMs(v) / pages.length);
    cs.push(cpuMs(c) / pages.length);
  }
  const vm = median(vs);
  const cm = median(cs);
  const bytes = pages.reduce((s, p) => s + (typeof p.body === 'string' ? p.body.length : p.body.length), 0) / pages.length;
  console.log(
    `${label.padEnd(22)} pages=${String(pages.length).padStart(4)}  mean=${(bytes / 1024).toFixed(1)} KB  ` +
      `validate=${vm.toFixed(3)} ms/page  cheerio load+text=${cm.toFixed(3)} ms/page  ratio=${(vm / cm).toFixed(2)}`,
  );
}

console.log(`validation bench: median of ${ROUNDS} rounds, CPU time (process.cpuUsage)`);
measure('synthetic articles', syntheticPages(PAGES));
if (values.fixtures) measure('fixtures + holdout', fixturePages());
if (sink === -1) console.log(sink);
