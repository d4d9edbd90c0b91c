import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '@crawler/core';
import { createTestDatabase, type TestDatabase } from '../testing.js';
import { ContentStore } from '../content/content-store.js';
import { OutcomeStore, type OutcomeHook } from './outcome-store.js';
import type { AttemptInput } from '../attempts/types.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('db_outcome');
});
afterAll(async () => {
  await db?.drop();
});

const clock = new ManualClock(Date.parse('2026-03-01T00:00:00Z'));
const html = new TextEncoder().encode('<html><body>done</body></html>');

async function link(url: string, data: Record<string, unknown> = {}) {
  return db.prisma.link.create({ data: { url, initialUrl: url, domain: new URL(url).hostname, status: 'fetching', ...data } });
}

function attempt(linkId: string, url: string, over: Partial<AttemptInput> = {}): AttemptInput {
  return {
    linkId, url, fetcher: 'simple_http', success: true, httpStatus: 200, attemptedAt: clock.now(), selectionSource: 'probe',
    heuristics: [{ type: 'domain', value: new URL(url).hostname }, { type: 'has_content', value: 'true' }], ...over,
  };
}

describe('OutcomeStore.apply', () => {
  it('writes the attempts, their heuristics, the link done and the page in one go', async () => {
    const l = await link('https://o.test/a', { riskLevel: 3, attemptCount: 2, pausedUntil: new Date('2030-01-01T00:00:00Z'), lastErrorType: 'timeout', lastError: 'slow' });
    const store = new OutcomeStore({ prisma: db.prisma, clock });
    const applied = await store.apply({
      linkId: l.id,
      attempts: [attempt(l.id, l.url, { success: false, errorType: 'timeout', httpStatus: null }), attempt(l.id, l.url, { selectionSource: 'retry' })],
      link: { status: 'done', riskLevel: 0, pausedUntil: null, fetcher: 'simple_http', lastErrorType: null, lastError: null },
      page: { linkId: l.id, body: html, contentType: 'text/html', httpStatus: 200, finalUrl: l.url, fetcher: 'direct_access' },
    });
    expect(applied).toMatchObject({ linkUpdated: true, status: 'done' });
    expect(applied.attemptIds).toHaveLength(2);
    expect(await db.prisma.link.findUniqueOrThrow({ where: { id: l.id } })).toMatchObject({
      status: 'done', riskLevel: 0, pausedUntil: null, fetcher: 'simple_http', lastErrorType: null, lastError: null, attemptCount: 4, lastAttemptAt: clock.now(),
    });
    const attempts = await db.prisma.fetcherAttempt.findMany({ where: { linkId: l.id }, orderBy: { id: 'asc' }, include: { heuristics: true } });
    expect(attempts.map((a) => [a.success, a.selectionSource, a.heuristics.length])).toEqual([[false, 'probe', 2], [true, 'retry', 2]]);
    expect(attempts.map((a) => a.id)).toEqual(applied.attemptIds);
    const page = await new ContentStore({ prisma: db.prisma }).get(applied.contentId!);
    expect(page).toMatchObject({ linkId: l.id, fetcher: 'simple_http', httpStatus: 200 });
    expect(Buffer.from(page!.body).toString()).toBe('<html><body>done</body></html>');
  });

  it('sets only the columns a change names, null clears one, and moves the generation', async () => {
    const l = await link('https://o.test/b', { fetcher: 'playwright', selectionSource: 'learned', riskLevel: 1 });
    const until = new Date('2026-03-01T00:10:00Z');
    await new OutcomeStore({ prisma: db.prisma, clock }).apply({
      linkId: l.id,
      attempts: [attempt(l.id, l.url, { success: false, isBanned: true, errorType: 'blocked_403', httpStatus: 403 })],
      link: { status: 'paused', pausedUntil: until, riskLevel: 2, lastErrorType: 'blocked_403', lastError: null, generation: 1 },
    });
    expect(await db.prisma.link.findUniqueOrThrow({ where: { id: l.id } })).toMatchObject({
      status: 'paused', pausedUntil: until, riskLevel: 2, fetcher: 'playwright', selectionSource: 'learned', lastErrorType: 'blocked_403', lastError: null, generation: 1, attemptCount: 1,
    });
  });

  it('a finished link keeps its state and page; the late attempts are still logged and counted', async () => {
    const l = await link('https://o.test/c', { status: 'done', attemptCount: 1 });
    const applied = await new OutcomeStore({ prisma: db.prisma, clock }).apply({
      linkId: l.id,
      attempts: [attempt(l.id, l.url)],
      link: { status: 'failed', lastErrorType: 'x', lastError: 'x' },
      page: { linkId: l.id, body: html, httpStatus: 200, finalUrl: l.url, fetcher: 'simple_http' },
    });
    expect(applied).toMatchObject({ linkUpdated: false, status: 'done', contentId: null });
    expect(await db.prisma.link.findUniqueOrThrow({ where: { id: l.id } })).toMatchObject({ status: 'done', lastErrorType: null, attemptCount: 2 });
    expect(await db.prisma.fetchedContent.count({ where: { linkId: l.id } })).toBe(0);
    expect(await db.prisma.fetcherAttempt.count({ where: { linkId: l.id } })).toBe(1);
  });

  it('a link that is gone: nothing stored, nothing logged, the store says so', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    const applied = await new OutcomeStore({ prisma: db.prisma, clock }).apply({ linkId: missing, attempts: [], link: { status: 'done' }, page: { linkId: missing, body: html, httpStatus: 200, finalUrl: 'x', fetcher: 'simple_http' } });
    expect(applied).toMatchObject({ linkUpdated: false, status: null, contentId: null });
  });

  it('hooks add rows in the same transaction, and a failing hook takes the whole outcome back', async () => {
    await db.prisma.$executeRawUnsafe('CREATE TABLE IF NOT EXISTS test_outbox (link uuid, status text)');
    const outbox: OutcomeHook = async (tx, write, applied) => {
      if (applied.linkUpdated && (applied.status === 'done' || applied.status === 'failed')) {
        await tx.query('INSERT INTO test_outbox (link, status) VALUES ($1::uuid, $2)', [write.linkId, applied.status]);
      }
    };
    const store = new OutcomeStore({ prisma: db.prisma, clock, hooks: [outbox] });
    const ok = await link('https://o.test/d');
    await store.apply({ linkId: ok.id, attempts: [attempt(ok.id, ok.url)], link: { status: 'done' }, page: { linkId: ok.id, body: html, httpStatus: 200, finalUrl: ok.url, fetcher: 'simple_http' } });
    expect(await db.prisma.$queryRawUnsafe('SELECT status FROM test_outbox WHERE link = $1::uuid', ok.id)).toEqual([{ status: 'done' }]);

    const bad = await link('https://o.test/e');
    const boom: OutcomeHook = async () => {
      throw new Error('hook failed');
    };
    await expect(
      store.apply({ linkId: bad.id, attempts: [attempt(bad.id, bad.url)], link: { status: 'done' }, page: { linkId: bad.id, body: html, httpStatus: 200, finalUrl: bad.url, fetcher: 'simple_http' }, hooks: [boom] }),
    ).rejects.toThrow(/hook failed/);
    expect(await db.prisma.link.findUniqueOrThrow({ where: { id: bad.id } })).toMatchObject({ status: 'fetching', attemptCount: 0 });
    expect(await db.prisma.fetcherAttempt.count({ where: { linkId: bad.id } })).toBe(0);
    expect(await db.prisma.fetchedContent.count({ where: { linkId: bad.id } })).toBe(0);
    expect(await db.prisma.$queryRawUnsafe('SELECT status FROM test_outbox WHERE link = $1::uuid', bad.id)).toEqual([]);
  });
});
