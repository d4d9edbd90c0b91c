import pg from 'pg';
import { migrate, type MigrateOptions } from './migrate.js';

/** `url` with its database name replaced by `database`. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** A Postgres identifier, quoted. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** A Postgres string literal, quoted (for DDL, which takes no parameters). */
export function quoteLiteral(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** Run `fn` on a plain pg connection to `url` (DDL such as CREATE DATABASE cannot run inside Prisma's pool). */
export async function withAdminConnection<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Drop database `name` on the server of `serverUrl` (any database URL on it), connections and all. No-op when absent. */
export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  await withAdminConnection(withDatabase(serverUrl, 'postgres'), (admin) => admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`));
}

/**
 * Drop database `name` if it exists, create it empty and apply the migrations: a clean database every call (the demo's,
 * so its first crawl really starts knowing nothing). Returns its URL.
 */
export async function recreateDatabase(serverUrl: string, name: string, options: MigrateOptions = {}): Promise<string> {
  await withAdminConnection(withDatabase(serverUrl, 'postgres'), async (admin) => {
    await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${quoteIdent(name)}`);
  });
  const url = withDatabase(serverUrl, name);
  await migrate(url, options);
  return url;
}
