import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, ManualClock, ROUTING_HEURISTIC_TYPES, extractUrlHeuristics, type Heuristic } from '@crawler/core';
import { createTestDatabase, type TestDatabase } from '../testing.js';
import { AttemptStore } from './attempt-store.js';
import type { AttemptInput } from './types.js';

// The rollup answer (inclusion–exclusion over pre-aggregated subsets) must equal the exact scan (FindBestFetcher
// over every matching attempt) after any mix of writes: batches, direct client writes, updates, deletes, cascades and retention.
let db: TestDatabase;
let clock: ManualClock;
let store: AttemptStore;
/** expectSame's section scored alone, per query. */
let alones: (Heuristic | undefined)[] = [];

// A small deterministic PRNG so a failure reproduces.
function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (x + 0x6d2b79f5) >>> 0;
    let t = Math.imul(x ^ (x >>> 15), 1 | x);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(20261122);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

const DOMAINS = ['a.eq', 'b.eq', 'c.eq', 'd.eq'];
const SUFFIXES = ['.html', '.pdf', '.php'];
const SECTIONS = ['app', 'blog'];
const FETCHERS = ['simple_http', 'direct_access', 'playwright', 'playwright_stealth'];

function randomHeuristics(): Heuristic[] {
  const hs: Heuristic[] = [{ type: 'domain', value: pick(DOMAINS) }, { type: 'path_depth', value: String(1 + Math.floor(rand() * 3)) }];
  if (rand() < 0.6) hs.push({ type: 'suffix', value: pick(SUFFIXES) });
  if (rand() < 0.7) hs.push({ type: 'section', value: `${hs[0]!.value}/${pick(SECTIONS)}` });
  if (rand() < 0.3) hs.push({ type: 'contains_cdn', value: 'true' });
  if (rand() < 0.5) hs.push({ type: 'status_200', value: 'true' });
  if (rand() < 0.1) hs.push({ ...hs[0]! }); // a duplicate pair on one attempt
  return hs;
}

function randomQuery(): Heuristic[] {
  const all: Heuristic[] = [
    ...DOMAINS.map((value) => ({ type: 'domain', value })),
    ...SUFFIXES.map((value) => ({ type: 'suffix', value })),
    ...DOMAINS.slice(0, 2).flatMap((d) => SECTIONS.map((sec) => ({ type: 'section', value: `${d}/${sec}` }))),
    // Logged with every attempt but not rolled up (not a routing type): a query naming it takes the exact scan.
    { type: 'path_depth', value: '1' }, { type: 'contains_cdn', value: 'true' },
  ];
  const n = 1 + Math.floor(rand() * 4);
  return Array.from({ length: n }, () => pick(all));
}

/** A section heuristic to score alone beside a query, or none (a third of the time). */
function randomAlone(): Heuristic | undefined {
  return rand() < 0.33 ? undefined : { type: 'section', value: `${pick(DOMAINS)}/${pick(SECTIONS)}` };
}

async function expectSame(queries: Heuristic[][]): Promise<void> {
  for (const [i, q] of queries.entries()) {
    const alone = alones[i];
    const fast = await store.findBestFetcher(q, { alone });
    const exact = await store.findBestFetcher(q, { strategy: 'scan', alone });
    // The section scored alone: the same counts and weights either way.
    expect(fast.alone?.attempts).toBe(exact.alone?.attempts);
    expect(fast.alone?.result.scores.map((s) => [s.fetcher, s.sampleSize, s.eligible])).toEqual(exact.alone?.result.scores.map((s) => [s.fetcher, s.sampleSize, s.eligible]));
    fast.alone?.result.scores.forEach((s, j) => expect(s.decayedSuccesses).toBeCloseTo(exact.alone!.result.scores[j]!.decayedSuccesses, 6));
    expect(fast.scores.map((s) => [s.fetcher, s.sampleSize, s.eligible])).toEqual(exact.scores.map((s) => [s.fetcher, s.sampleSize, s.eligible]));
    fast.scores.forEach((s, i) => {
      expect(s.decayedSuccesses).toBeCloseTo(exact.scores[i]!.decayedSuccesses, 6);
      expect(s.confidence).toBeCloseTo(exact.scores[i]!.confidence, 9);
    });
    expect(fast.best?.fetcher).toBe(exact.best?.fetcher);
  }
}

beforeAll(async () => {
  db = await createTestDatabase('db_rollup');
  clock = new ManualClock(Date.now());
  store = new AttemptStore({ prisma: db.prisma, clock });
});
afterAll(async () => {
  await db?.drop();
});

describe('rollup ↔ exact scan', () => {
  const queries = Array.from({ length: 40 }, randomQuery);
  alones = queries.map(randomAlone);
  let linkIds: string[] = [];

  it('agree after batched logging', async () => {
    const links = await Promise.all(
      [0, 1, 2].map((i) => db.prisma.link.create({ data: { url: `https://eq/${i}`, initialUrl: `https://eq/${i}`, domain: 'eq' } })),
    );
    linkIds = links.map((l) => l.id);
    const inputs: AttemptInput[] = Array.from({ length: 300 }, (_, i) => ({
      linkId: rand() < 0.5 ? pick(linkIds) : null,
      url: `https://eq/${i}`,
      fetcher: pick(FETCHERS),
      success: rand() < 0.7,
      attemptedAt: new Date(clock.now().getTime() - Math.floor(rand() * 120) * DAY_MS - Math.floor(rand() * DAY_MS)),
      heuristics: randomHeuristics(),
    })).map((a) => (!a.success && rand() < 0.3 ? { ...a, errorType: 'rate_limited', isBanned: true } : a));
    for (let i = 0; i < inputs.length; i += 50) await store.logAttempts(inputs.slice(i, i + 50));
    const q = await store.findBestFetcher([{ type: 'domain', value: 'a.eq' }]);
    expect(q.scores.length).toBeGreaterThan(0);
    await expectSame(queries);
  });

  it('agree after concurrent writers sharing hot rollup rows (no deadlock, nothing lost)', async () => {
    const writer = async (w: number) => {
      for (let b = 0; b < 8; b++) {
        await store.logAttempts(
          Array.from({ length: 15 }, (_, i) => ({
            url: `https://eq/w${w}/${b}/${i}`,
            fetcher: pick(FETCHERS),
            success: rand() < 0.7,
            attemptedAt: new Date(clock.now().getTime() - Math.floor(rand() * 60) * DAY_MS),
            heuristics: randomHeuristics(),
          })),
        );
      }
    };
    const before = await db.prisma.fetcherAttempt.count();
    await Promise.all([0, 1, 2, 3].map(writer));
    expect(await db.prisma.fetcherAttempt.count()).toBe(before + 4 * 8 * 15);
    await expectSame(queries);
  });

  it('agree after direct client writes, updates and heuristic deletes', async () => {
    for (let i = 0; i < 20; i++) {
      await db.prisma.fetcherAttempt.create({
        data: {
          url: `https://eq/direct/${i}`, fetcher: pick(FETCHERS), success: rand() < 0.5, attemptedAt: new Date(clock.now().getTime() - i * DAY_MS),
          heuristics: { create: randomHeuristics().map((h) => ({ heuristicType: h.type, heuristicValue: h.value })) },
        },
      });
    }
    const some = await db.prisma.fetcherAttempt.findMany({ where: { url: { startsWith: 'https://eq/' } }, take: 60, orderBy: { id: 'desc' } });
    for (const a of some.slice(0, 20)) {
      await db.prisma.fetcherAttempt.update({ where: { id_attemptedAt: { id: a.id, attemptedAt: a.attemptedAt } }, data: { success: !a.success, fetcher: pick(FETCHERS) } });
    }
    // An attempt's time is its key in the log: moving it is refused, and changes nothing.
    const moved = some[0]!;
    await expect(db.prisma.fetcherAttempt.update({ where: { id_attemptedAt: { id: moved.id, attemptedAt: moved.attemptedAt } }, data: { attemptedAt: new Date(moved.attemptedAt.getTime() - 5 * DAY_MS) } }))
      .rejects.toThrow(/do not change/);
    await db.prisma.fetcherAttempt.updateMany({ where: { id: { in: some.slice(20, 40).map((a) => a.id) } }, data: { success: true } });
    const heur = await db.prisma.attemptHeuristic.findMany({ where: { attemptId: { in: some.map((a) => a.id) } }, take: 40 });
    await db.prisma.attemptHeuristic.deleteMany({ where: { id: { in: heur.slice(0, 15).map((h) => h.id) } } });
    for (const h of heur.slice(15, 25)) {
      await db.prisma.attemptHeuristic.update({ where: { id_attemptedAt: { id: h.id, attemptedAt: h.attemptedAt } }, data: { heuristicValue: pick([...DOMAINS, ...SUFFIXES]) } });
    }
    await db.prisma.attemptHeuristic.createMany({
      data: some.slice(40, 60).map((a) => ({ attemptId: a.id, attemptedAt: a.attemptedAt, heuristicType: 'suffix', heuristicValue: pick(SUFFIXES) })),
    });
    await expectSame(queries);
  });

  it('agree after attempt deletes, link cascades and retention', async () => {
    const victims = await db.prisma.fetcherAttempt.findMany({ where: { url: { startsWith: 'https://eq/' } }, take: 25, orderBy: { id: 'asc' } });
    await db.prisma.fetcherAttempt.deleteMany({ where: { id: { in: victims.map((v) => v.id) } } });
    await db.prisma.link.delete({ where: { id: linkIds[0]! } });
    const pruned = await store.pruneAttempts({ olderThanDays: 90, batchSize: 17 });
    expect(pruned.attempts).toBeGreaterThan(0);
    await expectSame(queries);
  });

  it('falls back to the scan for unlisted types, other half-lives and attempts far in the future', async () => {
    await store.logAttempts([{ url: 'https://eq/future', fetcher: 'playwright', success: true, attemptedAt: new Date(clock.now().getTime() + 2 * DAY_MS), heuristics: [{ type: 'domain', value: 'future.eq' }] }]);
    for (let i = 0; i < 5; i++) await store.logAttempt({ url: 'https://eq/f', fetcher: 'playwright', success: true, heuristics: [{ type: 'domain', value: 'future.eq' }] });
    // The scan clamps the future attempt's weight to 1; the fallback must too.
    const r = await store.findBestFetcher([{ type: 'domain', value: 'future.eq' }]);
    expect(r.best).toMatchObject({ sampleSize: 6 });
    expect(r.best?.decayedSuccesses).toBeCloseTo(6, 9);
    await expectSame([[{ type: 'status_200', value: 'true' }, { type: 'domain', value: 'b.eq' }]]);
    const tenDay = await store.findBestFetcher([{ type: 'domain', value: 'b.eq' }], { halfLifeDays: 10 });
    const tenDayScan = await store.findBestFetcher([{ type: 'domain', value: 'b.eq' }], { halfLifeDays: 10, strategy: 'scan' });
    expect(tenDay).toEqual(tenDayScan);
  });

  it('leave rate-limited attempts out in both branches, and follow an attempt whose error type changes', async () => {
    const q = [{ type: 'domain', value: 'pace.eq' }];
    const log = (n: number, over: Partial<AttemptInput>) =>
      store.logAttempts(Array.from({ length: n }, (_, i) => ({ url: `https://eq/pace/${i}`, fetcher: 'simple_http', success: true, heuristics: q, ...over })));
    await log(10, {});
    await log(20, { success: false, isBanned: true, errorType: 'rate_limited', httpStatus: 429 });
    for (const strategy of ['auto', 'scan'] as const) {
      const r = await store.findBestFetcher(q, { strategy });
      expect(r.best).toMatchObject({ fetcher: 'simple_http', sampleSize: 10 });
      expect(r.best?.confidence).toBeGreaterThan(0.6);
    }
    // The same failures as 403s are evidence against the fetcher.
    const ids = (await db.prisma.fetcherAttempt.findMany({ where: { errorType: 'rate_limited', url: { startsWith: 'https://eq/pace/' } }, select: { id: true } })).map((a) => a.id);
    await db.prisma.fetcherAttempt.updateMany({ where: { id: { in: ids.slice(0, 10) } }, data: { errorType: 'blocked_403' } });
    await expectSame([q]);
    expect((await store.findBestFetcher(q)).scores[0]).toMatchObject({ sampleSize: 20 });
    await db.prisma.fetcherAttempt.updateMany({ where: { id: { in: ids.slice(0, 5) } }, data: { errorType: 'rate_limited' } });
    await expectSame([q, ...queries]);
    expect((await store.findBestFetcher(q)).scores[0]).toMatchObject({ sampleSize: 15 });
  });

  it('leave refused-certificate attempts out in both branches: every tool meets the same certificate', async () => {
    const q = [{ type: 'domain', value: 'cert.eq' }];
    await store.logAttempts(Array.from({ length: 10 }, (_, i) => ({ url: `https://cert.eq/${i}`, fetcher: 'simple_http', success: true, heuristics: q })));
    const failed = await store.logAttempts(Array.from({ length: 20 }, (_, i) => ({ url: `https://cert.eq/x${i}`, fetcher: 'simple_http', success: false, errorType: 'tls_error', heuristics: q })));
    for (const strategy of ['auto', 'scan'] as const) {
      expect((await store.findBestFetcher(q, { strategy })).best).toMatchObject({ fetcher: 'simple_http', sampleSize: 10 });
    }
    // The triggers' own computation (a refresh, a rebuild) agrees with the keys the log stored: none.
    const stored = await db.prisma.$queryRawUnsafe<{ same: boolean; keys: string[] | null }[]>(
      'SELECT rollup_keys IS NOT DISTINCT FROM rollup_keys_of(id) AS same, rollup_keys AS keys FROM fetcher_attempts WHERE id = ANY($1::bigint[])',
      failed.map(String),
    );
    expect(stored.every((r) => r.same && r.keys === null)).toBe(true);
    await db.prisma.$executeRawUnsafe('SELECT rollup_rebuild()');
    expect((await store.findBestFetcher(q)).best).toMatchObject({ fetcher: 'simple_http', sampleSize: 10 });
    await expectSame([q]);
  });

  it('the attempt log stores the keys the triggers would compute and adds each attempt to its own shard', async () => {
    const ids = await store.logAttempts([
      { url: 'https://shard.eq/a', fetcher: 'simple_http', success: true, heuristics: [{ type: 'domain', value: 'shard.eq' }, { type: 'section', value: 'shard.eq/a' }, { type: 'path_depth', value: '1' }, { type: 'status_200', value: 'true' }] },
      { url: 'https://shard.eq/b', fetcher: 'simple_http', success: true, heuristics: [{ type: 'domain', value: 'shard.eq' }] },
      { url: 'https://shard.eq/c', fetcher: 'simple_http', success: false, errorType: 'rate_limited', heuristics: [{ type: 'domain', value: 'shard.eq' }] },
    ]);
    const stored = await db.prisma.$queryRawUnsafe<{ same: boolean; keys: string[] | null }[]>(
      'SELECT rollup_keys IS NOT DISTINCT FROM rollup_keys_of(id) AS same, rollup_keys AS keys FROM fetcher_attempts WHERE id = ANY($1::bigint[]) ORDER BY id',
      ids.map(String),
    );
    expect(stored.map((r) => r.same)).toEqual([true, true, true]);
    // Only the types the router queries are rolled up: path_depth and status_200 are logged, not rolled.
    expect(stored.map((r) => r.keys)).toEqual([['domain\u001fshard.eq', 'section\u001fshard.eq/a'], ['domain\u001fshard.eq'], null]);
    const rows = await db.prisma.$queryRawUnsafe<{ shard: number; attempts: bigint }[]>(
      `SELECT shard, attempts FROM heuristic_rollups WHERE subset_key = 'domain' || chr(31) || 'shard.eq' ORDER BY shard`,
    );
    const want = new Map<number, number>();
    for (const id of ids.slice(0, 2)) want.set(Number(id % 16n), (want.get(Number(id % 16n)) ?? 0) + 1);
    expect(rows.map((r) => [r.shard, Number(r.attempts)])).toEqual([...want.entries()].sort((a, b) => a[0] - b[0]));
    await expectSame([[{ type: 'domain', value: 'shard.eq' }], ...queries]);
  });

  it('rolls up exactly the types the router queries, so an article costs 3 rollup rows (not 7), a CDN asset 15 (not 63)', async () => {
    const types = await db.prisma.$queryRawUnsafe<{ heuristic_type: string }[]>('SELECT heuristic_type FROM heuristic_rollup_types ORDER BY 1');
    expect(types.map((t) => t.heuristic_type)).toEqual([...ROUTING_HEURISTIC_TYPES].sort());
    const rowsFor = async (url: string): Promise<number> => {
      const [id] = await store.logAttempts([{ url, fetcher: 'simple_http', success: true, heuristics: extractUrlHeuristics(url) }]);
      const r = await db.prisma.$queryRawUnsafe<{ n: number }[]>('SELECT count(*)::int AS n FROM rollup_subsets((SELECT rollup_keys FROM fetcher_attempts WHERE id = $1::bigint))', String(id));
      return r[0]!.n;
    };
    expect(await rowsFor('https://rows.eq/blog/2024/05/some-article')).toBe(3);
    expect(await rowsFor('https://cdn.rows.eq/static/assets/app.js?v=1')).toBe(15);
  });

  it('really answers from the rollups, and rollup_rebuild() restores them', async () => {
    const q = [{ type: 'domain', value: 'a.eq' }];
    const before = await store.findBestFetcher(q);
    await db.prisma.$executeRawUnsafe(`UPDATE heuristic_rollups SET attempts = attempts + 1000 WHERE subset_key = 'domain' || chr(31) || 'a.eq'`);
    const corrupted = await store.findBestFetcher(q);
    const rows = await db.prisma.heuristicRollup.count({ where: { subsetKey: 'domain\u001fa.eq' } });
    expect(rows).toBeGreaterThan(0);
    const total = (r: typeof before) => r.scores.reduce((n, s) => n + s.sampleSize, 0);
    expect(total(corrupted)).toBe(total(before) + 1000 * rows);
    await db.prisma.$executeRawUnsafe('SELECT rollup_rebuild()');
    const rebuilt = await store.findBestFetcher(q);
    expect(rebuilt.scores.map((x) => [x.fetcher, x.sampleSize])).toEqual(before.scores.map((x) => [x.fetcher, x.sampleSize]));
    rebuilt.scores.forEach((x, i) => expect(x.decayedSuccesses).toBeCloseTo(before.scores[i]!.decayedSuccesses, 9));
    await expectSame(queries);
  });
  it('rollup_subsets() gives exactly the subsets of the mask enumeration it replaced, in key order (0 to 10 keys)', async () => {
    for (let n = 0; n <= 10; n++) {
      const keys = Array.from({ length: n }, (_, i) => `k${String(i).padStart(2, '0')}\u001fv${i}`);
      const [{ fast, masks }] = await db.prisma.$queryRawUnsafe<{ fast: string[] | null; masks: string[] | null }[]>(
        `SELECT (SELECT array_agg(s ORDER BY s) FROM rollup_subsets($1::text[]) AS s) AS fast,
                (SELECT array_agg(x.k ORDER BY x.k) FROM (
                   SELECT string_agg(u.k, chr(30) ORDER BY u.i) AS k
                   FROM generate_series(1, (1 << cardinality($1::text[])) - 1) AS m(mask)
                   JOIN unnest($1::text[]) WITH ORDINALITY AS u(k, i) ON (m.mask >> (u.i::int - 1)) & 1 = 1
                   GROUP BY m.mask) AS x) AS masks`,
        keys,
      );
      expect(fast?.length ?? 0).toBe(2 ** n - 1);
      expect(fast).toEqual(masks);
    }
    const [{ none }] = await db.prisma.$queryRawUnsafe<{ none: bigint }[]>('SELECT count(*) AS none FROM rollup_subsets(NULL)');
    expect(Number(none)).toBe(0);
  });
});
