import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { PrismaLinkRepo } from './link-repo.js';

let db: TestDatabase;
let links: PrismaLinkRepo;

beforeAll(async () => {
  db = await createTestDatabase('pipeline_link_repo');
  links = new PrismaLinkRepo(db.prisma);
});

afterAll(async () => {
  await db.drop();
});

async function newLink(url: string) {
  const [row] = await links.upsertMany([{ url, initialUrl: url, domain: new URL(url).hostname }]);
  return row!;
}

describe('PrismaLinkRepo on real Postgres (the hot path in plain SQL)', () => {
  it('reads a link with the same fields and types as the Prisma client does', async () => {
    const created = await newLink('https://repo.example/a');
    await links.update(created.id, { pausedUntil: new Date('2030-01-02T03:04:05.678Z'), riskLevel: 2, lastErrorType: 'timeout' });
    const raw = await links.get(created.id);
    const viaPrisma = await db.prisma.link.findUniqueOrThrow({ where: { id: created.id } });
    expect(raw).toEqual({
      id: viaPrisma.id, url: viaPrisma.url, initialUrl: viaPrisma.initialUrl, domain: viaPrisma.domain, status: viaPrisma.status,
      pausedUntil: viaPrisma.pausedUntil, riskLevel: 2, attemptCount: 0, lastAttemptAt: null, learningModeEnabled: null,
      fetcher: null, selectionSource: null, lastErrorType: 'timeout', lastError: null, crawlId: viaPrisma.crawlId, depth: viaPrisma.depth, generation: viaPrisma.generation,
    });
    expect(raw!.pausedUntil).toEqual(new Date('2030-01-02T03:04:05.678Z'));
    expect(await links.get('00000000-0000-4000-8000-000000000000')).toBeNull();
  });

  it('adds attemptsMade to attempt_count in the same write as the other fields, and leaves undefined fields alone', async () => {
    const link = await newLink('https://repo.example/b');
    const at = new Date('2026-11-22T10:00:00.000Z');
    await links.update(link.id, { status: 'fetching', fetcher: 'simple_http', selectionSource: 'learned' });
    await links.update(link.id, { status: 'done', attemptsMade: 2, lastAttemptAt: at, lastError: null });
    await links.countAttempts(link.id, 1, new Date('2026-11-22T10:00:01.000Z'));
    const row = await links.get(link.id);
    expect(row).toMatchObject({ status: 'done', attemptCount: 3, fetcher: 'simple_http', selectionSource: 'learned', lastAttemptAt: new Date('2026-11-22T10:00:01.000Z') });
  });

  it('updateUnlessFinished leaves done and failed links alone', async () => {
    const link = await newLink('https://repo.example/c');
    expect(await links.updateUnlessFinished(link.id, { status: 'routing' })).toBe(true);
    await links.update(link.id, { status: 'done' });
    expect(await links.updateUnlessFinished(link.id, { status: 'failed', lastError: 'late', attemptsMade: 1 })).toBe(false);
    expect(await links.get(link.id)).toMatchObject({ status: 'done', lastError: null, attemptCount: 0 });
  });

  it('upsertMany inserts the new links, returns the existing ones untouched, in input order, each with created', async () => {
    const old = await newLink('https://repo.example/up/old');
    await links.update(old.id, { status: 'done' });
    const rows = await links.upsertMany([
      { url: 'https://repo.example/up/new', initialUrl: 'https://repo.example/up/new#x', domain: 'repo.example', learningModeEnabled: false },
      { url: 'https://repo.example/up/old', initialUrl: 'https://repo.example/up/old', domain: 'repo.example' },
      { url: 'https://repo.example/up/new', initialUrl: 'https://repo.example/up/new', domain: 'repo.example' },
    ]);
    expect(rows.map((r) => [r.url, r.created, r.status])).toEqual([
      ['https://repo.example/up/new', true, 'queued'],
      ['https://repo.example/up/old', false, 'done'],
      ['https://repo.example/up/new', true, 'queued'],
    ]);
    expect(rows[0]).toMatchObject({ initialUrl: 'https://repo.example/up/new#x', learningModeEnabled: false, attemptCount: 0 });
    expect(rows[1]!.id).toBe(old.id);
    expect(await db.prisma.link.count({ where: { url: { startsWith: 'https://repo.example/up/' } } })).toBe(2);
  });

  it('readRoutable returns an unfinished, unpaused link of the generation without writing it, and refuses paused, finished, stale and missing ones', async () => {
    const now = new Date('2026-11-22T12:00:00.000Z');
    const fresh = await newLink('https://repo.example/d');
    expect(await links.readRoutable(fresh.id, now, 0)).toMatchObject({ id: fresh.id, status: 'queued' });
    // A read: the router's only write is its decision.
    expect(await links.get(fresh.id)).toMatchObject({ status: 'queued' });

    const paused = await newLink('https://repo.example/e');
    await links.update(paused.id, { status: 'paused', pausedUntil: new Date(now.getTime() + 60_000) });
    expect(await links.readRoutable(paused.id, now, 0)).toBeNull();
    expect(await links.get(paused.id)).toMatchObject({ status: 'paused' });
    // Once its pause is over (by the caller's clock), it is routable.
    expect(await links.readRoutable(paused.id, new Date(now.getTime() + 60_000), 0)).toMatchObject({ id: paused.id, status: 'paused' });

    const done = await newLink('https://repo.example/f');
    await links.update(done.id, { status: 'done' });
    expect(await links.readRoutable(done.id, now, 0)).toBeNull();
    expect(await links.readRoutable('00000000-0000-4000-8000-000000000000', now, 0)).toBeNull();

    // A job of an older generation than the link's is stale: the reconciler's newer job owns the link.
    const moved = await newLink('https://repo.example/g');
    await db.prisma.link.update({ where: { id: moved.id }, data: { generation: 2 } });
    expect(await links.readRoutable(moved.id, now, 1)).toBeNull();
    expect(await links.readRoutable(moved.id, now, 2)).toMatchObject({ id: moved.id, generation: 2 });
  });
});
