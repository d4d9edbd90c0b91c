import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../testing.js';
import { ScheduleStore } from '../schedule/schedule-store.js';
import { CONTENT_AFTER_START_SQL, CONTENT_START_SQL, VISITS_AFTER_START_SQL, VISITS_START_SQL, countContent, countVisits, iterateContent, iterateVisits, type ContentExportFilter } from './content-export.js';
import { currentExportCursor, isCursorForeign, parseExportCursor } from './export-cursor.js';
import { migrate } from '../migrate/migrate.js';
import { planNodes } from '../__fixtures__/plans.js';

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

async function startNodes(sql: string, args: string, type = 'timestamptz'): Promise<string[]> {
  await client.query('DEALLOCATE ALL');
  await client.query(`PREPARE start(${type}) AS ${sql}`);
  return planNodes(client, `EXECUTE start(${args})`);
}

describe('incremental exports (since)', () => {
  it('find where to start by an index, not by reading every older page', async () => {
    for (const sql of [CONTENT_START_SQL, VISITS_START_SQL]) {
      const nodes = await startNodes(sql, `'${since.toISOString()}'`);
      expect(nodes.filter((n) => /Seq Scan/.test(n)), sql).toEqual([]);
      expect(nodes.some((n) => /idx_fetched_content_fetched_at|idx_page_visits_time/.test(n)), nodes.join(', ')).toBe(true);
    }
    for (const sql of [CONTENT_AFTER_START_SQL, VISITS_AFTER_START_SQL]) {
      // A snapshot past every stored row, as a recent cursor is. Not the current one: its xmin is the oldest write
      // transaction running anywhere on the server (another test's), which can be older than every row here, and
      // then reading them all (a Seq Scan) is the right plan.
      const [{ x }] = (await client.query<{ x: string }>('SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS x')).rows as [{ x: string }];
      // With the cursor's timeline: the rows written on a later one are found by an index too.
      const nodes = await startNodes(sql, `'${x}:${x}:', 1`, 'pg_snapshot, int');
      expect(nodes.filter((n) => /Seq Scan/.test(n)), sql).toEqual([]);
      expect(nodes.some((n) => /idx_fetched_content_xact|idx_page_visits_xact/.test(n)), nodes.join(', ')).toBe(true);
      expect(nodes.some((n) => /idx_fetched_content_tli|idx_page_visits_tli/.test(n)), nodes.join(', ')).toBe(true);
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

describe('resuming from a cursor', () => {
  const domain = 'late.example';
  const early = new Date('2026-07-01T00:00:00Z');

  async function store(on: pg.Client, page: string, fetchedAt: Date): Promise<void> {
    const url = `https://${domain}/${page}`;
    await on.query(`INSERT INTO links (url, initial_url, domain, status) VALUES ($1, $1, $2, 'done')`, [url, domain]);
    await on.query(`INSERT INTO fetched_content (link, body, encoding, http_status, final_url, sha256, size_bytes, fetcher, fetched_at)
      SELECT id, convert_to(url, 'UTF8'), 'identity', 200, url, md5(url), length(url), 'simple_http', $2 FROM links WHERE url = $1`, [url, fetchedAt]);
  }

  /** One export as a consumer runs it: the cursor first, then every page and every visit committed up to it. */
  async function exportFrom(after: string | null, between?: () => Promise<void>) {
    const upTo = await currentExportCursor(db.prisma);
    const filter: ContentExportFilter = { domain, after, upTo };
    const pages: string[] = [];
    for await (const p of iterateContent(db.prisma, { ...filter, latestOnly: true, pageSize: 1 })) {
      pages.push(p.url.split('/').pop()!);
      // Something commits while the export runs, past the pages it has read.
      if (pages.length === 1) await between?.();
    }
    const visits: string[] = [];
    for await (const v of iterateVisits(db.prisma, { ...filter, pageSize: 1 })) visits.push((v.kind === 'new' ? v.page.url : v.revisit.url).split('/').pop()!);
    const counted = { pages: await countContent(db.prisma, { ...filter, latestOnly: true }), visits: await countVisits(db.prisma, filter) };
    return { pages, visits, counted, cursor: upTo };
  }

  it('takes every committed page exactly once, however late a page with a lower id or an earlier fetch time commits', async () => {
    const slow = new pg.Client({ connectionString: db.url });
    await slow.connect();
    try {
      await store(client, 'a', early);
      const first = await exportFrom(null);
      expect(first.pages).toEqual(['a']);

      // An outcome batch that is slow to commit: its page has a lower id and an earlier fetch time than the next one.
      await slow.query('BEGIN');
      await store(slow, 'b-late', new Date(early.getTime() + 1_000));
      await store(client, 'c', new Date(early.getTime() + 2_000));
      const second = await exportFrom(first.cursor);
      expect(second.pages).toEqual(['c']);

      await slow.query('COMMIT');
      // And one that commits while the next export is reading: it belongs to the export after that, not to both.
      await slow.query('BEGIN');
      await store(slow, 'd-during', new Date(early.getTime() + 3_000));
      const third = await exportFrom(second.cursor, async () => void (await slow.query('COMMIT')));
      expect(third.pages).toEqual(['b-late']);

      const fourth = await exportFrom(third.cursor);
      expect(fourth.pages).toEqual(['d-during']);
      const fifth = await exportFrom(fourth.cursor);
      expect(fifth.pages).toEqual([]);

      for (const e of [first, second, third, fourth, fifth]) {
        expect(e.visits).toEqual(e.pages);
        expect(e.counted).toEqual({ pages: e.pages.length, visits: e.pages.length });
      }
      // A time filter still applies beside the cursor.
      const withSince: string[] = [];
      for await (const p of iterateContent(db.prisma, { domain, after: first.cursor, since: new Date(early.getTime() + 1_500) })) withSince.push(p.url.split('/').pop()!);
      expect(withSince.sort()).toEqual(['c', 'd-during']);
    } finally {
      await slow.query('ROLLBACK').catch(() => undefined);
      await slow.end();
    }
  });
});

describe('a database restored from a dump into another cluster', () => {
  it('exports the restored pages in full once `crawl migrate` has run, and refuses to export nothing before', async () => {
    // pg_dump copies each row's xact as it is: in a younger cluster (a new server, a test restore) the restored rows
    // name transactions this cluster has not reached, which no snapshot of it sees.
    const restored = await createTestDatabase('review_export_restored');
    const on = new pg.Client({ connectionString: restored.url });
    await on.connect();
    try {
      await on.query(`INSERT INTO links (url, initial_url, domain, status) VALUES ('https://r.example/a', 'https://r.example/a', 'r.example', 'done')`);
      await on.query(`INSERT INTO fetched_content (link, body, encoding, http_status, final_url, sha256, size_bytes, fetcher, fetched_at, xact)
        SELECT id, convert_to(url, 'UTF8'), 'identity', 200, url, md5(url), length(url), 'simple_http', now(),
          (pg_snapshot_xmax(pg_current_snapshot())::text::bigint + 5000000)::text::xid8 FROM links`);
      await on.query(`INSERT INTO page_visits (link, content, kind, visited_at, fetcher, http_status, final_url, xact)
        SELECT link, id, 'identical', now(), 'simple_http', 200, final_url, xact FROM fetched_content`);

      const full = async () => {
        const upTo = await currentExportCursor(restored.prisma);
        const pages: string[] = [];
        for await (const p of iterateContent(restored.prisma, { upTo })) pages.push(p.url);
        const visits: string[] = [];
        for await (const v of iterateVisits(restored.prisma, { upTo })) visits.push(v.kind);
        return { pages, visits, counted: await countContent(restored.prisma, { upTo }) };
      };
      await expect(full()).rejects.toThrow(/crawl migrate/);

      const result = await migrate(restored.url);
      expect(result.frozen).toBe(2);
      expect(await full()).toEqual({ pages: ['https://r.example/a'], visits: ['new', 'revisit'], counted: 1 });
      // Frozen as the rows stored before the column existed: in every full export, in no resumed one.
      const cursor = await currentExportCursor(restored.prisma);
      const resumed: string[] = [];
      for await (const p of iterateContent(restored.prisma, { after: cursor, upTo: await currentExportCursor(restored.prisma) })) resumed.push(p.url);
      expect(resumed).toEqual([]);
      expect((await migrate(restored.url)).frozen).toBe(0);
    } finally {
      await on.end();
      await restored.drop();
    }
  });
});

describe('a cursor from another database', () => {
  it('is told apart from this database’s, even on the same server (whose transaction ids both share)', async () => {
    const other = await createTestDatabase('review_export_other');
    try {
      const theirs = await currentExportCursor(other.prisma);
      const ours = await currentExportCursor(db.prisma);
      // Taken first, on a server whose transaction ids every database shares: not ahead, but not ours either.
      expect(isCursorForeign(theirs, ours)).toBe(true);
      expect(isCursorForeign(ours, await currentExportCursor(db.prisma))).toBe(false);
      expect(parseExportCursor(ours)).toBe(ours);
      // The cursor works as the walk's bounds as it is handed out.
      const pages: string[] = [];
      for await (const p of iterateContent(db.prisma, { domain: 'late.example', after: ours, upTo: await currentExportCursor(db.prisma) })) pages.push(p.url);
      expect(pages).toEqual([]);
      expect(await countContent(db.prisma, { domain: 'late.example', upTo: ours })).toBeGreaterThan(0);
    } finally {
      await other.drop();
    }
  });
});

describe('a failover to a standby that had not received the last transactions of the old primary', () => {
  it('exports what the new primary writes under transaction ids the old one had handed out before a cursor', async () => {
    // A promoted standby goes on from the last transaction id it replayed: ids the old primary used for transactions
    // that never reached it are used again. A cursor the old primary handed out after them counts the new rows
    // under those ids as exported already. The new primary writes on a new timeline, and each row records its own.
    const [{ x, tli, database }] = (
      await client.query<{ x: string; tli: number; database: string }>(
        `SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS x, ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int AS tli,
          (SELECT system_identifier FROM pg_control_system())::text || '.' || (SELECT oid FROM pg_database WHERE datname = current_database())::text AS database`,
      )
    ).rows as [{ x: string; tli: number; database: string }];
    const reused = BigInt(x);
    // The old primary's cursor, on the timeline before this one, past the reused id.
    const oldCursor = `${reused + 1000n}:${reused + 1000n}:@${database}.${tli - 1}`;
    await client.query(`INSERT INTO links (url, initial_url, domain, status) VALUES ('https://failover.example/a', 'https://failover.example/a', 'failover.example', 'done')`);
    await client.query(`INSERT INTO fetched_content (link, body, encoding, http_status, final_url, sha256, size_bytes, fetcher, fetched_at, xact)
      SELECT id, convert_to(url, 'UTF8'), 'identity', 200, url, md5(url), length(url), 'simple_http', now(), $1::text::xid8 FROM links WHERE url = 'https://failover.example/a'`, [x]);
    await client.query(`UPDATE page_visits SET xact = $1::text::xid8 WHERE link = (SELECT id FROM links WHERE url = 'https://failover.example/a')`, [x]);
    const upTo = await currentExportCursor(db.prisma);
    expect(upTo.endsWith(tli === 1 ? `@${database}` : `@${database}.${tli}`)).toBe(true);
    // Not refused: a cursor from an earlier timeline of this database may be ahead of it.
    expect(isCursorForeign(oldCursor, upTo)).toBe(false);
    const filter: ContentExportFilter = { domain: 'failover.example', after: oldCursor, upTo };
    const pages: string[] = [];
    for await (const p of iterateContent(db.prisma, { ...filter, latestOnly: true })) pages.push(p.url);
    expect(pages).toEqual(['https://failover.example/a']);
    const visits: string[] = [];
    for await (const v of iterateVisits(db.prisma, filter)) visits.push(v.kind);
    expect(visits).toEqual(['new']);
    expect(await countContent(db.prisma, { ...filter, latestOnly: true })).toBe(1);
    expect(await countVisits(db.prisma, filter)).toBe(1);
    // Resumed from a cursor of this timeline, it is exported already.
    const resumed: string[] = [];
    for await (const p of iterateContent(db.prisma, { domain: 'failover.example', after: upTo, upTo: await currentExportCursor(db.prisma) })) resumed.push(p.url);
    expect(resumed).toEqual([]);
  });
});

describe('a stored body that cannot be decompressed', () => {
  it('stops the export naming the page, its link and what to do, instead of a bare zlib error', async () => {
    await client.query(`INSERT INTO links (url, initial_url, domain, status) VALUES ('https://corrupt.example/a', 'https://corrupt.example/a', 'corrupt.example', 'done')`);
    const [{ id }] = (await client.query<{ id: string }>(`INSERT INTO fetched_content (link, body, encoding, http_status, final_url, sha256, size_bytes, fetcher, fetched_at)
      SELECT id, '\\xdeadbeef00112233'::bytea, 'br', 200, url, md5(url), 8, 'simple_http', now() FROM links WHERE url = 'https://corrupt.example/a' RETURNING id::text`)).rows as [{ id: string }];
    const read = async () => {
      for await (const p of iterateContent(db.prisma, { domain: 'corrupt.example' })) void p;
    };
    await expect(read()).rejects.toThrow(new RegExp(`stored page ${id} \\(link [0-9a-f-]{36}, https://corrupt\\.example/a, version 1\\) cannot be decompressed \\(br: .*DELETE FROM fetched_content WHERE id = ${id}`));
    const visits = async () => {
      for await (const v of iterateVisits(db.prisma, { domain: 'corrupt.example' })) void v;
    };
    await expect(visits()).rejects.toThrow(`stored page ${id} `);
  });
});

describe('cursors across a rolling upgrade', () => {
  it('hands out, on a server that never failed over, a cursor the code before timelines takes', async () => {
    // f8535c6's parseExportCursor: an API or CLI of that code still running beside this one (a rollout, a rollback)
    // answered 400 to every cursor naming a timeline, so an export consumer whose requests alternated between the
    // two could not resume.
    const earlier = /^\d{1,20}:\d{1,20}:(\d{1,20}(,\d{1,20})*)?(@\d{1,20}\.\d{1,10})?$/;
    const [{ tli }] = (await client.query<{ tli: number }>('SELECT export_timeline() AS tli')).rows as [{ tli: number }];
    const cursor = await currentExportCursor(db.prisma);
    if (tli === 1) expect(cursor).toMatch(earlier);
    expect(parseExportCursor(cursor)).toBe(cursor);
    expect(isCursorForeign(cursor, await currentExportCursor(db.prisma))).toBe(false);
  });
});
