import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { CrawlerError, silentLogger, type Logger } from '@crawler/core';
import { DB_ERROR_CODES, dbErrorCodeOf, translateDbError } from '../errors.js';
import { FREEZE_FOREIGN_XACT_SQL } from '../content/export-cursor.js';
import { locateMigrationsDir } from './locate.js';
import { quoteIdent, withAdminConnection, withDatabase } from './databases.js';

/**
 * The advisory lock key `prisma migrate` itself takes, so our runs and a `prisma migrate deploy` elsewhere
 * serialise against each other as well as against concurrent fleet start-ups.
 */
export const MIGRATION_LOCK_KEY = 72707369;

/** Options for {@link migrate}. */
export interface MigrateOptions {
  logger?: Logger;
  /** Directory holding `<timestamp>_<name>/migration.sql`. @defaultValue the repository's prisma/migrations */
  migrationsDir?: string;
  /**
   * How long one try of a migration waits for a lock (Postgres `lock_timeout`). A migration that alters a table waits
   * for every transaction using it (a long export reading `fetched_content`), and every statement of the running
   * fleet on that table queues behind the waiting migration: unbounded, a rolling upgrade stalled every outcome
   * write for as long as the longest reader ran. Past it the try is rolled back and, after a pause, tried again.
   * @defaultValue 3000
   */
  lockTimeoutMs?: number;
  /** Tries of a migration that times out waiting for a lock before migrate gives up (nothing half-applied). @defaultValue 20 */
  lockTries?: number;
  /**
   * Create the database when it does not exist, as `prisma migrate deploy` does (through the server's `postgres`
   * database, else `template1`; the role needs CREATEDB). @defaultValue true
   */
  createDatabase?: boolean;
}

/** What {@link migrate} did. */
export interface MigrateResult {
  /** Migrations applied by this run, in order. */
  applied: string[];
  /** Migrations that were already recorded as applied. */
  alreadyApplied: string[];
  /** Stored rows restored from another cluster's dump that this run marked as committed before any export. */
  frozen: number;
  /** The database's name when this run created it. */
  createdDatabase?: string;
}

/** One migration on disk. */
export interface MigrationFile {
  name: string;
  sql: string;
  /** sha256 hex of the file's bytes, as Prisma records it. */
  checksum: string;
}

/** Read the migrations under `dir` in name (= timestamp) order, checksummed the way Prisma does. */
export function readMigrations(dir: string = locateMigrationsDir()): MigrationFile[] {
  return readdirSync(dir)
    .filter((name) => statSync(join(dir, name)).isDirectory())
    .sort()
    .map((name) => {
      const bytes = readFileSync(join(dir, name, 'migration.sql'));
      return { name, sql: bytes.toString('utf8'), checksum: createHash('sha256').update(bytes).digest('hex') };
    });
}

// Byte-for-byte the table `prisma migrate` creates, so either tool can take over from the other.
const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

function migrationError(message: string): CrawlerError {
  return new CrawlerError(DB_ERROR_CODES.migration, message);
}

/**
 * Apply pending migrations from prisma/migrations, each in its own transaction, recording them in
 * `_prisma_migrations` as Prisma does. Idempotent and safe to run from many processes at once (advisory lock).
 * Refuses when an applied migration's file changed or a failed migration is recorded.
 */
export async function migrate(databaseUrl: string, options: MigrateOptions = {}): Promise<MigrateResult> {
  const log = (options.logger ?? silentLogger).child({ component: 'migrate' });
  const migrations = readMigrations(options.migrationsDir ?? locateMigrationsDir());
  let createdDatabase: string | undefined;
  let client = new pg.Client({ connectionString: databaseUrl });
  try {
    await client.connect();
  } catch (err) {
    if (dbErrorCodeOf(err) !== INVALID_CATALOG_NAME || options.createDatabase === false) throw translateDbError(err, 'connect for migrations');
    createdDatabase = await createMissingDatabase(databaseUrl, log);
    client = new pg.Client({ connectionString: databaseUrl });
    try {
      await client.connect();
    } catch (err2) {
      throw translateDbError(err2, 'connect for migrations');
    }
  }
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      const result = await applyPending(client, migrations, log, { timeoutMs: options.lockTimeoutMs ?? 3_000, tries: options.lockTries ?? 20 });
      result.frozen = await freezeForeignTransactions(client, log);
      return createdDatabase === undefined ? result : { ...result, createdDatabase };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    }
  } catch (err) {
    throw translateDbError(err, 'migrate');
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Postgres' invalid_catalog_name: the database named in the URL does not exist. */
const INVALID_CATALOG_NAME = '3D000';
/**
 * Another process created it first: duplicate_database, or, when both CREATE DATABASE ran at the same moment, the
 * unique violation on pg_database's name.
 */
const DATABASE_EXISTS = new Set(['42P04', '23505']);

/**
 * Create the database `databaseUrl` names, connected to the server's maintenance database (`postgres`, else
 * `template1`, as Prisma does). Another migrate creating it at the same moment is not an error. Returns its name when
 * this call created it.
 */
async function createMissingDatabase(databaseUrl: string, log: Logger): Promise<string | undefined> {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  const create = async (admin: pg.Client): Promise<string | undefined> => {
    try {
      await admin.query(`CREATE DATABASE ${quoteIdent(name)}`);
    } catch (err) {
      if (DATABASE_EXISTS.has(dbErrorCodeOf(err) ?? '')) return undefined;
      throw translateDbError(err, `create database ${name}`);
    }
    log.info({ database: name }, 'created the database');
    return name;
  };
  try {
    return await withAdminConnection(withDatabase(databaseUrl, 'postgres'), create);
  } catch (err) {
    // A server without a `postgres` database: Prisma falls back to template1, and so do we.
    if (dbErrorCodeOf(err) !== INVALID_CATALOG_NAME) throw translateDbError(err, `connect to create database ${name}`);
  }
  try {
    return await withAdminConnection(withDatabase(databaseUrl, 'template1'), create);
  } catch (err) {
    throw translateDbError(err, `create database ${name}`);
  }
}

/** Postgres' lock_not_available: a statement waited past lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03';

async function applyPending(client: pg.Client, migrations: MigrationFile[], log: Logger, lock: { timeoutMs: number; tries: number }): Promise<MigrateResult> {
  await client.query(CREATE_MIGRATIONS_TABLE);
  const { rows } = await client.query<AppliedRow>(
    'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at',
  );
  const live = rows.filter((r) => r.rolled_back_at === null);
  const failed = live.find((r) => r.finished_at === null);
  if (failed) {
    throw migrationError(`migration ${failed.migration_name} failed earlier and is recorded as such; fix the database and mark it rolled back before migrating again`);
  }
  const appliedByName = new Map(live.map((r) => [r.migration_name, r]));
  const onDisk = new Set(migrations.map((m) => m.name));
  for (const r of live) {
    if (!onDisk.has(r.migration_name)) log.warn({ migration: r.migration_name }, 'applied migration missing from disk');
  }
  for (const m of migrations) {
    const row = appliedByName.get(m.name);
    if (row && row.checksum !== m.checksum) {
      throw migrationError(`migration ${m.name} was modified after it was applied (checksum ${row.checksum} in the database, ${m.checksum} on disk)`);
    }
  }

  const result: MigrateResult = { applied: [], alreadyApplied: [], frozen: 0 };
  for (const m of migrations) {
    if (appliedByName.has(m.name)) {
      result.alreadyApplied.push(m.name);
      continue;
    }
    for (let attempt = 1; ; attempt++) {
      const id = randomUUID();
      // Recorded before running, as Prisma does: if the script fails the row stays unfinished with its logs,
      // which blocks later runs until someone looks.
      await client.query(
        'INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) VALUES ($1, $2, $3, now(), 0)',
        [id, m.checksum, m.name],
      );
      try {
        await client.query('BEGIN');
        await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(lock.timeoutMs))}`);
        await client.query(m.sql);
        await client.query('UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1', [id]);
        await client.query('COMMIT');
        break;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        const text = err instanceof Error ? err.message : String(err);
        if ((err as { code?: unknown }).code === LOCK_NOT_AVAILABLE) {
          // Nothing of it was applied: no failure to record, the fleet's statements went on meanwhile.
          await client.query('DELETE FROM "_prisma_migrations" WHERE id = $1', [id]);
          if (attempt < lock.tries) {
            log.warn({ migration: m.name, attempt, lockTimeoutMs: lock.timeoutMs }, 'migration waits for a lock a running transaction holds; tried again shortly');
            await new Promise((r) => setTimeout(r, Math.min(10_000, lock.timeoutMs)));
            continue;
          }
          throw migrationError(`migration ${m.name} could not take its locks in ${lock.tries} tries of ${lock.timeoutMs} ms (a long transaction holds them: see pg_stat_activity); nothing was applied, run migrate again: ${text}`);
        }
        await client.query('UPDATE "_prisma_migrations" SET logs = $2 WHERE id = $1', [id, text]).catch(() => undefined);
        throw migrationError(`migration ${m.name} failed: ${text}`);
      }
    }
    log.info({ migration: m.name }, 'migration applied');
    result.applied.push(m.name);
  }
  return result;
}

/**
 * A database restored from a dump keeps each row's `xact` as the old server wrote it; on a server whose transaction
 * ids are younger no snapshot sees those rows, so every export would leave them out until the ids caught up (and then
 * hand them out again). Marks them as stored before any export. Cheap when there are none (idx_*_xact).
 */
async function freezeForeignTransactions(client: pg.Client, log: Logger): Promise<number> {
  const { rows } = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name IN ('fetched_content', 'page_visits') AND column_name = 'xact'`,
  );
  if (rows[0]!.n < 2) return 0;
  let frozen = 0;
  for (const sql of FREEZE_FOREIGN_XACT_SQL) frozen += (await client.query(sql)).rowCount ?? 0;
  if (frozen > 0) log.warn({ rows: frozen }, 'stored rows restored from another server marked as committed before any export');
  return frozen;
}
