import type { PrismaClient } from './client.js';

/**
 * Postgres answers, with the crawler's tables in place (health checks); rejects when it does not. A database the
 * migrations never reached answers SELECT 1 as well as any, and then fails every request: it is not healthy.
 */
export async function pingDatabase(prisma: PrismaClient): Promise<void> {
  await prisma.$queryRaw`SELECT 1 FROM links LIMIT 0`;
}
