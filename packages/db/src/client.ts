import { DEFAULT_DATABASE_POOL_SIZE } from '@crawler/core';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from './generated/prisma/client.js';
import { registerPool } from './sql.js';

export { PrismaClient };

/** Options for {@link createPrismaClient}. */
export interface CreatePrismaClientOptions {
  /** Connections in the pool (DATABASE_POOL_SIZE for a crawler process). @defaultValue 4 (DEFAULT_DATABASE_POOL_SIZE) */
  maxConnections?: number;
  /** Give up opening a connection after this long. @defaultValue 10_000 */
  connectionTimeoutMs?: number;
}

/**
 * A Prisma client on @prisma/adapter-pg, with session settings for the learning store's short OLTP queries:
 * - `jit=off`: Postgres' JIT compile (tens of milliseconds) would otherwise trigger on their cost estimates;
 * - `max_parallel_workers_per_gather=0`: the planner over-estimates a rollup probe (tens of thousands of rows for
 *   the 21 it reads) and launches parallel workers, which cost ~5 ms for a 0.3 ms query;
 * - `work_mem=32MB`: an exact scan de-duplicates a hot domain's 100k attempts in memory.
 * Prepared statements keep Postgres' own plan choice (plan_cache_mode auto, see sql.ts).
 */
export function createPrismaClient(databaseUrl: string, options: CreatePrismaClientOptions = {}): PrismaClient {
  // One pool, shared by Prisma and by the hot path's plain SQL (sqlOf); $disconnect ends it.
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.maxConnections ?? DEFAULT_DATABASE_POOL_SIZE,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 10_000,
    options: '-c jit=off -c work_mem=32MB -c max_parallel_workers_per_gather=0',
  });
  // An idle connection that drops (Postgres restarted) must not crash the process: the next query reconnects.
  pool.on('error', () => {});
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  registerPool(prisma, pool);
  // The pool is ours, so $disconnect ends it, whether or not Prisma itself ever connected.
  const disconnect = prisma.$disconnect.bind(prisma);
  Object.defineProperty(prisma, '$disconnect', {
    configurable: true,
    value: async () => {
      await disconnect();
      if (!pool.ended) await pool.end();
    },
  });
  return prisma;
}
