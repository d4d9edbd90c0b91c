import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '@crawler/core';
import { createPrismaClient } from '../client.js';
import { createTestDatabase, type TestDatabase } from '../testing.js';
import { OutcomeStore } from '../outcome/outcome-store.js';
import { ScheduleStore } from './schedule-store.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('db_schedule');
});
afterAll(async () => {
  await db?.drop();
});

const clock = new ManualClock(Date.parse('2026-03-01T00:00:00Z'));

async function link(url: string, data: Record<string, unknown> = {}) {
  return db.prisma.link.create({ data: { url, initialUrl: url, domain: new URL(url).hostname, status: 'fetching', ...data } });
}

/** A visit ending as the fetch worker ends it: the outcome statement with a page. */
async function finishVisit(linkId: string, url: string, body: string, at: Date) {
  await new OutcomeStore({ prisma: db.prisma, clock }).apply({
    linkId,
    attempts: [{ linkId, url, fetcher: 'simple_http', success: true, httpStatus: 200, attemptedAt: at, selectionSource: 'probe', heuristics: [] }],
    link: { status: 'done', fetcher: 'simple_http' },
    page: { linkId, body: new TextEncoder().encode(body), contentType: 'text/html', httpStatus: 200, finalUrl: url, fetcher: 'simple_http' },
  });
}

const row = (id: string) => db.prisma.link.findUniqueOrThrow({ where: { id } });

describe('revisit schedule trigger', () => {
  it('schedules a fixed policy from the visit that ended, and a new visit clears it', async () => {
    const l = await link('https://s.test/fixed');
    const store = new ScheduleStore({ prisma: db.prisma, clock });
    await store.setPolicy([l.id], { mode: 'fixed', intervalSeconds: 3_600 });
    expect((await row(l.id)).nextFetchAt).toBeNull();
    const at = new Date('2026-03-01T00:00:00Z');
    await finishVisit(l.id, l.url, 'v1', at);
    expect((await row(l.id)).nextFetchAt?.toISOString()).toBe('2026-03-01T01:00:00.000Z');
    // Not due yet: nothing claimed. Due: claimed once, with a new generation and a fresh attempt budget.
    expect(await store.claimDue(10, new Date('2026-03-01T00:59:59Z'))).toEqual([]);
    const claimed = await store.claimDue(10, new Date('2026-03-01T01:00:00Z'));
    expect(claimed).toEqual([{ linkId: l.id, url: l.url, generation: 1 }]);
    const r = await row(l.id);
    expect(r).toMatchObject({ status: 'queued', generation: 1, attemptCount: 0, nextFetchAt: null });
    expect(await store.claimDue(10, new Date('2026-03-02T00:00:00Z'))).toEqual([]);
    // The stored page stays.
    expect(await db.prisma.fetchedContent.count({ where: { linkId: l.id } })).toBe(1);
  });

  it('adapts: a changed page comes back sooner, an unchanged one later, within min..max', async () => {
    const store = new ScheduleStore({ prisma: db.prisma, clock });
    const changing = await link('https://s.test/changing');
    const still = await link('https://s.test/still');
    await store.setPolicy([changing.id, still.id], { mode: 'adaptive', intervalSeconds: 1_000, minSeconds: 500, maxSeconds: 1_900 });
    const intervals: Record<string, number[]> = { changing: [], still: [] };
    let at = Date.parse('2026-03-01T00:00:00Z');
    for (let visit = 0; visit < 4; visit++) {
      for (const [name, l] of [['changing', changing], ['still', still]] as const) {
        await finishVisit(l.id, l.url, name === 'changing' ? `v${visit}` : 'same', new Date(at));
        const r = await row(l.id);
        intervals[name]!.push((r.nextFetchAt!.getTime() - at) / 1000);
        // The first visit has nothing to compare with; later ones know.
        expect(r.lastVisitChanged).toBe(visit === 0 ? null : name === 'changing');
      }
      at += 2_000_000;
      const claimed = await store.claimDue(10, new Date(at));
      expect(claimed.map((c) => c.url).sort()).toEqual([changing.url, still.url].sort());
      for (const l of [changing, still]) await db.prisma.link.update({ where: { id: l.id }, data: { status: 'fetching' } });
    }
    // First visit: unknown (×1); then ×0.8 per change down to the minimum, ×1.4 per unchanged visit up to the maximum.
    expect(intervals.changing).toEqual([1_000, 800, 640, 512]);
    expect(intervals.still).toEqual([1_000, 1_400, 1_900, 1_900]);
  });

  it('writing the change flag twice in one visit applies its factor once (a store that sets it itself)', async () => {
    const store = new ScheduleStore({ prisma: db.prisma, clock });
    const l = await link('https://s.test/flag');
    await store.setPolicy([l.id], { mode: 'adaptive', intervalSeconds: 100, minSeconds: 10, maxSeconds: 1_000 });
    await db.prisma.link.update({ where: { id: l.id }, data: { status: 'done', lastAttemptAt: new Date('2026-03-01T00:00:00Z') } });
    await db.prisma.link.update({ where: { id: l.id }, data: { lastVisitChanged: false } });
    await db.prisma.link.update({ where: { id: l.id }, data: { lastVisitChanged: false } });
    expect((await row(l.id)).revisitNextS).toBeCloseTo(140);
    await db.prisma.link.update({ where: { id: l.id }, data: { lastVisitChanged: true } });
    expect((await row(l.id)).revisitNextS).toBeCloseTo(80);
    await store.setPolicy([l.id], null);
    expect(await row(l.id)).toMatchObject({ nextFetchAt: null, revisitMode: null });
  });
});

describe('ScheduleStore.refresh', () => {
  it('refreshes stale finished links once, leaves fresh and in-progress ones alone', async () => {
    const store = new ScheduleStore({ prisma: db.prisma, clock });
    clock.set(Date.parse('2026-03-10T12:00:00Z'));
    const old = await link('https://r.test/old', { status: 'done', lastAttemptAt: new Date('2026-03-10T00:00:00Z'), attemptCount: 5, generation: 2, lastErrorType: 'timeout' });
    const recent = await link('https://r.test/recent', { status: 'done', lastAttemptAt: new Date('2026-03-10T11:50:00Z') });
    const failed = await link('https://r.test/failed', { status: 'failed', lastAttemptAt: new Date('2026-03-10T11:00:00Z') });
    const busy = await link('https://r.test/busy', { status: 'fetching' });
    const items = [old, recent, failed, busy].map((l) => ({ linkId: l.id, maxAgeSeconds: 1_800 }));
    const [a, b] = await Promise.all([store.refresh(items), store.refresh(items)]);
    // Two producers asking at once: each stale link starts one new visit.
    const all = [...a.refreshed, ...b.refreshed];
    expect(all.map((r) => r.url).sort()).toEqual([failed.url, old.url]);
    expect(all.find((r) => r.url === old.url)?.generation).toBe(3);
    expect(a.fresh).toContain(recent.id);
    expect(a.busy).toContain(busy.id);
    expect(await row(old.id)).toMatchObject({ status: 'queued', attemptCount: 0, lastErrorType: null });
    // maxAge 0: fetch again now, even when just fetched.
    const zero = await store.refresh([{ linkId: recent.id, maxAgeSeconds: 0 }]);
    expect(zero.refreshed.map((r) => r.linkId)).toEqual([recent.id]);
  });
});

describe('two schedulers racing', () => {
  it('never claim one link twice for one due time', async () => {
    const n = 2_000;
    const due = new Date('2026-04-01T00:00:00Z');
    await db.prisma.$executeRawUnsafe(
      `INSERT INTO links (url, initial_url, domain, status, revisit_mode, revisit_interval_s, last_attempt_at)
       SELECT 'https://race.test/' || i, 'https://race.test/' || i, 'race.test', 'done', 'fixed', 60, $1::timestamptz - interval '1 minute'
       FROM generate_series(1, ${n}) i`,
      due,
    );
    // The insert ran the trigger: every link is due at `due`.
    expect(await db.prisma.link.count({ where: { nextFetchAt: { lte: due } } })).toBe(n);
    const other = createPrismaClient(db.url);
    try {
      const stores = [new ScheduleStore({ prisma: db.prisma }), new ScheduleStore({ prisma: other })];
      // Both connected and their statement prepared before the race (a due time that claims nothing): on a loaded
      // machine the second client's first connection took longer than the first needed to claim every link.
      for (const s of stores) expect(await s.claimDue(1, new Date('2000-01-01T00:00:00Z'))).toEqual([]);
      const claimed: string[][] = [[], []];
      await Promise.all(
        stores.map(async (s, i) => {
          for (;;) {
            const batch = await s.claimDue(97, due);
            if (batch.length === 0) return;
            claimed[i]!.push(...batch.map((b) => b.linkId));
          }
        }),
      );
      const every = [...claimed[0]!, ...claimed[1]!];
      expect(new Set(every).size).toBe(every.length);
      expect(every.length).toBe(n);
      // Both took part (the race was real).
      expect(claimed[0]!.length).toBeGreaterThan(0);
      expect(claimed[1]!.length).toBeGreaterThan(0);
    } finally {
      await other.$disconnect();
    }
  });
});

describe('ScheduleStore.pullForward (sitemap lastmod)', () => {
  it('makes a scheduled link due now, which the trigger keeps and the scheduler claims; its interval is untouched', async () => {
    const store = new ScheduleStore({ prisma: db.prisma, clock });
    const crawl = await db.prisma.crawl.create({ data: { seeds: ['https://p.test/'], scope: 'same-site', sitemaps: true, revisitMode: 'fixed', revisitIntervalS: 3_600 } });
    const a = await link('https://p.test/a', { crawlId: crawl.id });
    const b = await link('https://p.test/b', { crawlId: crawl.id });
    const busy = await link('https://p.test/busy', { crawlId: crawl.id });
    await store.setPolicy([a.id, b.id, busy.id], { mode: 'fixed', intervalSeconds: 3_600 });
    const at = new Date('2026-03-01T00:00:00Z');
    await finishVisit(a.id, a.url, 'a1', at);
    await finishVisit(b.id, b.url, 'b1', at);

    expect(await store.sitemapCrawls()).toEqual([{ id: crawl.id, seeds: ['https://p.test/'], trackingParams: null }]);
    const visits = await store.scheduledVisits(crawl.id, [a.url, b.url, busy.url, 'https://p.test/unknown']);
    expect(visits.map((v) => v.url).sort()).toEqual([a.url, b.url]);
    expect(visits.find((v) => v.linkId === a.id)).toMatchObject({ lastAttemptAt: at, nextFetchAt: new Date('2026-03-01T01:00:00Z') });

    const now = new Date('2026-03-01T00:10:00Z');
    expect(await store.pullForward([a.id, busy.id], now)).toEqual([a.id]);
    expect((await row(a.id)).nextFetchAt).toEqual(now);
    expect((await row(b.id)).nextFetchAt).toEqual(new Date('2026-03-01T01:00:00Z'));
    // Already due: not moved again (later), whoever asks.
    expect(await store.pullForward([a.id], new Date('2026-03-01T00:20:00Z'))).toEqual([]);
    expect((await store.claimDue(10, now)).map((v) => v.linkId)).toEqual([a.id]);
    // The visit it started ends: back on the policy's hour from then.
    await finishVisit(a.id, a.url, 'a2', new Date('2026-03-01T00:11:00Z'));
    expect((await row(a.id)).nextFetchAt).toEqual(new Date('2026-03-01T01:11:00Z'));
  });
});
