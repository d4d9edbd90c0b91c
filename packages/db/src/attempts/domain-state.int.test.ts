import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, ManualClock, canonicalFetcherName, rememberedFetcher, summarizeDomainAttempts } from '@crawler/core';
import { createTestDatabase, type TestDatabase } from '../testing.js';
import { AttemptStore } from './attempt-store.js';
import { DOMAIN_STATE_SQL, DOMAIN_STATE_WINDOW, DomainStateStore } from './domain-state.js';
import { ensureAttemptPartitions } from '../maintenance/attempt-partitions.js';
import { parentName, seqScannedRelations } from '../__fixtures__/plans.js';

let db: TestDatabase;
let attempts: AttemptStore;
let state: DomainStateStore;
const now = Date.now();
const at = (daysAgo: number) => new Date(now - daysAgo * DAY_MS);

beforeAll(async () => {
  db = await createTestDatabase('learning_domain_state');
  attempts = new AttemptStore({ prisma: db.prisma, clock: new ManualClock(now) });
  state = new DomainStateStore({ prisma: db.prisma });
});
afterAll(async () => {
  await db?.drop();
});

describe('DomainStateStore', () => {
  it('reads one domain\'s attempts newest first, canonical names, priors and other domains left out', async () => {
    const dom = (d: string) => [{ type: 'domain', value: d }, { type: 'path_depth', value: '1' }];
    await attempts.logAttempts([
      { url: 'https://walled.test/a', fetcher: 'direct_access', success: false, isBanned: true, errorType: 'blocked_captcha', selectionSource: 'probe', attemptedAt: at(3), heuristics: dom('walled.test') },
      { url: 'https://walled.test/a', fetcher: 'playwright_stealth', success: true, selectionSource: 'retry', attemptedAt: at(2), heuristics: dom('walled.test') },
      { url: 'https://walled.test/b', fetcher: 'playwright_stealth', success: true, selectionSource: 'domain_memory', attemptedAt: at(1), heuristics: dom('walled.test') },
      { url: 'https://other.test/a', fetcher: 'playwright', success: true, selectionSource: 'probe', attemptedAt: at(0), heuristics: dom('other.test') },
      { url: 'https://walled.test/prior', fetcher: 'playwright', success: true, selectionSource: 'prior', attemptedAt: at(0), heuristics: dom('walled.test') },
    ]);
    const rows = await state.recentDomainAttempts('walled.test');
    expect(rows.map((r) => [r.fetcher, r.success, r.selectionSource])).toEqual([
      ['playwright_stealth', true, 'domain_memory'],
      ['playwright_stealth', true, 'retry'],
      ['simple_http', false, 'probe'],
    ]);
    expect(rows[2]).toMatchObject({ isBanned: true, errorType: 'blocked_captcha' });
    expect(rememberedFetcher(summarizeDomainAttempts(rows), new Date(now))?.fetcher).toBe('playwright_stealth');
  });

  it("returns each attempt's logged section, null for a site's root", async () => {
    const logged = (url: string, section: string | null, daysAgo: number) => ({
      url, fetcher: 'simple_http', success: true, selectionSource: 'probe', attemptedAt: at(daysAgo),
      heuristics: [{ type: 'domain', value: 'shop.test' }, ...(section === null ? [] : [{ type: 'section', value: section }])],
    });
    await attempts.logAttempts([logged('https://shop.test/blog/a', 'shop.test/blog', 3), logged('https://shop.test/', null, 2), logged('https://www.shop.test/App/x', 'shop.test/app', 1)]);
    const rows = await state.recentDomainAttempts('shop.test');
    expect(rows.map((r) => r.section)).toEqual(['shop.test/app', null, 'shop.test/blog']);
  });

  it("answers a router of the earlier code, which reads each attempt's URL, during a rolling upgrade", async () => {
    // The statement routers before migration 20261206000100 make (f8535c6's DOMAIN_STATE_CALL_SQL): they run beside
    // the migrated database until they are replaced, and read the URL where today's read the section.
    await attempts.logAttempts([{ url: 'https://mixed.test/blog/a', fetcher: 'simple_http', success: true, selectionSource: 'probe', attemptedAt: at(1), heuristics: [{ type: 'domain', value: 'mixed.test' }, { type: 'section', value: 'mixed.test/blog' }] }]);
    const earlier = await db.prisma.$queryRawUnsafe<Array<{ fetcher: string; url: string }>>(
      'SELECT fetcher, success, is_banned, error_type, selection_source, attempted_at, url FROM domain_recent_attempts($1, $2::int)', 'mixed.test', 200,
    );
    expect(earlier.map((r) => [r.fetcher, r.url])).toEqual([['simple_http', 'https://mixed.test/blog/a']]);
    expect((await state.recentDomainAttempts('mixed.test')).map((r) => r.section)).toEqual(['mixed.test/blog']);
  });

  it('returns at most the window asked for, the newest ones', async () => {
    await attempts.logAttempts(Array.from({ length: 5 }, (_, i) => ({ url: `https://busy.test/${i}`, fetcher: 'simple_http', success: i !== 4, selectionSource: 'probe', attemptedAt: at(10 - i), heuristics: [{ type: 'domain', value: 'busy.test' }] })));
    const rows = await state.recentDomainAttempts('busy.test', 2);
    expect(rows.map((r) => r.attemptedAt.getTime())).toEqual([at(6).getTime(), at(7).getTime()]);
    expect(rows[0]!.success).toBe(false);
    expect(await state.recentDomainAttempts('nobody.test')).toEqual([]);
  });
});

describe('DomainStateStore on a busy domain', () => {
  it('reads only the window of index entries, newest first, even before the planner has statistics', async () => {
    // A fresh database, as after a migration or on a new deployment: no ANALYZE has run, so the planner believes the
    // tables nearly empty. The domain's latest attempts must still come straight off an index ordered by attempt, not
    // from sorting every attempt the domain ever had (measured: 15k rows sorted, 11 ms, per routing decision).
    const busy = await createTestDatabase('learning_domain_state_busy');
    try {
      const store = new AttemptStore({ prisma: busy.prisma, clock: new ManualClock(now) });
      // The size of a short crawl (the bench's 4 domains × 3k pages): enough pages that the planner's stale picture
      // (a table of one page) makes the narrow index plus a sort look cheapest.
      const total = 12_000;
      for (let b = 0; b < total / 1_000; b++) {
        await store.logAttempts(Array.from({ length: 1_000 }, (_, i) => {
          const n = b * 1_000 + i;
          return {
            url: `https://busy.test/p/${n}.html`, fetcher: 'simple_http', success: true, selectionSource: 'learned',
            attemptedAt: new Date(now - (total - n) * 1000),
            heuristics: [{ type: 'domain', value: 'busy.test' }, { type: 'path_depth', value: '2' }, { type: 'suffix', value: 'html' }, { type: 'status_200', value: 'true' }],
          };
        }));
      }
      const heuristicsRowsRead = (plan: { 'QUERY PLAN': unknown }[]): number[] => {
        const nodes: { 'Node Type': string; 'Relation Name'?: string; 'Actual Rows': number }[] = [];
        const walk = (n: { Plans?: unknown[] } & Record<string, unknown>) => {
          nodes.push(n as never);
          for (const c of n.Plans ?? []) walk(c as never);
        };
        walk((plan[0]!['QUERY PLAN'] as { Plan: never }[])[0]!.Plan);
        return nodes.filter((n) => n['Relation Name'] !== undefined && parentName(n['Relation Name']) === 'attempt_heuristics').map((n) => n['Actual Rows']);
      };
      // The plan for these values (what a custom plan is)...
      const custom = heuristicsRowsRead(await busy.prisma.$queryRawUnsafe(`EXPLAIN (ANALYZE, FORMAT JSON) ${DOMAIN_STATE_SQL.replace('$1', "'busy.test'").replace('$2', '200')}`));
      // ...and the generic plan a prepared statement may settle on (the store prepares it once per connection).
      const client = new pg.Client({ connectionString: busy.url });
      await client.connect();
      let generic: number[];
      try {
        await client.query('SET plan_cache_mode = force_generic_plan');
        await client.query(`PREPARE domain_state(text, int) AS ${DOMAIN_STATE_SQL}`);
        generic = heuristicsRowsRead((await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE domain_state('busy.test', ${DOMAIN_STATE_WINDOW})`)).rows);
      } finally {
        await client.end();
      }
      for (const reads of [custom, generic]) {
        expect(reads.length).toBeGreaterThan(0);
        for (const n of reads) expect(n).toBeLessThanOrEqual(DOMAIN_STATE_WINDOW);
      }
      const rows = await new DomainStateStore({ prisma: busy.prisma }).recentDomainAttempts('busy.test');
      expect(rows).toHaveLength(DOMAIN_STATE_WINDOW);
      expect(rows[0]!.attemptedAt.getTime()).toBe(now - 1000);
    } finally {
      await busy.drop();
    }
  });
});

describe('DomainStateStore on a site crawl', () => {
  it('probes the window by primary key on a generic plan when one domain has every attempt', async () => {
    // One site crawled deep (crawl --follow): statistics say the domain is all the attempts. Priced as a parameter, the
    // window looked like a tenth of them, and a hash join over every attempt won (100k attempts: 20 ms per read).
    const site = await createTestDatabase('learning_domain_state_site');
    const client = new pg.Client({ connectionString: site.url });
    await client.connect();
    try {
      await client.query(`WITH a AS (
          INSERT INTO fetcher_attempts (url, fetcher, success, is_banned, attempted_at, selection_source)
          SELECT 'https://site.test/p/' || g, 'simple_http', true, false, now() - g * interval '1 second', 'learned'
          FROM generate_series(1, 12000) g RETURNING id, fetcher, success, attempted_at)
        INSERT INTO attempt_heuristics (attempt, heuristic_type, heuristic_value, created_at, fetcher, success, attempted_at)
        SELECT id, 'domain', 'site.test', now(), fetcher, success, attempted_at FROM a`);
      await client.query('ANALYZE');
      await client.query('SET plan_cache_mode = force_generic_plan');
      const seqScanned = async (name: string, text: string, exec: string): Promise<string[]> => {
        await client.query(`PREPARE ${name}(text, int) AS ${text}`);
        return seqScannedRelations(client, `EXECUTE ${exec}`);
      };
      // The read as it was (the window a parameter, the probe a plain join): the plan this test exists to keep out.
      const before = `
        SELECT fa.fetcher, fa.success, fa.is_banned, fa.error_type, fa.selection_source, fa.attempted_at
        FROM (SELECT ah.attempt FROM attempt_heuristics ah WHERE ah.heuristic_type = 'domain' AND ah.heuristic_value = $1
              ORDER BY ah.attempt DESC LIMIT $2) AS recent
        JOIN fetcher_attempts fa ON fa.id = recent.attempt
        WHERE fa.selection_source IS DISTINCT FROM 'prior' ORDER BY fa.attempted_at DESC, fa.id DESC`;
      expect(await seqScanned('window_param', before, `window_param('site.test', ${DOMAIN_STATE_WINDOW})`)).toContain('fetcher_attempts');
      expect(await seqScanned('window_literal', DOMAIN_STATE_SQL, `window_literal('site.test', ${DOMAIN_STATE_WINDOW})`)).toEqual([]);
      const rows = await new DomainStateStore({ prisma: site.prisma }).recentDomainAttempts('site.test');
      expect(rows).toHaveLength(DOMAIN_STATE_WINDOW);
    } finally {
      await client.end();
      await site.drop();
    }
  });
});

describe('DomainStateStore over weekly partitions', () => {
  it('reads about the window of index entries once the plan is generic, where the parent statement read them all', async () => {
    // A hot domain over ten weeks of partitions, statistics known:
    // the plain statement's generic plan read and sorted every entry of the domain (a top-N sort over an Append);
    // domain_recent_attempts merges the partitions' ordered index scans and stops at the window.
    const weeks = await createTestDatabase('learning_domain_state_weeks');
    const client = new pg.Client({ connectionString: weeks.url });
    await client.connect();
    try {
      await ensureAttemptPartitions(weeks.prisma, { now: new Date(now - 70 * DAY_MS), aheadDays: 77, unit: 'week' });
      await client.query(`WITH a AS (
          INSERT INTO fetcher_attempts (url, fetcher, success, is_banned, attempted_at, selection_source)
          SELECT 'https://hot.test/p/' || g, (ARRAY['simple_http','playwright'])[1 + g % 2], g % 3 > 0, false,
                 now() - (g % 70) * interval '1 day' - g * interval '1 millisecond', 'learned'
          FROM generate_series(1, 15000) g RETURNING id, fetcher, success, attempted_at)
        INSERT INTO attempt_heuristics (attempt, heuristic_type, heuristic_value, created_at, fetcher, success, attempted_at)
        SELECT id, t.type, CASE t.type WHEN 'domain' THEN CASE WHEN id % 2 = 0 THEN 'hot.test' ELSE 'cold' || (id % 500) || '.test' END
                                       WHEN 'section' THEN 'hot.test/p' || (id % 3) ELSE '2' END,
               now(), fetcher, success, attempted_at
        FROM a CROSS JOIN (VALUES ('domain'), ('section'), ('path_depth')) AS t(type)`);
      await client.query('ANALYZE');
      const partitions = Number((await client.query(`SELECT count(*) FROM attempt_log_partitions WHERE parent = 'attempt_heuristics'`)).rows[0].count);
      expect(partitions).toBeGreaterThan(10);
      // Heap tuples the attempt_heuristics partitions gave to index scans in one call, and tuples read by sequential
      // scans, from this session's own counters.
      const entriesRead = async (exec: string): Promise<{ fetched: number; seq: number; rows: { fetcher: string; attempted_at: Date; section: string | null }[] }> => {
        const counters = `SELECT coalesce(sum(idx_tup_fetch), 0)::int AS fetched, coalesce(sum(seq_tup_read), 0)::int AS seq
          FROM pg_stat_xact_user_tables WHERE relname LIKE 'attempt_heuristics_%'`;
        // The counters may still hold earlier transactions' counts until they are flushed: the difference is this call's.
        await client.query('BEGIN');
        try {
          const { rows: [c0] } = await client.query(counters);
          const { rows } = await client.query(exec);
          const { rows: [c1] } = await client.query(counters);
          return { fetched: c1.fetched - c0.fetched, seq: c1.seq - c0.seq, rows };
        } finally {
          await client.query('COMMIT');
        }
      };
      // Index-only scans off for the session: each entry an index scan reads is then one heap fetch, whatever the
      // visibility map says (autovacuum may set it at any moment).
      await client.query('SET enable_indexonlyscan = off');
      await client.query('SET plan_cache_mode = force_generic_plan');
      await client.query(`PREPARE plain(text) AS ${DOMAIN_STATE_SQL}`);
      const plain = await entriesRead(`EXECUTE plain('hot.test')`);
      expect(plain.fetched + plain.seq).toBeGreaterThan(5 * DOMAIN_STATE_WINDOW); // 7,500 entries, or 15,000 rows seq-scanned
      // The function's plan is cached in the session like a prepared statement's: generic from the start here.
      const viaFunction = await entriesRead(`SELECT * FROM domain_recent_attempts('hot.test', ${DOMAIN_STATE_WINDOW})`);
      expect(viaFunction.seq).toBe(0);
      // The window's entries, and one section row per attempt (not every heuristic row of each attempt).
      expect(viaFunction.fetched).toBeGreaterThanOrEqual(DOMAIN_STATE_WINDOW);
      expect(viaFunction.fetched).toBeLessThanOrEqual(2 * DOMAIN_STATE_WINDOW + 2 * partitions);
      expect(viaFunction.rows.map((r) => [r.fetcher, r.attempted_at.getTime()])).toEqual(plain.rows.map((r) => [r.fetcher, r.attempted_at.getTime()]));
      const rows = await new DomainStateStore({ prisma: weeks.prisma }).recentDomainAttempts('hot.test');
      expect(rows.map((r) => [r.fetcher, r.attemptedAt.getTime()])).toEqual(plain.rows.map((r) => [canonicalFetcherName(r.fetcher), r.attempted_at.getTime()]));
      expect(rows.map((r) => r.section)).toEqual(plain.rows.map((r) => r.section));
      expect(new Set(rows.map((r) => r.section))).toEqual(new Set(['hot.test/p0', 'hot.test/p1', 'hot.test/p2']));
    } finally {
      await client.end();
      await weeks.drop();
    }
    // 45,000 heuristic rows and their rollups are written first: about 10 s quiet, over 30 s on a loaded machine.
  }, 120_000);
});
