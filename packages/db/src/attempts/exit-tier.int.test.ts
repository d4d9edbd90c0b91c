import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, type Heuristic } from '@crawler/core';
import { createTestDatabase, type TestDatabase } from '../testing.js';
import { sqlOf } from '../sql.js';
import { AttemptStore } from './attempt-store.js';
import type { AttemptInput } from './types.js';

let db: TestDatabase;
let store: AttemptStore;

beforeAll(async () => {
  db = await createTestDatabase('db_exit_tier');
  store = new AttemptStore({ prisma: db.prisma, clock: new ManualClock(Date.now()) });
});
afterAll(async () => {
  await db?.drop();
});

function attempts(n: number, fetcher: string, exitTier: string | undefined, success: boolean, h: Heuristic[]): AttemptInput[] {
  return Array.from({ length: n }, (_, i) => ({ url: `https://${h[0]!.value}/${fetcher}/${exitTier}/${i}`, fetcher, success, heuristics: h, ...(exitTier ? { exitTier } : {}) }));
}

describe('attempts by exit tier', () => {
  it('records the tier, keeps the fetcher, and scores each (fetcher, tier) arm apart, rollups and scan alike', async () => {
    const h = [{ type: 'domain', value: 'ranges.test' }];
    await store.logAttempts([
      ...attempts(6, 'simple_http', undefined, false, h),
      ...attempts(6, 'simple_http', 'datacenter', false, h),
      ...attempts(8, 'simple_http', 'residential', true, h),
    ]);
    const rows = await sqlOf(db.prisma).query<{ fetcher: string; exit_tier: string; n: number }>(
      `SELECT fetcher, exit_tier, count(*)::int AS n FROM fetcher_attempts WHERE url LIKE 'https://ranges.test/%' GROUP BY 1, 2 ORDER BY 2`,
      [],
    );
    expect(rows).toEqual([
      { fetcher: 'simple_http', exit_tier: 'datacenter', n: 6 },
      { fetcher: 'simple_http', exit_tier: 'direct', n: 6 },
      { fetcher: 'simple_http', exit_tier: 'residential', n: 8 },
    ]);
    const rolled = await store.findBestFetcher(h);
    const scanned = await store.findBestFetcher(h, { strategy: 'scan' });
    for (const r of [rolled, scanned]) {
      const by = Object.fromEntries(r.scores.map((s) => [s.fetcher, s.sampleSize]));
      expect(by).toEqual({ simple_http: 6, 'simple_http@datacenter': 6, 'simple_http@residential': 8 });
      expect(r.best?.fetcher).toBe('simple_http@residential');
    }
  });

  it('moves an attempt between arms when its tier is corrected, and rebuilds the same rollups', async () => {
    const h = [{ type: 'domain', value: 'moved.test' }];
    await store.logAttempts(attempts(5, 'simple_http', 'datacenter', true, h));
    await sqlOf(db.prisma).query(`UPDATE fetcher_attempts SET exit_tier = 'residential' WHERE url LIKE 'https://moved.test/%'`, []);
    const after = await store.findBestFetcher(h);
    expect(after.scores.map((s) => [s.fetcher, s.sampleSize])).toEqual([['simple_http@residential', 5]]);
    const heur = await sqlOf(db.prisma).query<{ fetcher: string }>(
      `SELECT DISTINCT ah.fetcher FROM attempt_heuristics ah JOIN fetcher_attempts fa ON fa.id = ah.attempt AND fa.attempted_at = ah.attempted_at WHERE fa.url LIKE 'https://moved.test/%'`,
      [],
    );
    expect(heur).toEqual([{ fetcher: 'simple_http@residential' }]);
    const before = await sqlOf(db.prisma).query(`SELECT subset_key, fetcher, sum(attempts)::int AS a FROM heuristic_rollups WHERE attempts <> 0 GROUP BY 1, 2 ORDER BY 1, 2`, []);
    await sqlOf(db.prisma).query(`SELECT rollup_rebuild()`, []);
    const rebuilt = await sqlOf(db.prisma).query(`SELECT subset_key, fetcher, sum(attempts)::int AS a FROM heuristic_rollups WHERE attempts <> 0 GROUP BY 1, 2 ORDER BY 1, 2`, []);
    expect(rebuilt).toEqual(before);
  });

  it('refuses a tier that is not a tier name', async () => {
    await expect(store.logAttempts([{ url: 'https://x.test/', fetcher: 'simple_http', success: true, heuristics: [], exitTier: 'Bad Tier' }])).rejects.toThrow(/exitTier/);
  });

  it('records which proxy carried a proxied attempt, masked even when given with credentials, and counts per proxy', async () => {
    const h = [{ type: 'domain', value: 'proxied.test' }];
    const via = (proxy: string | undefined, tier: string, success: boolean, isBanned = false): AttemptInput => ({
      url: `https://proxied.test/${tier}/${Math.random()}`, fetcher: 'simple_http', success, isBanned, exitTier: tier, heuristics: h, ...(proxy ? { exitProxy: proxy } : {}),
    });
    await store.logAttempts([
      via('http://***@127.0.0.1:8001', 'datacenter', false, true),
      via('http://dcUser:dcSecret@127.0.0.1:8001', 'datacenter', false, true),
      via('socks5://resUser:resSecret@127.0.0.1:9001', 'residential', true),
      via('socks5://***@127.0.0.1:9001', 'residential', true),
      via('socks5://***@127.0.0.1:9001', 'residential', true),
      via(undefined, 'direct', false, true),
    ]);
    const stored = await sqlOf(db.prisma).query<{ exit_proxy: string | null }>(`SELECT exit_proxy FROM fetcher_attempts WHERE url LIKE 'https://proxied.test/%' ORDER BY id`, []);
    expect(stored.map((r) => r.exit_proxy)).toEqual([
      'http://***@127.0.0.1:8001', 'http://***@127.0.0.1:8001', 'socks5://***@127.0.0.1:9001', 'socks5://***@127.0.0.1:9001', 'socks5://***@127.0.0.1:9001', null,
    ]);
    const stats = await store.statsByProxy({ sinceDays: 1 });
    expect(stats.map((s) => [s.tier, s.key, s.attempts, s.successRate, s.banRate])).toEqual([
      ['residential', 'socks5://***@127.0.0.1:9001', 3, 1, 0],
      ['datacenter', 'http://***@127.0.0.1:8001', 2, 0, 1],
    ]);
    await expect(store.logAttempts([{ ...via(undefined, 'datacenter', true), exitProxy: 42 as unknown as string }])).rejects.toThrow(/exitProxy is not a string/);
  });
});
