import { CrawlerError, type ErrorCode } from '@crawler/core';

/** Stable codes for data-layer failures, recorded like any other error type (core's ERROR_POLICY says which are retryable). */
export const DB_ERROR_CODES = {
  /** Postgres is unreachable, the connection dropped, or it cannot take the statement now (full, read-only): retry later. */
  unavailable: 'db_unavailable',
  /** A unique, foreign-key or check constraint refused the write. */
  constraint: 'db_constraint',
  /** The row to update or delete does not exist. */
  notFound: 'db_not_found',
  /** Serialization failure or deadlock: the same statement may succeed if retried. */
  conflict: 'db_conflict',
  /** Migrations on disk and in `_prisma_migrations` disagree, or one failed. */
  migration: 'db_migration',
  /** The value itself cannot be stored (bad encoding, NUL byte, too long for an index): the input's fault. */
  invalidInput: 'db_invalid_input',
  /** Anything else the database refused. */
  other: 'db_error',
} as const satisfies Record<string, ErrorCode>;

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'EAI_AGAIN', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006', 'P1001', 'P1002', 'P1008', 'P1017']);
/**
 * A Postgres that answers but cannot run the statement now, which the operator mends: class 53 (too many clients,
 * disk full, out of memory) and 25006 (a read-only transaction: a failover onto a standby, default_transaction_read_only
 * during maintenance). The same statement succeeds afterwards.
 */
const NOT_NOW_CODES = /^(53[0-9A-Z]{3}|25006)$/;
const CONSTRAINT_CODES = new Set(['23505', '23503', '23502', '23514', 'P2002', 'P2003', 'P2011', 'P2014']);
const CONFLICT_CODES = new Set(['40001', '40P01', 'P2034']);

/**
 * The code an error carries: the server's SQLSTATE under a Prisma error's driver-adapter cause, a pg or net error's
 * own, or a CrawlerError's; an AggregateError's first member's; else its cause's.
 */
export function dbErrorCodeOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { code?: unknown; errorCode?: unknown; cause?: unknown; meta?: { driverAdapterError?: { cause?: { originalCode?: unknown } } } };
  const original = e.meta?.driverAdapterError?.cause?.originalCode;
  if (typeof original === 'string') return original;
  if (typeof e.code === 'string') return e.code;
  if (typeof e.errorCode === 'string') return e.errorCode;
  // AggregateError from net (IPv4 + IPv6 both refused) carries the code on its members.
  const inner = (err as { errors?: unknown[] }).errors;
  if (Array.isArray(inner) && inner.length > 0) return dbErrorCodeOf(inner[0]);
  return e.cause === undefined ? undefined : dbErrorCodeOf(e.cause);
}

/**
 * Translate a pg, Prisma or driver-adapter error into a CrawlerError with a stable code, once, at the data-layer
 * edge. Errors that already are CrawlerErrors pass through.
 */
export function translateDbError(err: unknown, action: string): CrawlerError {
  if (err instanceof CrawlerError) return err;
  const code = dbErrorCodeOf(err);
  const detail = err instanceof Error ? err.message.split('\n').filter(Boolean).slice(-1)[0] : String(err);
  const message = `${action}: ${detail}`;
  if (code === 'P2025') return new CrawlerError(DB_ERROR_CODES.notFound, message, { cause: err });
  if (code && SCHEMA_CODES.has(code)) return new CrawlerError(DB_ERROR_CODES.migration, `${message}: ${NOT_MIGRATED_MESSAGE}`, { cause: err });
  if (code && (CONNECTION_CODES.has(code) || NOT_NOW_CODES.test(code))) return new CrawlerError(DB_ERROR_CODES.unavailable, message, { cause: err });
  if (code && CONSTRAINT_CODES.has(code)) return new CrawlerError(DB_ERROR_CODES.constraint, message, { cause: err });
  if (code && CONFLICT_CODES.has(code)) return new CrawlerError(DB_ERROR_CODES.conflict, message, { cause: err });
  // Class 22 (data exception: invalid byte sequence, value too long) and 54 (program limit exceeded: index row size).
  if (code && /^(22|54)[0-9A-Z]{3}$/.test(code)) return new CrawlerError(DB_ERROR_CODES.invalidInput, message, { cause: err });
  const name = (err as { name?: string } | null)?.name ?? '';
  // Prisma's own words for a server it cannot reach (P1001), which a raw query reports with no code (`N/A`).
  if (name === 'PrismaClientInitializationError' || /connect|ECONNREFUSED|terminat|can't reach database server/i.test(detail)) {
    return new CrawlerError(DB_ERROR_CODES.unavailable, message, { cause: err });
  }
  return new CrawlerError(DB_ERROR_CODES.other, message, { cause: err });
}

/** Undefined table, column or function: the statement names what the database lacks, as before `crawl migrate`. */
const SCHEMA_CODES = new Set(['42P01', '42703', '42883']);

/** True when a database error says the schema is behind the code (migrations not applied). */
export function isSchemaMissingError(err: unknown): boolean {
  // Anywhere in the causes: a translated error carries its own code, Prisma's its own (P2010) over the driver's.
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof CrawlerError) continue;
    const code = dbErrorCodeOf(e);
    if (code !== undefined && SCHEMA_CODES.has(code)) return true;
  }
  return false;
}

/** What to tell a user whose database is not migrated. */
export const NOT_MIGRATED_MESSAGE = 'the database is not migrated (a table or column of the crawler is missing): run `npx crawl migrate` against DATABASE_URL';

/** True when a database error was caused by the values written (retrying them cannot help; other rows can go in). */
export function isInputDbError(err: unknown): boolean {
  const code = translateDbError(err, '').code;
  return code === DB_ERROR_CODES.invalidInput || code === DB_ERROR_CODES.constraint;
}

/** Run `fn`, translating whatever it throws. */
export async function withDbErrors<T>(action: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw translateDbError(err, action);
  }
}
