import type { PrismaClient } from './client.js';

/** Postgres answers a trivial statement (health checks); rejects when it does not. */
export async function pingDatabase(prisma: PrismaClient): Promise<void> {
  await prisma.$queryRaw`SELECT 1`;
}
