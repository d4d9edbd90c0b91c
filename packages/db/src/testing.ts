/**
 * Throwaway databases for integration tests (`@crawler/db/testing`). Each call clones a migrated template, so a
 * fresh database costs one CREATE DATABASE instead of a full migration run.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createPrismaClient, type PrismaClient } from './client.js';
import { migrate, readMigrations } from './migrate/migrate.js';
import { locateMigrationsDir } from './migrate/locate.js';
import { quoteIdent, quoteLiteral, withAdminConnection as withAdmin, withDatabase } from './migrate/databases.js';

/** Where test databases are created when `TEST_PG_URL` is not set. */
export const DEFAULT_TEST_PG_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

// Distinct from the migration lock: serialises template creation across test processes on one server.
const TEMPLATE_LOCK_KEY = 72707370;

/** A fresh, migrated database of its own. */
export interface TestDatabase {
  /** Connection string of the new database. */
  url: string;
  /** Its name, `crawler_test_<label>_<pid>_<rand>`. */
  name: string;
  prisma: PrismaClient;
  /** Disconnect the client and drop the database (WITH (FORCE)). Safe to call twice. */
  drop(): Promise<void>;
}

/** Options for {@link createTestDatabase}. */
export interface CreateTestDatabaseOptions {
  /** Server to create it on (any database URL on it). @defaultValue env TEST_PG_URL, else {@link DEFAULT_TEST_PG_URL} */
  serverUrl?: string;
  /** Migrations to apply. @defaultValue the repository's prisma/migrations */
  migrationsDir?: string;
}

/** The template's name changes whenever any migration does, so a stale template is never cloned. */
function templateName(migrationsDir: string): string {
  const hash = createHash('sha256');
  for (const m of readMigrations(migrationsDir)) hash.update(m.name).update(m.checksum);
  return `crawler_test_template_${hash.digest('hex').slice(0, 16)}`;
}

const ensured = new Map<string, Promise<void>>();

async function ensureTemplate(serverUrl: string, migrationsDir: string, template: string): Promise<void> {
  await withAdmin(serverUrl, async (admin) => {
    await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK_KEY]);
    try {
      const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
      if (exists.rowCount) return;
      const building = `${template}_tmp`;
      await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(building)} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${quoteIdent(building)}`);
      await migrate(withDatabase(serverUrl, building), { migrationsDir });
      // Renamed only once complete, so a crash mid-migration never leaves a half-built template behind.
      await admin.query(`ALTER DATABASE ${quoteIdent(building)} RENAME TO ${quoteIdent(template)}`);
      await admin.query(`COMMENT ON DATABASE ${quoteIdent(template)} IS ${quoteLiteral(`built ${new Date().toISOString()}`)}`);
      // Other checkouts on this server (branches with other migrations) may be testing from their own template right
      // now: only templates built more than a day ago are taken for stale.
      const stale = await admin.query<{ datname: string }>(
        `SELECT d.datname FROM pg_database d
          WHERE d.datname LIKE 'crawler\\_test\\_template\\_%' AND d.datname <> $1
            AND coalesce(substring(shobj_description(d.oid, 'pg_database') FROM '^built (.*)$')::timestamptz, '-infinity') < now() - interval '1 day'`,
        [template],
      );
      for (const { datname } of stale.rows) {
        await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(datname)} WITH (FORCE)`).catch(() => undefined);
      }
    } finally {
      await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK_KEY]).catch(() => undefined);
    }
  });
}

/**
 * Create `crawler_test_<label>_<pid>_<rand>`, migrated, and a Prisma client on it. The seed priors are re-dated
 * to now, as if the migration had just run, because the template may be days old.
 */
export async function createTestDatabase(label: string, options: CreateTestDatabaseOptions = {}): Promise<TestDatabase> {
  const serverUrl = options.serverUrl ?? process.env.TEST_PG_URL ?? DEFAULT_TEST_PG_URL;
  const migrationsDir = options.migrationsDir ?? locateMigrationsDir();
  const template = templateName(migrationsDir);
  const key = `${serverUrl}|${template}`;
  if (!ensured.has(key)) ensured.set(key, ensureTemplate(serverUrl, migrationsDir, template));
  try {
    await ensured.get(key);
  } catch (err) {
    ensured.delete(key);
    throw err;
  }

  const safeLabel = label.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 24) || 'x';
  const name = `crawler_test_${safeLabel}_${process.pid}_${randomBytes(4).toString('hex')}`;
  await withAdmin(serverUrl, async (admin) => {
    // CREATE DATABASE ... TEMPLATE fails while anyone else is connected to the template; that only happens for
    // the instant another process checks it, so retry briefly.
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`CREATE DATABASE ${quoteIdent(name)} TEMPLATE ${quoteIdent(template)}`);
        return;
      } catch (err) {
        const message = String((err as Error).message);
        // Another checkout with other migrations drops templates it takes for stale: build ours again.
        if (attempt < 20 && /template database .* does not exist/.test(message)) {
          await ensureTemplate(serverUrl, migrationsDir, template);
          continue;
        }
        if (attempt >= 20 || !/being accessed by other users/.test(message)) throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  });
  const url = withDatabase(serverUrl, name);
  await withAdmin(url, async (client) => {
    // The template's day partitions are those of the day it was built: today's and the week ahead's are made here,
    // as a worker's background loop would, before the priors move to today.
    await client.query("SELECT attempt_log_ensure_partitions(now() - interval '1 day', now() + interval '8 days')");
    // An attempt moving to another partition would take its heuristics with it (each partition holds the key to its
    // twin): they step out, the priors move, and they come back dated now (migration 20261203000100).
    await client.query('BEGIN');
    try {
      await client.query(`CREATE TEMP TABLE "prior_heuristics" ON COMMIT DROP AS
        SELECT h.* FROM attempt_heuristics AS h JOIN fetcher_attempts AS a ON a.id = h.attempt AND a.attempted_at = h.attempted_at
        WHERE a.selection_source = 'prior' AND a.link IS NULL`);
      await client.query('DELETE FROM attempt_heuristics AS h USING "prior_heuristics" AS p WHERE h.id = p.id AND h.attempted_at = p.attempted_at');
      await client.query("SET LOCAL crawler.move_attempts = 'on'");
      await client.query("UPDATE fetcher_attempts SET attempted_at = now() WHERE selection_source = 'prior' AND link IS NULL");
      await client.query(`INSERT INTO attempt_heuristics (id, attempt, heuristic_type, heuristic_value, importance_score, created_at, attempted_at, fetcher, success)
        SELECT id, attempt, heuristic_type, heuristic_value, importance_score, now(), now(), fetcher, success FROM "prior_heuristics"`);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    }
  });
  const prisma = createPrismaClient(url, { maxConnections: 4 });
  let dropped = false;
  return {
    url,
    name,
    prisma,
    async drop() {
      if (dropped) return;
      dropped = true;
      await prisma.$disconnect().catch(() => undefined);
      await withAdmin(serverUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`));
    },
  };
}
