import { CrawlerError } from '@crawler/core';
import type { PrismaClient } from './client.js';
import { DB_ERROR_CODES } from './errors.js';

/**
 * Postgres answers, with the crawler's tables in place, and takes writes (health checks); rejects when it does not.
 * A database the migrations never reached answers SELECT 1 as well as any, and then fails every request; a server
 * that turned read-only (a demoted primary after a failover, a standby, default_transaction_read_only during
 * maintenance) answers every read and refuses every write with 25006: neither is healthy.
 */
export async function pingDatabase(prisma: PrismaClient): Promise<void> {
  // `links` named so that a missing table fails the statement (42P01); the setting is the one this statement's own
  // transaction runs under, which is what every write of this pool would get.
  const rows = await prisma.$queryRaw<{ readOnly: string }[]>`SELECT current_setting('transaction_read_only') AS "readOnly" FROM (SELECT 1) AS one LEFT JOIN (SELECT 1 FROM links LIMIT 0) AS l ON true`;
  if (rows[0]?.readOnly === 'on') {
    throw new CrawlerError(DB_ERROR_CODES.unavailable, 'Postgres is read-only (a standby, a demoted primary or default_transaction_read_only): writes are refused');
  }
}
