import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DATABASE_POOL_SIZE } from '@crawler/core';
import { createPrismaClient } from './client.js';
import { sqlOf } from './sql.js';
import { createTestDatabase, type TestDatabase } from './testing.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('client_pool');
}, 60_000);
afterAll(async () => {
  await db?.drop();
});

/** The distinct Postgres backends that served `n` statements sent at once, each holding its connection for a while. */
async function backendsFor(maxConnections: number | undefined, n: number): Promise<number> {
  const prisma = createPrismaClient(db.url, maxConnections === undefined ? {} : { maxConnections });
  try {
    const sql = sqlOf(prisma);
    const rows = await Promise.all(Array.from({ length: n }, () => sql.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.1)')));
    return new Set(rows.map(([r]) => r!.pid)).size;
  } finally {
    await prisma.$disconnect();
  }
}

describe('createPrismaClient', () => {
  it('keeps DEFAULT_DATABASE_POOL_SIZE connections (4) unless told otherwise, however many statements wait', async () => {
    expect(DEFAULT_DATABASE_POOL_SIZE).toBe(4);
    expect(await backendsFor(undefined, 12)).toBe(4);
    expect(await backendsFor(2, 12)).toBe(2);
  });
});
