import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localServices, treeCpuMs } from './service-stats.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
type TestDb = Awaited<ReturnType<(typeof import('@crawler/db/testing'))['createTestDatabase']>>;
let db: TestDb;

beforeAll(async () => {
  const { createTestDatabase } = await import('@crawler/db/testing');
  db = await createTestDatabase('bench_services');
});
afterAll(() => db?.drop());

describe('localServices', () => {
  it('finds the postmaster of the crawl database and the redis-server that answers, with CPU to read', async () => {
    const found = await localServices(db.prisma, REDIS_URL);
    expect(found.map((s) => s.name)).toEqual(['postgres', 'redis']);
    const [pg, redis] = found;
    // The postmaster is the parent of this connection's backend.
    const [backend] = await db.prisma.$queryRawUnsafe<{ pid: number }[]>('SELECT pg_backend_pid() AS pid');
    const stat = await readFile(`/proc/${backend!.pid}/stat`, 'utf8');
    expect(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])).toBe(pg!.pid);
    expect((await readFile(`/proc/${redis!.pid}/comm`, 'utf8')).trim()).toMatch(/^redis-server/);
    expect(await treeCpuMs(pg!.pid)).toBeGreaterThan(0);
  });

  it('leaves out a Redis it cannot reach instead of failing', async () => {
    const found = await localServices(db.prisma, 'redis://127.0.0.1:1');
    expect(found.map((s) => s.name)).toEqual(['postgres']);
  });
});
