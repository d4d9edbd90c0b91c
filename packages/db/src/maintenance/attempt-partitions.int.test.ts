import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DAY_MS, ManualClock, ROUTING_HEURISTIC_TYPES } from '@crawler/core';
import { afterAll, describe, expect, it } from 'vitest';
import { createPrismaClient } from '../client.js';
import { AttemptStore } from '../attempts/attempt-store.js';
import { locateMigrationsDir } from '../migrate/locate.js';
import { migrate, readMigrations } from '../migrate/migrate.js';
import { dropDatabase, withAdminConnection, withDatabase } from '../migrate/databases.js';
import { DEFAULT_TEST_PG_URL, createTestDatabase } from '../testing.js';
import { sqlOf } from '../sql.js';
import { ensureAttemptPartitions, listAttemptPartitions } from './attempt-partitions.js';

const PARTITION_MIGRATION = '20261128000100_attempt_log_partitions';
const server = process.env.TEST_PG_URL ?? DEFAULT_TEST_PG_URL;
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

const DOMAINS = Array.from({ length: 12 }, (_, i) => `d${i}.part`);
const SUFFIXES = ['.html', '.pdf', '.php', ''];
const FETCHERS = ['simple_http', 'playwright', 'playwright_stealth'];

/** Attempts spread over `days` days before `now`, several per day, with rollup and non-rollup heuristics. */
function spread(now: number, days: number, perDay: number) {
  const out = [];
  for (let d = 0; d < days; d++) {
    for (let k = 0; k < perDay; k++) {
      const n = d * perDay + k;
      out.push({
        url: `https://${DOMAINS[n % DOMAINS.length]}/p/${n}${SUFFIXES[n % SUFFIXES.length]}`,
        fetcher: FETCHERS[n % FETCHERS.length]!,
        success: n % 3 !== 0,
        isBanned: n % 7 === 0,
        errorType: n % 11 === 0 ? 'rate_limited' : null,
        attemptedAt: new Date(now - d * DAY_MS - k * 60_000),
        selectionSource: 'learned',
        heuristics: [
          { type: 'domain', value: DOMAINS[n % DOMAINS.length]! },
          { type: 'suffix', value: SUFFIXES[n % SUFFIXES.length]! || 'none' },
          { type: 'path_depth', value: String(1 + (n % 3)) },
          { type: 'status_200', value: 'true' },
        ],
      });
    }
  }
  return out;
}

/** Counts and sums that must survive any change of layout, and the rollups against their rebuild from the log. */
async function fingerprint(url: string) {
  return withAdminConnection(url, async (c) => {
    const q = async (text: string) => (await c.query(text)).rows;
    return {
      attempts: await q(`SELECT count(*)::int AS n, sum(id)::text AS ids, count(*) FILTER (WHERE success)::int AS ok,
        count(*) FILTER (WHERE is_banned)::int AS banned, sum(extract(epoch FROM attempted_at))::text AS at,
        count(rollup_keys)::int AS keyed, count(link)::int AS linked FROM fetcher_attempts`),
      heuristics: await q(`SELECT count(*)::int AS n, sum(id)::text AS ids, sum(attempt)::text AS attempts,
        count(DISTINCT heuristic_type || heuristic_value)::int AS pairs, count(*) FILTER (WHERE success)::int AS ok FROM attempt_heuristics`),
      rollups: await q(`SELECT subset_key, fetcher, sum(attempts)::int AS n, round(sum(success_weight)::numeric / 1e20, 3)::text AS w
        FROM heuristic_rollups GROUP BY 1, 2 HAVING sum(attempts) <> 0 ORDER BY 1, 2`),
      sequences: await q(`SELECT pg_get_serial_sequence('fetcher_attempts', 'id') AS a, pg_get_serial_sequence('attempt_heuristics', 'id') AS h`),
    };
  });
}

async function rebuiltRollups(url: string) {
  return withAdminConnection(url, async (c) => {
    await c.query('BEGIN');
    await c.query('SELECT rollup_rebuild()');
    const { rows } = await c.query(`SELECT subset_key, fetcher, sum(attempts)::int AS n, round(sum(success_weight)::numeric / 1e20, 3)::text AS w
      FROM heuristic_rollups GROUP BY 1, 2 HAVING sum(attempts) <> 0 ORDER BY 1, 2`);
    await c.query('ROLLBACK');
    return rows;
  });
}

describe('partitioning migration on a database that holds attempts', () => {
  it('moves every attempt and heuristic into week partitions, keeps ids, links, rollups and sequences, and records itself as Prisma does', async () => {
    // The migrations up to the one before partitioning, in a directory of their own.
    const all = readMigrations();
    expect(all.map((m) => m.name)).toContain(PARTITION_MIGRATION);
    const before = mkdtempSync(join(tmpdir(), 'crawler-prepartition-'));
    cleanups.push(async () => rmSync(before, { recursive: true, force: true }));
    for (const m of all) if (m.name < PARTITION_MIGRATION) cpSync(join(locateMigrationsDir(), m.name), join(before, m.name), { recursive: true });
    const name = `crawler_test_partmig_${process.pid}_${Date.now() % 100000}`;
    await withAdminConnection(withDatabase(server, 'postgres'), (c) => c.query(`CREATE DATABASE "${name}"`));
    cleanups.push(() => dropDatabase(server, name));
    const url = withDatabase(server, name);
    await migrate(url, { migrationsDir: before });

    // 95 days of history through the store itself (the pre-partition write path), some on links, then a link
    // deleted (cascade) and some rows updated around the store, as a live database has them.
    const prisma = createPrismaClient(url, { maxConnections: 2 });
    cleanups.push(() => prisma.$disconnect());
    const now = Date.now();
    const store = new AttemptStore({ prisma, clock: new ManualClock(now) });
    const sql = sqlOf(prisma);
    await sql.query("INSERT INTO links (url, initial_url, domain) SELECT 'https://d0.part/l' || g, 'https://d0.part/l' || g, 'd0.part' FROM generate_series(1, 40) g");
    const links = (await sql.query<{ id: string }>('SELECT id FROM links ORDER BY url')).map((r) => r.id);
    const inputs = spread(now, 95, 9).map((a, i) => ({ ...a, linkId: i < links.length ? links[i] : null }));
    // Today's store writes the exit tier, proxy and error message (later migrations): lent to the old schema for the
    // writes, then taken back, so the partitioning migration sees the columns it was written for.
    await sql.query(`ALTER TABLE fetcher_attempts ADD COLUMN exit_tier TEXT NOT NULL DEFAULT 'direct', ADD COLUMN exit_proxy TEXT, ADD COLUMN error_message TEXT`);
    await sql.query(`CREATE FUNCTION attempt_arm(f TEXT, t TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE AS $$ SELECT f $$`);
    for (let i = 0; i < inputs.length; i += 200) await store.logAttempts(inputs.slice(i, i + 200));
    await sql.query('ALTER TABLE fetcher_attempts DROP COLUMN exit_tier, DROP COLUMN exit_proxy, DROP COLUMN error_message');
    await sql.query('DROP FUNCTION attempt_arm(TEXT, TEXT)');
    await sql.query("UPDATE fetcher_attempts SET success = NOT success WHERE id % 13 = 0 AND selection_source = 'learned'");
    await sql.query('DELETE FROM links WHERE id = $1', [links[0]]);
    await prisma.$disconnect();
    const pre = await fingerprint(url);
    expect(pre.attempts[0].n).toBeGreaterThan(800);
    // Four heuristics per logged attempt (one deleted with its link), one per seeded prior.
    expect(pre.heuristics[0].n).toBe((95 * 9 - 1) * 4 + 30);

    const result = await migrate(url);
    // The partition migration, then the ones after it (the domain-state function and keyset index, 20261129200000, …).
    expect(result.applied).toEqual(all.filter((m) => m.name >= PARTITION_MIGRATION).map((m) => m.name));
    expect(result.applied[0]).toBe(PARTITION_MIGRATION);
    const post = await fingerprint(url);
    expect(post).toEqual(pre);
    // The rows a query can read (subsets of the types still rolled up) equal their rebuild. Rows of types the rollups
    // stopped keeping (20261205000200: path_depth here) stay with the attempts logged before, never read, and are
    // taken back when those attempts' partitions are dropped.
    const readable = (rows: Array<{ subset_key: string }>) =>
      rows.filter((r) => r.subset_key.split('\u001e').every((k) => ROUTING_HEURISTIC_TYPES.includes(k.split('\u001f')[0]!)));
    expect(post.rollups.length).toBeGreaterThan(readable(post.rollups).length);
    expect(readable(await rebuiltRollups(url))).toEqual(readable(post.rollups));

    await withAdminConnection(url, async (c) => {
      const kinds = await c.query(`SELECT relname, relkind FROM pg_class WHERE relname IN ('fetcher_attempts', 'attempt_heuristics') ORDER BY 1`);
      expect(kinds.rows).toEqual([{ relname: 'attempt_heuristics', relkind: 'p' }, { relname: 'fetcher_attempts', relkind: 'p' }]);
      // Every old row sits in its day's partition, none in the default ones.
      const placed = await c.query(`SELECT tableoid::regclass::text AS t, count(*)::int AS n FROM fetcher_attempts GROUP BY 1`);
      expect(placed.rows.some((r) => r.t === 'fetcher_attempts_default')).toBe(false);
      // 95 days: at least 14 ISO weeks (the default length), each one partition.
      expect(placed.rows.length).toBeGreaterThanOrEqual(14);
      expect(placed.rows.length).toBeLessThanOrEqual(16);
      const stray = await c.query(`SELECT count(*)::int AS n FROM attempt_heuristics ah JOIN fetcher_attempts fa ON fa.id = ah.attempt
        WHERE ah.tableoid::regclass::text <> replace(fa.tableoid::regclass::text, 'fetcher_attempts', 'attempt_heuristics')`);
      expect(stray.rows[0].n).toBe(0);
      const rec = await c.query(`SELECT checksum, finished_at, applied_steps_count, logs FROM "_prisma_migrations" WHERE migration_name = $1`, [PARTITION_MIGRATION]);
      expect(rec.rows).toEqual([{ checksum: all.find((m) => m.name === PARTITION_MIGRATION)!.checksum, finished_at: expect.any(Date), applied_steps_count: 1, logs: null }]);
      // The next attempt takes the next id.
      const max = await c.query('SELECT max(id)::text AS m FROM fetcher_attempts');
      const next = await c.query("SELECT nextval(pg_get_serial_sequence('fetcher_attempts', 'id'))::text AS n");
      expect(BigInt(next.rows[0].n)).toBeGreaterThan(BigInt(max.rows[0].m));
    });
    expect(await migrate(url)).toMatchObject({ applied: [] });
  }, 120_000);
});

describe('attempt log partitions', () => {
  it('are made ahead, catch stray days in the default partition, and move them into their day when it is made', async () => {
    const db = await createTestDatabase('attempt_partitions');
    cleanups.push(() => db.drop());
    const now = Date.now();
    const days = (await listAttemptPartitions(db.prisma)).filter((p) => p.parent === 'fetcher_attempts' && p.from);
    // createTestDatabase made them as a worker would (weeks, the default): today and the week ahead.
    for (let d = 0; d <= 7; d++) {
      const t = now + d * DAY_MS;
      expect(days.some((p) => p.from!.getTime() <= t && t < p.to!.getTime())).toBe(true);
    }
    expect(await ensureAttemptPartitions(db.prisma)).toBe(0);
    expect(await ensureAttemptPartitions(db.prisma, { now: new Date(now + 20 * DAY_MS), aheadDays: 2, unit: 'day' })).toBe(5);

    const store = new AttemptStore({ prisma: db.prisma, clock: new ManualClock(now) });
    await store.logAttempts(spread(now - 40 * DAY_MS, 3, 5));
    const sql = sqlOf(db.prisma);
    const inDefault = async () => (await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM fetcher_attempts_default'))[0]!.n;
    expect(await inDefault()).toBe(15);
    const rollupsBefore = await fingerprint(db.url);
    expect(await ensureAttemptPartitions(db.prisma, { now: new Date(now - 41 * DAY_MS), aheadDays: 1, unit: 'day' })).toBeGreaterThanOrEqual(3);
    expect(await inDefault()).toBe(0);
    expect(await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM attempt_heuristics_default')).toEqual([{ n: 0 }]);
    expect(await fingerprint(db.url)).toEqual(rollupsBefore);
    expect(await rebuiltRollups(db.url)).toEqual(rollupsBefore.rollups);
  }, 60_000);

  it("check each heuristic's attempt in the twin partition, for partitions made later too, and cascade deletes", async () => {
    const db = await createTestDatabase('attempt_partitions_keys');
    cleanups.push(() => db.drop());
    const now = Date.now();
    await ensureAttemptPartitions(db.prisma, { now: new Date(now + 30 * DAY_MS), aheadDays: 2, unit: 'day' });
    const sql = sqlOf(db.prisma);
    // Every heuristics partition references its twin (same range; the defaults each other), none the parent.
    const keys = await sql.query<{ ah: string; fa: string }>(
      `SELECT conrelid::regclass::text AS ah, confrelid::regclass::text AS fa FROM pg_constraint
       WHERE contype = 'f' AND conrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'attempt_heuristics'::regclass)
          OR contype = 'f' AND conrelid = 'attempt_heuristics'::regclass`,
    );
    const partitions = (await listAttemptPartitions(db.prisma)).filter((p) => p.parent === 'attempt_heuristics');
    expect(partitions.length).toBeGreaterThanOrEqual(5);
    expect(keys.map((k) => k.ah).sort()).toEqual(partitions.map((p) => p.partition).sort());
    for (const k of keys) expect(k.fa).toBe(k.ah.replace('attempt_heuristics_', 'fetcher_attempts_'));

    const store = new AttemptStore({ prisma: db.prisma, clock: new ManualClock(now) });
    // One attempt in today's week, one in a day made above, one in the default partition.
    for (const at of [now, now + 31 * DAY_MS, now + 400 * DAY_MS]) await store.logAttempts(spread(at, 1, 1));
    const [link] = await sql.query<{ id: string }>(`INSERT INTO links (url, initial_url, domain) VALUES ('https://keys.part/', 'https://keys.part/', 'keys.part') RETURNING id::text`);
    await sql.query("UPDATE fetcher_attempts SET link = $1::uuid WHERE selection_source = 'learned'", [link!.id]);
    const ours = "(SELECT count(*) FROM fetcher_attempts WHERE selection_source = 'learned')::int AS a, (SELECT count(*) FROM attempt_heuristics WHERE attempt IN (SELECT id FROM fetcher_attempts WHERE selection_source = 'learned'))::int AS h";
    expect(await sql.query(`SELECT ${ours}`)).toEqual([{ a: 3, h: 12 }]);
    // A heuristic of an attempt that does not exist is refused, in a partition made later as in the default one.
    for (const at of [now + 31 * DAY_MS, now + 400 * DAY_MS]) {
      await expect(sql.query(`INSERT INTO attempt_heuristics (attempt, heuristic_type, heuristic_value, attempted_at) VALUES (987654321, 'domain', 'x', $1)`, [new Date(at)]))
        .rejects.toThrow(/foreign key/);
    }
    // Deleting the link deletes its attempts, and theirs their heuristics.
    const all = await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM attempt_heuristics');
    await sql.query('DELETE FROM links WHERE id = $1::uuid', [link!.id]);
    expect(await sql.query(`SELECT ${ours}`)).toEqual([{ a: 0, h: 0 }]);
    expect(await sql.query('SELECT count(*)::int AS n FROM attempt_heuristics')).toEqual([{ n: all[0]!.n - 12 }]);
  }, 60_000);

  it('prune drops whole partitions (no dead rows left), deletes stray old rows from the default partition, and keeps the rollups exact', async () => {
    const db = await createTestDatabase('attempt_partitions_prune');
    cleanups.push(() => db.drop());
    const now = Date.now();
    // Rows the partitions had deleted before the prune (the test database re-dates the seed priors' heuristics).
    const deletedRows = async () => {
      await sqlOf(db.prisma).query('SELECT pg_stat_force_next_flush()');
      const [row] = await sqlOf(db.prisma).query<{ n: number }>(
        `SELECT coalesce(sum(n_tup_del), 0)::int AS n FROM pg_stat_user_tables s JOIN pg_inherits i ON i.inhrelid = s.relid
         WHERE i.inhparent IN ('fetcher_attempts'::regclass, 'attempt_heuristics'::regclass) AND s.relname NOT LIKE '%_default'`,
      );
      return row!.n;
    };
    const deletedBefore = await deletedRows();
    // Day partitions around today's weeks (createTestDatabase made those): lengths can be mixed.
    await ensureAttemptPartitions(db.prisma, { now: new Date(now - 100 * DAY_MS), aheadDays: 30, unit: 'day' });
    await ensureAttemptPartitions(db.prisma, { now: new Date(now - 69 * DAY_MS), aheadDays: 70, unit: 'day' });
    const store = new AttemptStore({ prisma: db.prisma, clock: new ManualClock(now) });
    const log = spread(now, 100, 6);
    for (let i = 0; i < log.length; i += 200) await store.logAttempts(log.slice(i, i + 200));
    // Days 131-132 have no partition: the default one holds them.
    await store.logAttempts(spread(now - 131 * DAY_MS, 2, 3));
    const sql = sqlOf(db.prisma);
    const count = async (where: string) => (await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM fetcher_attempts WHERE ${where}`))[0]!.n;
    const cutoff = now - 90 * DAY_MS;
    const dayStart = Math.floor(cutoff / DAY_MS) * DAY_MS;
    const expectedGone = await count(`attempted_at < '${new Date(dayStart).toISOString()}'`);
    const keptOld = await count(`attempted_at >= '${new Date(dayStart).toISOString()}' AND attempted_at < '${new Date(cutoff).toISOString()}'`);
    const total = await count('true');
    const partitionsBefore = (await listAttemptPartitions(db.prisma)).length;

    const result = await store.pruneAttempts({ olderThanDays: 90, batchSize: 4 });
    expect(result.attempts).toBe(expectedGone);
    expect(result.heuristics).toBe(expectedGone * 4);
    expect(await count('true')).toBe(total - expectedGone);
    // Rows of the cutoff's own day stay until the next day's run: retention is rounded up to the whole UTC day.
    expect(await count(`attempted_at < '${new Date(cutoff).toISOString()}'`)).toBe(keptOld);
    expect(await sql.query('SELECT count(*)::int AS n FROM fetcher_attempts_default')).toEqual([{ n: 0 }]);
    const after = await listAttemptPartitions(db.prisma);
    expect(after.length).toBeLessThan(partitionsBefore);
    expect(after.filter((p) => p.to && p.to.getTime() <= cutoff)).toEqual([]);
    // The prune deleted no row of the partitions left (it dropped whole partitions): nothing to vacuum.
    expect(await deletedRows()).toBe(deletedBefore);
    const fp = await fingerprint(db.url);
    expect(await rebuiltRollups(db.url)).toEqual(fp.rollups);
    // And the learned selection answers the same from the rollups as from the scan, across the remaining days.
    for (const d of DOMAINS.slice(0, 4)) {
      const h = [{ type: 'domain', value: d }, { type: 'suffix', value: '.pdf' }];
      const fast = await store.findBestFetcher(h);
      const scan = await store.findBestFetcher(h, { strategy: 'scan' });
      expect(fast.scores.map((s) => [s.fetcher, s.sampleSize])).toEqual(scan.scores.map((s) => [s.fetcher, s.sampleSize]));
      expect(fast.scores.length).toBeGreaterThan(0);
      fast.scores.forEach((s, i) => expect(s.decayedSuccesses).toBeCloseTo(scan.scores[i]!.decayedSuccesses, 6));
    }
  }, 120_000);
});
