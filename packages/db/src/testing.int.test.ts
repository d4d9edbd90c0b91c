import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, DEFAULT_TEST_PG_URL } from './testing.js';

async function databaseExists(name: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: process.env.TEST_PG_URL ?? DEFAULT_TEST_PG_URL });
  await c.connect();
  try {
    return (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
  } finally {
    await c.end();
  }
}

describe('createTestDatabase', () => {
  it('gives each caller its own migrated database with fresh priors, and drops it', async () => {
    // Priors are re-dated at creation: never older than this, however old the template is.
    const before = Date.now() - 1000;
    const dbs = await Promise.all([createTestDatabase('db_helper'), createTestDatabase('db_helper'), createTestDatabase('Db Helper!')]);
    try {
      expect(new Set(dbs.map((d) => d.name)).size).toBe(3);
      for (const d of dbs) expect(d.name).toMatch(new RegExp(`^crawler_test_db_helper_${process.pid}_[0-9a-f]{8}$`));
      await dbs[0]!.prisma.fetcherRoute.create({ data: { domain: 'only-in-first.test', fetcher: 'playwright' } });
      expect(await dbs[1]!.prisma.fetcherRoute.count()).toBe(0);
      const priors = await dbs[2]!.prisma.fetcherAttempt.findMany({ where: { selectionSource: 'prior' }, include: { heuristics: true } });
      expect(priors).toHaveLength(30);
      for (const p of priors) {
        expect(p.attemptedAt.getTime()).toBeGreaterThanOrEqual(before);
        expect(p.heuristics[0]?.attemptedAt?.getTime()).toBe(p.attemptedAt.getTime());
      }
    } finally {
      for (const d of dbs) await d.drop();
    }
    for (const d of dbs) expect(await databaseExists(d.name)).toBe(false);
    await dbs[0]!.drop();
  });
});
