import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, ManualClock, scoreFetchers, type Heuristic } from '@crawler/core';
import { createTestDatabase, type TestDatabase } from '../testing.js';
import { AttemptStore } from './attempt-store.js';
import type { AttemptInput } from './types.js';
import { AttemptBatchError } from './log-attempts.js';

let db: TestDatabase;
let clock: ManualClock;
let store: AttemptStore;

beforeAll(async () => {
  db = await createTestDatabase('db_attempts');
  // Real "now" so the seed priors (dated by the migration) are fresh relative to the clock.
  clock = new ManualClock(Date.now());
  store = new AttemptStore({ prisma: db.prisma, clock });
});
afterAll(async () => {
  await db?.drop();
});

const ago = (days: number) => new Date(clock.now().getTime() - days * DAY_MS);

function attempts(n: number, fetcher: string, success: boolean, heuristics: Heuristic[], daysAgo = 0, extra: Partial<AttemptInput> = {}): AttemptInput[] {
  return Array.from({ length: n }, (_, i) => ({
    url: `https://${heuristics[0]?.value ?? 'x'}/${fetcher}/${i}`,
    fetcher,
    success,
    attemptedAt: ago(daysAgo),
    selectionSource: 'learned',
    heuristics,
    ...extra,
  }));
}

describe('findBestFetcher', () => {
  it('reproduces the confidence table of the design (5/5 → 0.50, 8/10 → 0.80, 14/20 → 0.70, 3/3 rejected)', async () => {
    const table: [string, number, number, number | null][] = [
      ['conf-a.test', 5, 5, 0.5],
      ['conf-b.test', 10, 8, 0.8],
      ['conf-c.test', 20, 14, 0.7],
      ['conf-d.test', 3, 3, null],
    ];
    for (const [domain, n, ok] of table) {
      const h = [{ type: 'domain', value: domain }];
      await store.logAttempts([...attempts(ok, 'playwright', true, h), ...attempts(n - ok, 'playwright', false, h)]);
    }
    for (const [domain, n, , confidence] of table) {
      const r = await store.findBestFetcher([{ type: 'domain', value: domain }]);
      expect(r.scores).toHaveLength(1);
      expect(r.scores[0]?.sampleSize).toBe(n);
      if (confidence === null) {
        expect(r.best).toBeNull();
        expect(r.scores[0]).toMatchObject({ eligible: false });
        expect(r.scores[0]?.confidence).toBeCloseTo(0.3, 10);
      } else {
        expect(r.best?.confidence).toBeCloseTo(confidence, 10);
      }
    }
  });

  it('decays successes by 0.5^(days/30): today 1, 15 d ≈ 0.707, 30 d 0.5, 60 d 0.25, 90 d 0.125', async () => {
    const table: [number, number][] = [[0, 1], [15, Math.SQRT1_2], [30, 0.5], [60, 0.25], [90, 0.125]];
    for (const [days] of table) {
      await store.logAttempts(attempts(10, 'simple_http', true, [{ type: 'domain', value: `decay-${days}.test` }], days));
    }
    for (const [days, weight] of table) {
      const { best } = await store.findBestFetcher([{ type: 'domain', value: `decay-${days}.test` }]);
      expect(best?.decayedSuccesses).toBeCloseTo(10 * weight, 6);
      expect(best?.confidence).toBeCloseTo(weight, 6);
    }
  });

  it('honours the now and halfLifeDays options', async () => {
    const h = [{ type: 'domain', value: 'decay-0.test' }];
    const later = await store.findBestFetcher(h, { now: new Date(clock.now().getTime() + 30 * DAY_MS) });
    expect(later.best?.confidence).toBeCloseTo(0.5, 6);
    const fast = await store.findBestFetcher(h, { now: new Date(clock.now().getTime() + 10 * DAY_MS), halfLifeDays: 10 });
    expect(fast.best?.confidence).toBeCloseTo(0.5, 6);
  });

  it('wikipedia.org/document.pdf: the larger, more successful .pdf evidence wins (no priority between heuristics: sample size decides)', async () => {
    const wiki = [{ type: 'domain', value: 'wikipedia.org' }];
    const pdf = [{ type: 'suffix', value: '.pdf' }];
    await store.logAttempts([
      ...attempts(40, 'playwright', true, wiki),
      ...attempts(10, 'playwright', false, wiki),
      ...attempts(180, 'direct_access', true, pdf),
      ...attempts(20, 'direct_access', false, pdf),
    ]);
    const r = await store.findBestFetcher([...wiki, ...pdf]);
    expect(r.best?.fetcher).toBe('simple_http');
    // 180 + 20 logged + the 10 seeded .pdf priors, all plain HTTP.
    expect(r.best?.sampleSize).toBe(210);
    expect(r.best?.confidence).toBeCloseTo(190 / 210, 6);
    expect(r.scores.map((s) => s.fetcher)).toEqual(['simple_http', 'playwright']);
    expect(r.scores[1]?.confidence).toBeCloseTo(0.8, 6);
  });

  it('5 successes 60 days old + 2 fresh failures fall below 0.6 (time decay)', async () => {
    const h = [{ type: 'domain', value: 'stale.test' }];
    await store.logAttempts([...attempts(5, 'playwright', true, h, 60), ...attempts(2, 'playwright', false, h, 0)]);
    const { best } = await store.findBestFetcher(h);
    expect(best?.sampleSize).toBe(7);
    expect(best?.successRate).toBeCloseTo((5 * 0.25) / 7, 6);
    expect(best!.confidence).toBeLessThan(0.6);
  });

  it('counts an attempt matching several heuristics once (DISTINCT attempts)', async () => {
    const h = [{ type: 'domain', value: 'both.test' }, { type: 'suffix', value: '.both' }];
    await store.logAttempts(attempts(6, 'playwright', true, h));
    const r = await store.findBestFetcher(h);
    expect(r.best?.sampleSize).toBe(6);
    const dup = await store.findBestFetcher([...h, h[0]!]);
    expect(dup.best?.sampleSize).toBe(6);
  });

  it('finds a brand-new heuristic type without code changes', async () => {
    const h = [{ type: 'video_platform_xyz', value: 'true' }];
    await store.logAttempts(attempts(10, 'playwright_stealth', true, h));
    const r = await store.findBestFetcher([{ type: 'domain', value: 'nothing-here.test' }, ...h]);
    expect(r.best).toMatchObject({ fetcher: 'playwright_stealth', sampleSize: 10, confidence: 1 });
  });

  it('matches nothing for no heuristics or unknown ones', async () => {
    expect(await store.findBestFetcher([])).toEqual({ best: null, scores: [] });
    expect(await store.findBestFetcher([{ type: 'domain', value: 'never-seen.test' }])).toEqual({ best: null, scores: [] });
  });

  it('merges direct_access rows written by other tools into simple_http', async () => {
    const h = [{ type: 'domain', value: 'alias.test' }];
    await store.logAttempts(attempts(4, 'simple_http', true, h));
    const [id] = await store.logAttempts(attempts(1, 'simple_http', true, h));
    // Written around the store (a legacy tool), so the alias reaches the table and the trigger copies it.
    await db.prisma.fetcherAttempt.updateMany({ where: { id: id! }, data: { fetcher: 'direct_access' } });
    const r = await store.findBestFetcher(h);
    expect(r.scores).toHaveLength(1);
    expect(r.best).toMatchObject({ fetcher: 'simple_http', sampleSize: 5 });
  });

  it('agrees with core scoreFetchers on a mixed, aged set', async () => {
    const h = [{ type: 'domain', value: 'mixed.test' }, { type: 'path_depth', value: '7' }];
    const spec: [string, boolean, number, Heuristic[]][] = [];
    for (let i = 0; i < 40; i++) {
      spec.push([['simple_http', 'playwright', 'playwright_stealth'][i % 3]!, i % 4 !== 0, (i * 7) % 100, i % 5 === 0 ? [h[1]!] : h]);
    }
    await store.logAttempts(spec.map(([f, ok, days, hs], i) => ({ ...attempts(1, f, ok, hs, days)[0]!, url: `https://mixed.test/${i}` })));
    const now = clock.now();
    const expected = scoreFetchers(spec.map(([fetcher, success, days]) => ({ fetcher, success, attemptedAt: ago(days) })), { now });
    const actual = await store.findBestFetcher(h, { now });
    expect(actual.scores.map((s) => s.fetcher)).toEqual(expected.scores.map((s) => s.fetcher));
    actual.scores.forEach((s, i) => {
      const e = expected.scores[i]!;
      expect(s.sampleSize).toBe(e.sampleSize);
      expect(s.decayedSuccesses).toBeCloseTo(e.decayedSuccesses, 6);
      expect(s.confidence).toBeCloseTo(e.confidence, 6);
      expect(s.eligible).toBe(e.eligible);
    });
  });

  it('seed priors: unknown-domain.com/document.pdf → simple_http above 0.6', async () => {
    const r = await store.findBestFetcher([
      { type: 'domain', value: 'unknown-domain.com' },
      { type: 'suffix', value: '.mp4' },
    ]);
    expect(r.best?.fetcher).toBe('simple_http');
    expect(r.best!.confidence).toBeGreaterThan(0.6);
    const cdn = await store.findBestFetcher([{ type: 'contains_cdn', value: 'true' }]);
    expect(cdn.best).toMatchObject({ fetcher: 'simple_http', sampleSize: 10 });
  });
});

describe('logging', () => {
  it('writes a batch in input order with every heuristic and its copied attempt fields', async () => {
    const link = await db.prisma.link.create({ data: { url: 'https://log.test/a', initialUrl: 'https://log.test/a', domain: 'log.test' } });
    const ids = await store.logAttempts([
      { linkId: link.id, url: 'https://log.test/a', fetcher: 'direct_access', success: false, isBanned: true, errorType: 'blocked_403', httpStatus: 403, responseHeaders: { server: 'cloudflare' }, durationMs: 12.4, heuristics: [{ type: 'domain', value: 'log.test' }, { type: 'status_403', value: 'true' }] },
      { linkId: link.id, url: 'https://log.test/a', fetcher: 'playwright', success: true, heuristics: [{ type: 'domain', value: 'log.test', importanceScore: 0.5 }] },
      { url: 'seed:none', fetcher: 'playwright', success: true, heuristics: [] },
    ]);
    expect(ids).toHaveLength(3);
    expect(ids[0]! < ids[1]! && ids[1]! < ids[2]!).toBe(true);
    const rows = await db.prisma.fetcherAttempt.findMany({ where: { id: { in: ids } }, include: { heuristics: true }, orderBy: { id: 'asc' } });
    expect(rows.map((r) => r.fetcher)).toEqual(['simple_http', 'playwright', 'playwright']);
    expect(rows[0]).toMatchObject({ isBanned: true, errorType: 'blocked_403', httpStatus: 403, durationMs: 12, responseHeaders: { server: 'cloudflare' }, linkId: link.id });
    expect(rows[0]!.attemptedAt.getTime()).toBe(clock.now().getTime());
    expect(rows[0]!.heuristics.map((h) => [h.heuristicType, h.fetcher, h.success])).toEqual([
      ['domain', 'simple_http', false],
      ['status_403', 'simple_http', false],
    ]);
    expect(rows[1]!.heuristics[0]).toMatchObject({ importanceScore: 0.5, success: true });
    expect(rows[2]!.heuristics).toHaveLength(0);
    expect(await store.logAttempts([])).toEqual([]);
  });

  it('keeps an error message bounded and with any proxy credentials in it masked', async () => {
    const ids = await store.logAttempts([
      { url: 'https://msg.test/a', fetcher: 'simple_http', success: false, errorType: 'network_error', errorMessage: 'UND_ERR_SOCKET: other side closed (17 of 5000 body bytes received)', heuristics: [] },
      { url: 'https://msg.test/b', fetcher: 'simple_http', success: false, errorType: 'proxy_unavailable', errorMessage: `cannot reach http://user:s3cret@10.0.0.1:8080 ${'x'.repeat(2_000)}`, heuristics: [] },
      { url: 'https://msg.test/c', fetcher: 'simple_http', success: true, heuristics: [] },
    ]);
    const rows = await db.prisma.fetcherAttempt.findMany({ where: { id: { in: ids } }, orderBy: { id: 'asc' } });
    expect(rows[0]!.errorMessage).toBe('UND_ERR_SOCKET: other side closed (17 of 5000 body bytes received)');
    expect(rows[1]!.errorMessage).toMatch(/^cannot reach http:\/\/\*\*\*@10\.0\.0\.1:8080 x+$/);
    expect(rows[1]!.errorMessage).toHaveLength(500);
    expect(rows[2]!.errorMessage).toBeNull();
  });

  it('rejects bad input with a typed error, and a bad row never costs the rest of its batch', async () => {
    const before = await db.prisma.fetcherAttempt.count();
    const good = attempts(1, 'playwright', true, [{ type: 'domain', value: 'bad.test' }])[0]!;
    await expect(store.logAttempt({ ...good, url: '' })).rejects.toMatchObject({ code: 'invalid_attempt' });
    await expect(store.logAttempt({ ...good, heuristics: [{ type: '', value: 'x' }] })).rejects.toMatchObject({ code: 'invalid_attempt' });
    await expect(store.logAttempt({ ...good, linkId: '00000000-0000-0000-0000-000000000000' })).rejects.toMatchObject({ code: 'db_constraint' });
    expect(await db.prisma.fetcherAttempt.count()).toBe(before);

    const err = await store
      .logAttempts([good, { ...good, linkId: '00000000-0000-0000-0000-000000000000' }, { ...good, url: '' }, good])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AttemptBatchError);
    const batch = err as AttemptBatchError;
    expect(batch.code).toBe('attempt_batch_partial');
    expect(batch.failures.map((f) => [f.index, f.error.code])).toEqual([[1, 'db_constraint'], [2, 'invalid_attempt']]);
    expect(batch.ids.map((id) => id === null)).toEqual([false, true, true, false]);
    expect(await db.prisma.fetcherAttempt.count()).toBe(before + 2);
    expect(await db.prisma.attemptHeuristic.count({ where: { attemptId: { in: batch.ids.filter((id): id is bigint => id !== null) } } })).toBe(2);
  });
});

describe('ban rate, stats, velocity and retention', () => {
  it('computes the domain ban rate over the window', async () => {
    const h = [{ type: 'domain', value: 'ban.test' }];
    await store.logAttempts([
      ...attempts(3, 'simple_http', false, h, 0, { isBanned: true }),
      ...attempts(1, 'simple_http', true, h, 0),
      ...attempts(4, 'simple_http', false, h, 10, { isBanned: true }),
    ]);
    expect(await store.getDomainBanRate('ban.test', 7)).toBeCloseTo(0.75, 10);
    expect(await store.getDomainBanRate('ban.test', 30)).toBeCloseTo(7 / 8, 10);
    expect(await store.getDomainBanRate('nobody.test', 7)).toBe(0);
  });

  it('reports stats by fetcher and by domain, without priors', async () => {
    const byFetcher = await store.statsByFetcher({ sinceDays: 7 });
    const names = byFetcher.map((s) => s.key);
    expect(names).toContain('simple_http');
    expect(names).not.toContain('direct_access');
    const byDomain = await store.statsByDomain({ sinceDays: 7, limit: 500 });
    const ban = byDomain.find((s) => s.key === 'ban.test');
    expect(ban).toMatchObject({ attempts: 4, successes: 1, banned: 3, banRate: 0.75, successRate: 0.25 });
    const total = byFetcher.reduce((n, s) => n + s.attempts, 0);
    const recent = await db.prisma.fetcherAttempt.count({ where: { attemptedAt: { gte: ago(7) }, selectionSource: { not: 'prior' } } });
    const unlabeled = await db.prisma.fetcherAttempt.count({ where: { attemptedAt: { gte: ago(7) }, selectionSource: null } });
    expect(total).toBe(recent + unlabeled);
  });

  it('measures learning velocity per hour', async () => {
    const vdb = await createTestDatabase('db_velocity');
    try {
      const vclock = new ManualClock(Date.parse('2026-03-01T12:30:00Z'));
      const v = new AttemptStore({ prisma: vdb.prisma, clock: vclock });
      const h = [{ type: 'domain', value: 'v.test' }];
      const at = (iso: string, source: string) => ({ url: 'https://v.test/', fetcher: 'simple_http', success: true, attemptedAt: new Date(iso), selectionSource: source, heuristics: h });
      await v.logAttempts([at('2026-03-01T10:05:00Z', 'probe'), at('2026-03-01T10:50:00Z', 'probe'), at('2026-03-01T11:10:00Z', 'learned'), at('2026-03-01T11:20:00Z', 'domain_memory'), at('2026-03-01T11:40:00Z', 'probe')]);
      const buckets = await v.learningVelocity({ sinceHours: 5, bucket: 'hour' });
      expect(buckets.map((b) => [b.bucketStart.toISOString(), b.attempts, b.learned, b.probes])).toEqual([
        ['2026-03-01T10:00:00.000Z', 2, 0, 2],
        ['2026-03-01T11:00:00.000Z', 3, 2, 1],
      ]);
      expect(buckets[1]?.learnedShare).toBeCloseTo(2 / 3, 10);
    } finally {
      await vdb.drop();
    }
  });

  it('prunes attempts older than 90 days with their heuristics, and cascades link deletes', async () => {
    const h = [{ type: 'domain', value: 'old.test' }, { type: 'suffix', value: '.old' }];
    await store.logAttempts([...attempts(3, 'simple_http', true, h, 91), ...attempts(2, 'simple_http', true, h, 89)]);
    const cutoff = ago(90);
    const expectedAttempts = await db.prisma.fetcherAttempt.count({ where: { attemptedAt: { lt: cutoff } } });
    const expectedHeuristics = await db.prisma.attemptHeuristic.count({ where: { attempt: { attemptedAt: { lt: cutoff } } } });
    expect(expectedAttempts).toBeGreaterThanOrEqual(3);
    const result = await store.pruneAttempts({ batchSize: 2 });
    expect(result).toEqual({ attempts: expectedAttempts, heuristics: expectedHeuristics });
    expect((await store.findBestFetcher(h)).scores[0]?.sampleSize).toBe(2);
    expect(await db.prisma.attemptHeuristic.count({ where: { attempt: { attemptedAt: { lt: ago(90) } } } })).toBe(0);

    const link = await db.prisma.link.create({ data: { url: 'https://cascade.test/', initialUrl: 'https://cascade.test/', domain: 'cascade.test' } });
    const [id] = await store.logAttempts(attempts(1, 'simple_http', true, [{ type: 'domain', value: 'cascade.test' }], 0, { linkId: link.id }));
    await db.prisma.fetchedContent.create({ data: { linkId: link.id, body: new Uint8Array([1]), httpStatus: 200, finalUrl: 'https://cascade.test/', sha256: 'x', sizeBytes: 1, fetcher: 'simple_http' } });
    await db.prisma.link.delete({ where: { id: link.id } });
    expect(await db.prisma.fetcherAttempt.count({ where: { id: id! } })).toBe(0);
    expect(await db.prisma.attemptHeuristic.count({ where: { attemptId: id! } })).toBe(0);
    expect(await db.prisma.fetchedContent.count({ where: { linkId: link.id } })).toBe(0);
  });
});
