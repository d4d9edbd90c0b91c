import type pg from 'pg';
import type { PrismaClient } from './client.js';

/**
 * Plain parameterised SQL on the Prisma client's own connection pool. The crawler's hot path (a handful of
 * statements per page, thousands of pages a minute) goes through here rather than through Prisma's query engine:
 * measured on the crawl bench, a Prisma call cost ~0.5–0.8 ms of client CPU against ~0.1 ms for the same statement
 * on pg directly. Everything else (CLI, API, analytics) keeps Prisma's typed client.
 *
 * Rows come back as pg returns them: `bigint`/`int8` as strings, timestamptz as Date, json as objects. Statements
 * cast what they return where that matters.
 */
export interface SqlClient {
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]>;
}


const pools = new WeakMap<PrismaClient, pg.Pool>();

/**
 * Statements run as named prepared statements, one name per distinct text: each connection parses a statement once,
 * and afterwards only its parameters travel (the store's statements are up to ~3 KB of SQL, sent and parsed again on
 * every call otherwise). Postgres then plans them its own way (plan_cache_mode auto): five plans for the values, then
 * a generic plan when it costs no more. Forcing a plan per call had made planning a third of Postgres' CPU on the
 * many-domains bench. Bounded, for safety against generated texts: beyond it, unnamed.
 */
const MAX_PREPARED = 256;
const names = new Map<string, string>();

function nameFor(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_PREPARED) {
    name = `crawler_${names.size + 1}`;
    names.set(text, name);
  }
  return name;
}

/** Remember the pool behind a client (createPrismaClient does this). */
export function registerPool(prisma: PrismaClient, pool: pg.Pool): void {
  pools.set(prisma, pool);
}

/**
 * The SQL client for a Prisma client: its pg pool when it was made by createPrismaClient, otherwise Prisma's raw
 * query API (slower, same results for the statements we write: they cast int8 to int or text).
 */
export function sqlOf(prisma: PrismaClient): SqlClient {
  const pool = pools.get(prisma);
  if (pool) {
    return {
      async query<R>(text: string, params: readonly unknown[] = []): Promise<R[]> {
        const res = await pool.query({ name: nameFor(text), text, values: params as unknown[] });
        return res.rows as R[];
      },
    };
  }
  return {
    query: <R>(text: string, params: readonly unknown[] = []) => prisma.$queryRawUnsafe<R[]>(text, ...params),
  };
}

/**
 * Run `fn` in one transaction on one connection of the client's pool (BEGIN … COMMIT, ROLLBACK when it throws).
 * Statements are prepared by name as on the pool (a name is prepared once per connection). Without a registered pool, Prisma's interactive transaction carries the same statements.
 */
export async function withTransaction<T>(prisma: PrismaClient, fn: (sql: SqlClient) => Promise<T>): Promise<T> {
  const pool = pools.get(prisma);
  if (!pool) {
    return prisma.$transaction(async (tx) => fn({ query: <R>(text: string, params: readonly unknown[] = []) => tx.$queryRawUnsafe<R[]>(text, ...params) }));
  }
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const out = await fn({
      async query<R>(text: string, params: readonly unknown[] = []): Promise<R[]> {
        const res = await client.query({ name: nameFor(text), text, values: params as unknown[] });
        return res.rows as R[];
      },
    });
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
