/**
 * Revisit write cost: what one visit's outcome costs Postgres (OutcomeStore.apply, one statement) when it is a first
 * visit storing a page, a revisit answered 304, a revisit with the same body (compared by sha256, nothing stored) and
 * a revisit with a changed body (a new version, its visit row and a link.changed event from the insert's trigger).
 * Writes are sequential, one link after another, in a throwaway database; each kind is reported as a ratio to the
 * first visits measured in the same run.
 *
 *   node bench/dist/revisit-bench.js [--links 2000] [--page-kb 30]
 */
import { OutcomeStore, VersionStore } from '@crawler/db';
import { createTestDatabase } from '@crawler/db/testing';
import { benchArgs } from './cli-args.js';

const { values } = benchArgs({
  script: 'revisit-bench',
  options: {
    links: { type: 'string', default: '2000', description: 'links written, one after another, for each kind of visit' },
    'page-kb': { type: 'string', default: '30', description: 'size of each page in KB, before compression' },
  },
});
const LINKS = Number(values.links);
const PAGE_BYTES = Number(values['page-kb']) * 1024;

function page(n: number, rev: number): Buffer {
  const words = ['tide', 'turbine', 'bay', 'current', 'blade', 'energy', 'seabed', 'cost', 'wind', 'station'];
  let s = `<!doctype html><html><body><h1>Page ${n} revision ${rev}</h1>`;
  let k = n * 31 + rev;
  while (s.length < PAGE_BYTES) {
    s += '<p>';
    for (let w = 0; w < 40; w++) s += `${words[(k = (k * 1103515245 + 12345) >>> 0) % words.length]} `;
    s += '</p>\n';
  }
  return Buffer.from(`${s}</body></html>`);
}

const DONE = { status: 'done', riskLevel: 0, pausedUntil: null, fetcher: 'simple_http', lastErrorType: null, lastError: null } as const;

async function main(): Promise<void> {
  const db = await createTestDatabase('bench_revisit');
  try {
    const rows = await db.prisma.$queryRawUnsafe<Array<{ id: string; url: string }>>(
      "INSERT INTO links (url, initial_url, domain, status) SELECT 'https://r' || (i % 50) || '.example/p/' || i, 'https://r' || (i % 50) || '.example/p/' || i, 'r' || (i % 50) || '.example', 'fetching' FROM generate_series(1, $1::int) i RETURNING id::text AS id, url",
      LINKS,
    );
    const outcomes = new OutcomeStore({ prisma: db.prisma });
    const versions = new VersionStore({ prisma: db.prisma });
    const attempt = (linkId: string, url: string, httpStatus: number) => [{ linkId, url, fetcher: 'simple_http', success: true, httpStatus, selectionSource: 'revisit', heuristics: [{ type: 'domain', value: new URL(url).hostname }] }];
    const headers = { 'content-type': 'text/html; charset=utf-8', etag: '"x"' };
    const bodies = rows.map((_, i) => [page(i, 1), page(i, 2)] as const);

    const phase = async (name: string, write: (row: { id: string; url: string }, i: number) => Promise<unknown>): Promise<number> => {
      if (name !== 'first visit') await versions.reopenForRevisit(rows.map((r) => r.id));
      const started = performance.now();
      for (const [i, row] of rows.entries()) await write(row, i);
      const ms = (performance.now() - started) / rows.length;
      return ms;
    };
    const results: Array<[string, number]> = [];
    results.push(['first visit (page stored)', await phase('first visit', (r, i) => outcomes.apply({ linkId: r.id, attempts: attempt(r.id, r.url, 200), link: DONE, page: { linkId: r.id, body: bodies[i]![0], contentType: 'text/html', httpStatus: 200, finalUrl: r.url, fetcher: 'simple_http', headers } }))]);
    results.push(['revisit, 304', await phase('304', (r) => outcomes.apply({ linkId: r.id, attempts: attempt(r.id, r.url, 304), link: DONE, notModified: { fetcher: 'simple_http', httpStatus: 304, finalUrl: r.url, headers } }))]);
    results.push(['revisit, same body', await phase('same', (r, i) => outcomes.apply({ linkId: r.id, attempts: attempt(r.id, r.url, 200), link: DONE, page: { linkId: r.id, body: bodies[i]![0], contentType: 'text/html', httpStatus: 200, finalUrl: r.url, fetcher: 'simple_http', headers } }))]);
    results.push(['revisit, changed body (new version)', await phase('changed', (r, i) => outcomes.apply({ linkId: r.id, attempts: attempt(r.id, r.url, 200), link: DONE, page: { linkId: r.id, body: bodies[i]![1], contentType: 'text/html', httpStatus: 200, finalUrl: r.url, fetcher: 'simple_http', headers } }))]);
    const ref = results[0]![1];
    console.log(`${LINKS} links, ${values['page-kb']} KB pages, sequential OutcomeStore.apply (client-side compression included for page writes)`);
    for (const [name, ms] of results) console.log(`${name.padEnd(38)} ${ms.toFixed(3)} ms/write   ${(ms / ref).toFixed(2)}x first visit`);
    const [counts] = await db.prisma.$queryRawUnsafe<Array<{ versions: number; visits: number; changed: number }>>(
      "SELECT (SELECT count(*)::int FROM fetched_content) AS versions, (SELECT count(*)::int FROM page_visits) AS visits, (SELECT count(*)::int FROM link_events WHERE type = 'link.changed') AS changed",
    );
    console.log(`stored: ${counts!.versions} versions, ${counts!.visits} visits, ${counts!.changed} link.changed events`);
  } finally {
    await db.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
