import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrismaClient } from './client.js';
import { DB_ERROR_CODES } from './errors.js';
import { pingDatabase } from './health.js';
import { createTestDatabase, type TestDatabase } from './testing.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('health');
}, 60_000);
afterAll(async () => {
  await db?.drop();
});

describe('pingDatabase', () => {
  it('resolves on a migrated database that takes writes', async () => {
    await expect(pingDatabase(db.prisma)).resolves.toBeUndefined();
  });

  it('rejects, as unavailable, a database that answers reads and refuses writes (read-only after a failover)', async () => {
    // Per database, for new sessions: what a demoted primary or default_transaction_read_only gives every connection.
    await db.prisma.$executeRawUnsafe(`ALTER DATABASE "${db.name}" SET default_transaction_read_only = on`);
    const readOnly = createPrismaClient(db.url, { maxConnections: 1 });
    try {
      await expect(readOnly.$queryRaw`SELECT 1 FROM links LIMIT 1`).resolves.toBeDefined();
      await expect(pingDatabase(readOnly)).rejects.toMatchObject({ code: DB_ERROR_CODES.unavailable });
    } finally {
      await readOnly.$disconnect();
      await db.prisma.$executeRawUnsafe(`ALTER DATABASE "${db.name}" RESET default_transaction_read_only`);
    }
  });

  it('rejects a database the migrations never reached', async () => {
    await db.prisma.$executeRawUnsafe('ALTER TABLE links RENAME TO links_gone');
    try {
      await expect(pingDatabase(db.prisma)).rejects.toThrow();
    } finally {
      await db.prisma.$executeRawUnsafe('ALTER TABLE links_gone RENAME TO links');
    }
  });
});
