import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../testing.js';
import { DOMAIN_STATE_SQL, DOMAIN_STATE_WINDOW } from '../attempts/domain-state.js';
import { analyzeStaleTables } from './table-stats.js';
import { seqScannedRelations } from '../__fixtures__/plans.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('table_stats');
});
afterAll(async () => {
  await db?.drop();
});

async function connect(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  return c;
}


/** `n` attempts spread over `domains` domains (`<prefix>0.test`, …), as a crawl's outcome statements leave them; then the counters flushed. */
async function grow(n: number, prefix: string, domains = 50): Promise<void> {
  const c = await connect();
  try {
    await c.query(
      `WITH a AS (
         INSERT INTO fetcher_attempts (url, fetcher, success, is_banned, attempted_at, selection_source)
         SELECT 'https://' || $2::text || (g % $3::int) || '.test/p/' || g, 'simple_http', true, false, now() - g * interval '1 second', 'learned'
         FROM generate_series(1, $1::int) g RETURNING id, url, fetcher, success, attempted_at)
       INSERT INTO attempt_heuristics (attempt, heuristic_type, heuristic_value, created_at, fetcher, success, attempted_at)
       SELECT id, 'domain', split_part(url, '/', 3), now(), fetcher, success, attempted_at FROM a`,
      [n, prefix, domains],
    );
    // This backend's table counters reach the shared statistics now, not within the next second or ten.
    await c.query('SELECT pg_stat_force_next_flush()');
    await c.query('SELECT 1');
  } finally {
    await c.end();
  }
}

describe('analyzeStaleTables', () => {
  it('makes a connection give up the plan it made while the attempt tables were nearly empty', async () => {
    // As after `crawl migrate` and autovacuum's first visit: statistics of tables holding only the seeded priors.
    await db.prisma.$executeRawUnsafe('ANALYZE');
    const router = await connect();
    try {
      // The router's domain-state read, prepared as the store prepares it, on a generic plan (what plan_cache_mode
      // auto settles on after five calls).
      await router.query('SET plan_cache_mode = force_generic_plan');
      await router.query(`PREPARE domain_state(text, int) AS ${DOMAIN_STATE_SQL}`);
      const read = `EXECUTE domain_state('busy7.test', ${DOMAIN_STATE_WINDOW})`;
      expect(await seqScannedRelations(router, read)).toContain('attempt_heuristics');

      await grow(12_000, 'busy');
      // Nothing told this connection that the table grew: it keeps scanning all of it (the hazard).
      expect(await seqScannedRelations(router, read)).toContain('attempt_heuristics');

      const analyzed = await analyzeStaleTables(db.prisma);
      expect(analyzed.map((t) => t.table)).toEqual(expect.arrayContaining(['attempt_heuristics', 'fetcher_attempts']));
      expect(analyzed.find((t) => t.table === 'attempt_heuristics')!.changed).toBeGreaterThanOrEqual(12_000);
      // The new statistics made the same prepared statement plan again: off the index, no full scan.
      expect(await seqScannedRelations(router, read)).toEqual([]);
    } finally {
      await router.end();
    }
  });

  it('leaves tables alone until they change by as much as they held, and skips while another process analyzes', async () => {
    expect(await analyzeStaleTables(db.prisma)).toEqual([]);
    // 1 000 more rows on a table the last ANALYZE counted 12 000 in: not yet.
    await grow(1_000, 'other');
    expect((await analyzeStaleTables(db.prisma)).map((t) => t.table)).not.toContain('attempt_heuristics');
    await grow(12_000, 'other');
    const holder = await connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT pg_advisory_xact_lock(${0x637261776c616e61n.toString()}::bigint)`);
      expect(await analyzeStaleTables(db.prisma)).toEqual([]);
      await holder.query('COMMIT');
    } finally {
      await holder.end();
    }
    expect((await analyzeStaleTables(db.prisma)).map((t) => t.table)).toContain('attempt_heuristics');
  });
});
