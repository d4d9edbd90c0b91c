import { cpSync, mkdtempSync, appendFileSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TEST_PG_URL } from '../testing.js';
import { locateMigrationsDir } from './locate.js';
import { migrate, readMigrations } from './migrate.js';

const server = process.env.TEST_PG_URL ?? DEFAULT_TEST_PG_URL;
const created: string[] = [];
const dirs: string[] = [];

function urlOf(name: string): string {
  const u = new URL(server);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>, url = server): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function emptyDatabase(): Promise<string> {
  const name = `crawler_test_db_migrate_${process.pid}_${randomBytes(3).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE "${name}"`));
  created.push(name);
  return urlOf(name);
}

function copyMigrations(): string {
  const dir = mkdtempSync(join(tmpdir(), 'crawler-migrations-'));
  dirs.push(dir);
  cpSync(locateMigrationsDir(), dir, { recursive: true });
  return dir;
}

afterAll(async () => {
  for (const name of created) await admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('migrate', () => {
  let url: string;
  beforeAll(async () => {
    url = await emptyDatabase();
  });

  it('applies every migration once and records it the way Prisma does', async () => {
    const onDisk = readMigrations();
    expect(onDisk.length).toBeGreaterThanOrEqual(3);
    const first = await migrate(url);
    expect(first.applied).toEqual(onDisk.map((m) => m.name));
    const second = await migrate(url);
    expect(second).toEqual({ applied: [], alreadyApplied: onDisk.map((m) => m.name), frozen: 0 });

    const rows = await admin((c) => c.query('SELECT * FROM "_prisma_migrations" ORDER BY migration_name'), url);
    expect(rows.rows.map((r) => [r.migration_name, r.checksum, r.applied_steps_count, r.logs, r.rolled_back_at])).toEqual(
      onDisk.map((m) => [m.name, m.checksum, 1, null, null]),
    );
    for (const r of rows.rows) {
      expect(r.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.finished_at).toBeInstanceOf(Date);
    }
    const cols = await admin(
      (c) => c.query("SELECT column_name, data_type, character_maximum_length FROM information_schema.columns WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position"),
      url,
    );
    expect(cols.rows.map((r) => [r.column_name, r.data_type, r.character_maximum_length])).toEqual([
      ['id', 'character varying', 36],
      ['checksum', 'character varying', 64],
      ['finished_at', 'timestamp with time zone', null],
      ['migration_name', 'character varying', 255],
      ['logs', 'text', null],
      ['rolled_back_at', 'timestamp with time zone', null],
      ['started_at', 'timestamp with time zone', null],
      ['applied_steps_count', 'integer', null],
    ]);
  });

  it('creates a database that does not exist, as prisma migrate deploy does, once even when several run at once', async () => {
    const name = `crawler_test_db_migrate_new_${process.pid}_${randomBytes(3).toString('hex')}`;
    created.push(name);
    const runs = await Promise.all([migrate(urlOf(name)), migrate(urlOf(name)), migrate(urlOf(name))]);
    const onDisk = readMigrations().map((m) => m.name);
    expect(runs.flatMap((r) => r.applied).sort()).toEqual([...onDisk].sort());
    expect(runs.filter((r) => r.createdDatabase !== undefined).map((r) => r.createdDatabase)).toEqual([name]);
    expect(await migrate(urlOf(name))).toEqual({ applied: [], alreadyApplied: onDisk, frozen: 0 });
    // Asked not to, it refuses with the server's answer instead.
    const other = `crawler_test_db_migrate_none_${process.pid}_${randomBytes(3).toString('hex')}`;
    await expect(migrate(urlOf(other), { createDatabase: false })).rejects.toThrow(/does not exist/);
    const exists = await admin((c) => c.query('SELECT 1 FROM pg_database WHERE datname = $1', [other]));
    expect(exists.rowCount).toBe(0);
  });

  it('is safe to run from several processes at once', async () => {
    const fresh = await emptyDatabase();
    const results = await Promise.all([migrate(fresh), migrate(fresh), migrate(fresh)]);
    expect(results.map((r) => r.applied.length).sort()).toEqual([0, 0, readMigrations().length]);
    const n = await admin((c) => c.query('SELECT count(*)::int AS n FROM "_prisma_migrations"'), fresh);
    expect(n.rows[0].n).toBe(readMigrations().length);
  });

  it('refuses when an applied migration was modified', async () => {
    const dir = copyMigrations();
    const fresh = await emptyDatabase();
    await migrate(fresh, { migrationsDir: dir });
    const first = readMigrations(dir)[0]!;
    appendFileSync(join(dir, first.name, 'migration.sql'), '\n-- edited\n');
    await expect(migrate(fresh, { migrationsDir: dir })).rejects.toMatchObject({ code: 'db_migration', message: expect.stringContaining(first.name) });
  });

  it('records a failing migration, rolls it back, and refuses to go on until it is resolved', async () => {
    const dir = copyMigrations();
    const fresh = await emptyDatabase();
    await migrate(fresh, { migrationsDir: dir });
    mkdirSync(join(dir, '29990101000000_broken'));
    writeFileSync(join(dir, '29990101000000_broken', 'migration.sql'), 'CREATE TABLE "half_done" (id int);\nSELECT no_such_function();\n');
    await expect(migrate(fresh, { migrationsDir: dir })).rejects.toMatchObject({ code: 'db_migration' });
    const state = await admin(async (c) => {
      const row = await c.query(`SELECT finished_at, logs FROM "_prisma_migrations" WHERE migration_name = '29990101000000_broken'`);
      const table = await c.query(`SELECT to_regclass('half_done') AS t`);
      return { row: row.rows[0], table: table.rows[0].t };
    }, fresh);
    expect(state.row.finished_at).toBeNull();
    expect(state.row.logs).toContain('no_such_function');
    expect(state.table).toBeNull();
    await expect(migrate(fresh, { migrationsDir: dir })).rejects.toMatchObject({ code: 'db_migration', message: expect.stringContaining('failed earlier') });
  });

  it("waits for a table a running transaction reads without holding up the fleet's writes to it", async () => {
    // A rolling upgrade migrates under a running fleet. ALTER TABLE waits for every transaction using the table (an
    // export streaming fetched_content), and every later statement on the table queues behind it: unbounded, each
    // fetch's outcome write stood still until the reader ended (measured: a page insert waited 22 s behind a 30 s read).
    const dir = copyMigrations();
    const fresh = await emptyDatabase();
    await migrate(fresh, { migrationsDir: dir });
    await admin((c) => c.query(`INSERT INTO links (url, initial_url, domain, status) VALUES ('https://lock.example/a', 'https://lock.example/a', 'lock.example', 'done')`), fresh);
    mkdirSync(join(dir, '29990101000000_alter_content'));
    writeFileSync(join(dir, '29990101000000_alter_content', 'migration.sql'), 'ALTER TABLE "fetched_content" ADD COLUMN "upgrade_probe" INTEGER;\n');
    const reader = new pg.Client({ connectionString: fresh });
    const writer = new pg.Client({ connectionString: fresh });
    await reader.connect();
    await writer.connect();
    try {
      await reader.query('BEGIN');
      await reader.query('SELECT count(*) FROM fetched_content');
      const migrating = migrate(fresh, { migrationsDir: dir, lockTimeoutMs: 50, lockTries: 100_000 });
      // Once the migration is waiting for its lock (its statement is in pg_stat_activity)…
      for (;;) {
        const { rows } = await writer.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE '%upgrade_probe%' AND pid <> pg_backend_pid()`);
        if (rows[0].n > 0) break;
      }
      // …a fetch's write goes in while the reader still holds the table (a guard, not a measure: without a lock
      // timeout it waits for the reader, which ends only after it, and fails here).
      await writer.query(`SET statement_timeout = '20s'`);
      await writer.query(`INSERT INTO fetched_content (link, body, encoding, http_status, final_url, sha256, size_bytes, fetcher, fetched_at)
        SELECT id, convert_to(url, 'UTF8'), 'identity', 200, url, md5(url), length(url), 'simple_http', now() FROM links WHERE url = 'https://lock.example/a'`);
      await reader.query('COMMIT');
      expect((await migrating).applied).toEqual(['29990101000000_alter_content']);
      const { rows } = await writer.query(`SELECT count(*)::int AS n FROM "_prisma_migrations" WHERE migration_name = '29990101000000_alter_content'`);
      expect(rows[0].n).toBe(1);
    } finally {
      await reader.end();
      await writer.end();
    }
  });

  it('fails with a retryable typed error when Postgres is unreachable', async () => {
    await expect(migrate('postgresql://postgres@127.0.0.1:1/none')).rejects.toMatchObject({ code: 'db_unavailable', retryable: true });
  });
});
