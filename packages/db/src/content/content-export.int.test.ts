import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../testing.js';
import { ScheduleStore } from '../schedule/schedule-store.js';
import { CONTENT_START_SQL, VISITS_START_SQL, countContent, iterateContent, iterateVisits } from './content-export.js';

let db: TestDatabase;
let client: pg.Client;
const since = new Date('2026-06-01T00:00:00Z');

beforeAll(async () => {
  db = await createTestDatabase('db_content_export_since');
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
  // 3000 pages fetched before `since`, then 20 after it; and one page with a low id fetched after it (a slow fetch
  // whose outcome committed late is the other way round, but ids and fetch times need not agree either way).
  await client.query(`INSERT INTO links (url, initial_url, domain, status)
    SELECT 'https://s.example/' || g, 'https://s.example/' || g, 's.example', 'done' FROM generate_series(1, 3021) g`);
  await client.query(`INSERT INTO fetched_content (link, body, encoding, http_status, final_url, sha256, size_bytes, fetcher, fetched_at)
    SELECT l.id, convert_to(l.url, 'UTF8'), 'identity', 200, l.url, md5(l.url), length(l.url), 'simple_http',
      CASE WHEN n = 7 OR n > 3001 THEN $1::timestamptz + n * interval '1 second' ELSE $1::timestamptz - (3100 - n) * interval '1 minute' END
    FROM (SELECT id, url, split_part(url, '/', 4)::int AS n FROM links) l ORDER BY n`, [since]);
  await client.query('ANALYZE fetched_content; ANALYZE page_visits; ANALYZE links');
});

afterAll(async () => {
  await client?.end();
  await db?.drop();
});

async function planNodes(sql: string, args: string): Promise<string[]> {
  await client.query('DEALLOCATE ALL');
  await client.query(`PREPARE start(timestamptz) AS ${sql}`);
  const { rows } = await client.query(`EXPLAIN (FORMAT JSON) EXECUTE start(${args})`);
  const nodes: string[] = [];
  const walk = (n: { 'Node Type': string; 'Index Name'?: string; Plans?: unknown[] }) => {
    nodes.push(n['Index Name'] ? `${n['Node Type']} ${n['Index Name']}` : n['Node Type']);
    for (const c of n.Plans ?? []) walk(c as never);
  };
  walk(rows[0]['QUERY PLAN'][0].Plan);
  return nodes;
}

describe('incremental exports (since)', () => {
  it('find where to start by an index, not by reading every older page', async () => {
    for (const sql of [CONTENT_START_SQL, VISITS_START_SQL]) {
      const nodes = await planNodes(sql, `'${since.toISOString()}'`);
      expect(nodes.filter((n) => /Seq Scan/.test(n)), sql).toEqual([]);
      expect(nodes.some((n) => /idx_fetched_content_fetched_at|idx_page_visits_time/.test(n)), nodes.join(', ')).toBe(true);
    }
  });

  it('export every page fetched since then, once, and nothing older', async () => {
    const pages: string[] = [];
    for await (const p of iterateContent(db.prisma, { since, latestOnly: true, pageSize: 6 })) pages.push(p.url);
    const expected = ['https://s.example/7', ...Array.from({ length: 20 }, (_, i) => `https://s.example/${3002 + i}`)];
    expect(pages).toEqual(expected);
    const visits: string[] = [];
    for await (const v of iterateVisits(db.prisma, { since, pageSize: 6 })) visits.push(v.kind === 'new' ? v.page.url : v.revisit.url);
    expect(visits).toEqual(expected);
    const none: string[] = [];
    for await (const p of iterateContent(db.prisma, { since: new Date('2030-01-01T00:00:00Z') })) none.push(p.url);
    expect(none).toEqual([]);
  });
});

describe('--status done', () => {
  it('keeps a page whose link is being fetched again; a page whose last visit failed stays out', async () => {
    const urls = ['https://s.example/3019', 'https://s.example/3020', 'https://s.example/3021'];
    const { rows } = await client.query<{ id: string; url: string }>('SELECT id::text, url FROM links WHERE url = ANY($1::text[]) ORDER BY url', [urls]);
    const [revisited, failedBefore, untouched] = rows as [{ id: string; url: string }, { id: string; url: string }, { id: string; url: string }];
    await client.query("UPDATE links SET status = 'failed', last_error_type = 'http_error' WHERE id = $1::uuid", [failedBefore.id]);
    // A refresh starts a new visit of both: queued again until it ends.
    const refreshed = await new ScheduleStore({ prisma: db.prisma }).refresh([revisited, failedBefore].map((l) => ({ linkId: l.id, maxAgeSeconds: 0 })));
    expect(refreshed.refreshed).toHaveLength(2);
    const done: string[] = [];
    for await (const p of iterateContent(db.prisma, { since, linkStatus: 'done', latestOnly: true })) done.push(p.url);
    expect(done).toContain(revisited.url);
    expect(done).toContain(untouched.url);
    expect(done).not.toContain(failedBefore.url);
    const visits: string[] = [];
    for await (const v of iterateVisits(db.prisma, { since, linkStatus: 'done' })) visits.push(v.kind === 'new' ? v.page.url : v.revisit.url);
    expect(visits).toEqual(done);
    expect(await countContent(db.prisma, { since, linkStatus: 'done', latestOnly: true })).toBe(done.length);
    // Asked for by their current status, they are there too.
    const queued: string[] = [];
    for await (const p of iterateContent(db.prisma, { linkStatus: 'queued' })) queued.push(p.url);
    expect(queued.sort()).toEqual([revisited.url, failedBefore.url].sort());
  });
});
