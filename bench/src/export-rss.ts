/**
 * Export memory bench: seeds N stored pages (default 100 000) in a throwaway database, then runs `crawl export` in a
 * child process for each format with its output to /dev/null, sampling the child's RSS from /proc. The export walks
 * fetched_content by keyset, so its RSS must stay flat: the figure reported is the peak, and the RSS after 10% of the
 * pages against the peak (1.0 = flat).
 *
 *   node bench/dist/export-rss.js [--pages 100000] [--page-kb 8]
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { brotliCompressSync, constants as zlib } from 'node:zlib';
import { createHash } from 'node:crypto';
import { sqlOf } from '@crawler/db';
import { createTestDatabase } from '@crawler/db/testing';
import { benchArgs } from './cli-args.js';

const { values } = benchArgs({
  script: 'export-rss',
  options: {
    pages: { type: 'string', default: '100000', description: 'stored pages seeded in the throwaway database, then exported' },
    'page-kb': { type: 'string', default: '8', description: 'size of each seeded page in KB, before compression' },
  },
});
const PAGES = Number(values.pages);
const PAGE_BYTES = Number(values['page-kb']) * 1024;
const VARIANTS = 50;

function rssBytes(pid: number): number | null {
  try {
    const kb = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m)?.[1];
    return kb ? Number(kb) * 1024 : null;
  } catch {
    return null;
  }
}

/** An article-like page of about PAGE_BYTES: words that compress the way prose does, not a run of one byte. */
function variant(v: number): Buffer {
  const words = ['tide', 'turbine', 'bay', 'current', 'blade', 'energy', 'resonance', 'seabed', 'cost', 'wind', 'station', 'metre'];
  let s = `<!doctype html><html><head><title>Page ${v}</title></head><body><article><h1>Article ${v}</h1>`;
  let k = v;
  while (s.length < PAGE_BYTES) {
    s += '<p>';
    for (let w = 0; w < 40; w++) s += `${words[(k = (k * 1103515245 + 12345) >>> 0) % words.length]} `;
    s += `<a href="/p/${k % 997}">more</a></p>\n`;
  }
  return Buffer.from(`${s}</article></body></html>`);
}

async function main(): Promise<void> {
  const db = await createTestDatabase('bench_export');
  try {
    const sql = sqlOf(db.prisma);
    const seedStart = performance.now();
    const bodies = Array.from({ length: VARIANTS }, (_, v) => variant(v));
    const compressed = bodies.map((b) => brotliCompressSync(b, { params: { [zlib.BROTLI_PARAM_QUALITY]: 1 } }));
    const hashes = bodies.map((b) => createHash('sha256').update(b).digest('hex'));
    // Links and pages in chunks of 10 000, generated in SQL: seeding must not be what the bench measures.
    for (let start = 0; start < PAGES; start += 10_000) {
      const n = Math.min(10_000, PAGES - start);
      await sql.query(
        `WITH l AS (
           INSERT INTO links (url, initial_url, domain, status)
           SELECT 'https://site' || (i % 100) || '.example/p/' || i, 'https://site' || (i % 100) || '.example/p/' || i, 'site' || (i % 100) || '.example', 'done'
           FROM generate_series($1::int, $2::int) i
           RETURNING id, url, (split_part(url, '/p/', 2))::int AS i
         )
         INSERT INTO fetched_content (link, body, encoding, content_type, http_status, final_url, sha256, size_bytes, fetcher, response_headers)
         SELECT l.id, ($3::bytea[])[1 + l.i % $6::int], 'br', 'text/html', 200, l.url, ($4::text[])[1 + l.i % $6::int], ($5::int[])[1 + l.i % $6::int], 'simple_http',
           '{"content-type":"text/html; charset=utf-8","server":"nginx"}'::jsonb
         FROM l`,
        [start, start + n - 1, compressed, hashes, bodies.map((b) => b.byteLength), VARIANTS],
      );
    }
    const [size] = await sql.query<{ mb: number }>("SELECT (pg_total_relation_size('fetched_content') / 1048576)::int AS mb");
    console.log(`seeded ${PAGES} pages of ~${PAGE_BYTES / 1024} KB (${size?.mb} MB stored) in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);

    const cli = new URL('../../apps/cli/bin/crawl.js', import.meta.url).pathname;
    console.log('| format | pages | seconds | pages/s | RSS after 10% MB | peak RSS MB | peak / RSS after 10% |');
    console.log('|---|---|---|---|---|---|---|');
    for (const format of ['jsonl', 'warc']) {
      const started = performance.now();
      const child = spawn(process.execPath, [cli, 'export', '--format', format], {
        env: { ...process.env, DATABASE_URL: db.url },
        // stdout is /dev/null: the export streams to it as it would to a pipe.
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const samples: Array<{ t: number; rss: number }> = [];
      const timer = setInterval(() => {
        const rss = rssBytes(child.pid!);
        if (rss !== null) samples.push({ t: performance.now() - started, rss });
      }, 50);
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      clearInterval(timer);
      const seconds = (performance.now() - started) / 1000;
      if (code !== 0) throw new Error(`export ${format} exited ${code}`);
      const peak = Math.max(...samples.map((s) => s.rss));
      // Time is a fair stand-in for progress: the export runs at a steady rate once started.
      const early = samples.find((s) => s.t >= seconds * 1000 * 0.1)?.rss ?? peak;
      const mb = (b: number) => (b / 1048576).toFixed(0);
      console.log(`| ${format} | ${PAGES} | ${seconds.toFixed(1)} | ${(PAGES / seconds).toFixed(0)} | ${mb(early)} | ${mb(peak)} | ${(peak / early).toFixed(2)} |`);
    }
  } finally {
    await db.drop();
  }
}

await main();
