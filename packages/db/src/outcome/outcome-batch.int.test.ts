import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, type Logger } from '@crawler/core';
import { createTestDatabase, type TestDatabase } from '../testing.js';
import { createPrismaClient } from '../client.js';
import { OutcomeStore, type AppliedOutcome, type OutcomeHook, type OutcomeWrite } from './outcome-store.js';
import { OutcomeBatcher } from './outcome-batcher.js';
import type { AttemptInput } from '../attempts/types.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('db_outcome_batch');
});
afterAll(async () => {
  await db?.drop();
});

const clock = new ManualClock(Date.parse('2026-03-01T00:00:00Z'));
const body = (s: string) => new TextEncoder().encode(`<html><body>${s}</body></html>`);

async function link(url: string, data: Record<string, unknown> = {}) {
  return db.prisma.link.create({ data: { url, initialUrl: url, domain: new URL(url).hostname, status: 'fetching', ...data } });
}

function attempt(linkId: string, url: string, over: Partial<AttemptInput> = {}): AttemptInput {
  return {
    linkId, url, fetcher: 'simple_http', success: true, httpStatus: 200, attemptedAt: clock.now(), selectionSource: 'learned',
    heuristics: [{ type: 'domain', value: new URL(url).hostname }, { type: 'has_content', value: 'true' }], ...over,
  };
}

const done = { status: 'done', riskLevel: 0, pausedUntil: null, fetcher: 'simple_http', lastErrorType: null, lastError: null } as const;
/** A page whose body is `s`; `text` stands for its text fingerprint (null: none, as a non-HTML body has). */
const page = (linkId: string, url: string, s: string, text: string | null = s) => ({
  linkId, body: body(s), contentType: 'text/html', httpStatus: 200, finalUrl: url, fetcher: 'simple_http', headers: { etag: `"${s}"` }, textSha256: text === null ? null : `text:${text}`,
});

/**
 * Every kind of outcome the fetch worker writes, on links named under `site`: a first page, a revisit with a changed
 * page (version 2 and link.changed), one with the same body (identical), a 304 (not_modified), a failure, a pause with
 * a retry's two attempts, a late duplicate on a finished link, a link that is gone, a revisit whose bytes differ but
 * whose text does not (version 2, no change: link.unchanged), and one whose new version has no text fingerprint (a
 * change by its sha256).
 */
async function scenario(store: OutcomeStore, site: string): Promise<{ ids: string[]; writes: OutcomeWrite[] }> {
  const u = (p: string) => `https://${site}/${p}`;
  const first = await link(u('first'));
  const changed = await link(u('changed'));
  const same = await link(u('same'));
  const nm = await link(u('nm'));
  const failed = await link(u('failed'));
  const paused = await link(u('paused'), { riskLevel: 1 });
  const finished = await link(u('finished'), { status: 'done', attemptCount: 1 });
  const markup = await link(u('markup'));
  const untexted = await link(u('untexted'));
  // A first version for the revisits, written as a first visit is.
  for (const l of [changed, same, nm, markup, untexted]) {
    await store.apply({ linkId: l.id, attempts: [attempt(l.id, l.url)], link: done, page: page(l.id, l.url, 'v1') });
    await db.prisma.link.update({ where: { id: l.id }, data: { status: 'fetching' } });
  }
  const gone = '00000000-0000-4000-8000-00000000000' + (site.length % 10);
  const writes: OutcomeWrite[] = [
    { linkId: first.id, attempts: [attempt(first.id, first.url, { selectionSource: 'probe' })], link: done, page: page(first.id, first.url, 'first') },
    { linkId: changed.id, attempts: [attempt(changed.id, changed.url)], link: done, page: page(changed.id, changed.url, 'v2') },
    { linkId: same.id, attempts: [attempt(same.id, same.url)], link: done, page: page(same.id, same.url, 'v1') },
    { linkId: nm.id, attempts: [attempt(nm.id, nm.url, { httpStatus: 304 })], link: done, notModified: { fetcher: 'simple_http', httpStatus: 304, finalUrl: nm.url, headers: { etag: '"v1"', 'set-cookie': 'x=1' } } },
    { linkId: failed.id, attempts: [attempt(failed.id, failed.url, { success: false, httpStatus: 404, errorType: 'not_found' })], link: { status: 'failed', lastErrorType: 'not_found', lastError: 'gone' } },
    {
      linkId: paused.id,
      attempts: [attempt(paused.id, paused.url, { success: false, isBanned: true, errorType: 'blocked_403', httpStatus: 403 }), attempt(paused.id, paused.url, { success: false, errorType: 'rate_limited', httpStatus: 429, attemptedAt: new Date(clock.now().getTime() + 1000) })],
      link: { status: 'paused', pausedUntil: new Date('2026-03-01T01:00:00Z'), riskLevel: 2, lastErrorType: 'rate_limited', lastError: 'slow down', generation: 1 },
    },
    { linkId: finished.id, attempts: [attempt(finished.id, finished.url)], link: { status: 'failed', lastErrorType: 'x' }, page: page(finished.id, finished.url, 'late') },
    { linkId: gone, attempts: [], link: done, page: page(gone, u('gone'), 'gone') },
    { linkId: markup.id, attempts: [attempt(markup.id, markup.url)], link: done, page: page(markup.id, markup.url, 'v1<meta name="csrf-token" content="b">', 'v1') },
    { linkId: untexted.id, attempts: [attempt(untexted.id, untexted.url)], link: done, page: page(untexted.id, untexted.url, 'v1 as bytes', null) },
  ];
  return { ids: [first, changed, same, nm, failed, paused, finished, markup, untexted].map((l) => l.id), writes };
}

/** What a set of links looks like in every table an outcome writes, without ids and without the site's name. */
async function stateOf(ids: string[]) {
  const out = [];
  for (const id of ids) {
    const l = await db.prisma.link.findUniqueOrThrow({ where: { id } });
    const attempts = await db.prisma.fetcherAttempt.findMany({ where: { linkId: id }, orderBy: { id: 'asc' }, include: { heuristics: { orderBy: { heuristicType: 'asc' } } } });
    const versions = await db.prisma.$queryRawUnsafe<unknown[]>('SELECT version, sha256, text_sha256, http_status, fetcher, response_headers FROM fetched_content WHERE link = $1::uuid ORDER BY version', id);
    const visits = await db.prisma.$queryRawUnsafe<unknown[]>('SELECT v.kind, c.version, v.fetcher, v.http_status, v.response_headers FROM page_visits v LEFT JOIN fetched_content c ON c.id = v.content WHERE v.link = $1::uuid ORDER BY v.id', id);
    const events = await db.prisma.$queryRawUnsafe<unknown[]>('SELECT type, status, fetcher, version, old_sha256, new_sha256 FROM link_events WHERE link = $1::uuid ORDER BY seq', id);
    out.push({
      link: { status: l.status, attemptCount: l.attemptCount, lastAttemptAt: l.lastAttemptAt, riskLevel: l.riskLevel, pausedUntil: l.pausedUntil, fetcher: l.fetcher, lastErrorType: l.lastErrorType, lastError: l.lastError, generation: l.generation, lastVisitChanged: l.lastVisitChanged, selectionSource: l.selectionSource },
      attempts: attempts.map((a) => ({ success: a.success, errorType: a.errorType, httpStatus: a.httpStatus, isBanned: a.isBanned, source: a.selectionSource, at: a.attemptedAt, heuristics: a.heuristics.map((h) => [h.heuristicType, h.heuristicValue.replace(/^[a-z]+\.test$/, 'site')]) })),
      versions, visits, events,
    });
  }
  return out;
}

/** A logger that keeps its warnings: the store says when a batch fell back to one write at a time. */
function warnings(): { logger: Logger; warned: string[] } {
  const warned: string[] = [];
  const logger: Logger = { debug: () => {}, info: () => {}, error: () => {}, warn: (a: unknown, b?: unknown) => void warned.push(String(b ?? a)), child: () => logger };
  return { logger, warned };
}

const shape = (a: AppliedOutcome) => ({ linkUpdated: a.linkUpdated, status: a.status, stored: a.contentId !== null, visit: a.visit, attempts: a.attemptIds.length });

describe('OutcomeStore.applyMany', () => {
  it('writes every kind of outcome exactly as apply does, one by one', async () => {
    const { logger, warned } = warnings();
    const store = new OutcomeStore({ prisma: db.prisma, clock, unchangedEvents: true, logger });
    const one = await scenario(store, 'one.test');
    const many = await scenario(store, 'many.test');
    const single: AppliedOutcome[] = [];
    for (const w of one.writes) single.push(await store.apply(w));
    const batched = await store.applyMany(many.writes);
    expect(batched.every((r) => r.status === 'fulfilled')).toBe(true);
    expect(warned).toEqual([]); // one statement wrote them all: no write-by-write fallback
    const got = batched.map((r) => (r as PromiseFulfilledResult<AppliedOutcome>).value);
    expect(got.map(shape)).toEqual(single.map(shape));
    // The kinds this scenario must cover, so the comparison means something.
    expect(got.map((a) => a.visit)).toEqual(['new', 'new', 'identical', 'not_modified', null, null, null, null, 'new', 'new']);
    const state = await stateOf(many.ids);
    expect(state).toEqual(await stateOf(one.ids));
    // What counts as a change: the text, when both versions have a fingerprint, else the bytes.
    expect(state.map((s) => s.link.lastVisitChanged)).toEqual([null, true, false, false, null, null, null, false, true]);
    const events = (i: number) => (state[i]!.events as { type: string; version: number | null }[]).filter((e) => e.type !== 'link.done').map((e) => `${e.type}@${e.version}`);
    expect(events(1)).toEqual(['link.changed@2']);
    expect(events(7)).toEqual(['link.unchanged@2']);
    expect(events(8)).toEqual(['link.changed@2']);
    // The markup-only revisit is still a stored version (the bytes the server sent), announced with both digests.
    expect((state[7]!.versions as unknown[]).length).toBe(2);
    const unchanged = (state[7]!.events as { type: string; old_sha256: string; new_sha256: string }[]).find((e) => e.type === 'link.unchanged')!;
    expect(unchanged.old_sha256).not.toBe(unchanged.new_sha256);
    // Attempt ids are the ones logged, in input order.
    const pausedIds = (await db.prisma.fetcherAttempt.findMany({ where: { linkId: many.ids[5] }, orderBy: { id: 'asc' } })).map((a) => a.id);
    expect(got[5]!.attemptIds).toEqual(pausedIds);
    const contents = await db.prisma.fetchedContent.findMany({ where: { linkId: many.ids[0] } });
    expect(got[0]!.contentId).toBe(contents[0]!.id);
  });

  it('a write that cannot be prepared fails alone', async () => {
    const store = new OutcomeStore({ prisma: db.prisma, clock });
    const a = await link('https://bad.test/a');
    const b = await link('https://bad.test/b');
    const out = await store.applyMany([
      { linkId: a.id, attempts: [attempt(a.id, a.url)], link: done, page: page(a.id, a.url, 'a') },
      { linkId: b.id, attempts: [attempt(b.id, b.url, { url: '' })], link: done },
    ]);
    expect(out[0]).toMatchObject({ status: 'fulfilled', value: { linkUpdated: true, status: 'done' } });
    expect(out[1]).toMatchObject({ status: 'rejected', reason: { code: 'invalid_attempt' } });
    expect(await db.prisma.link.findUniqueOrThrow({ where: { id: b.id } })).toMatchObject({ status: 'fetching', attemptCount: 0 });
  });

  it('when Postgres takes no writes (read-only after a failover), every write fails with the batch, none tried again alone', async () => {
    const ls = await Promise.all(['a', 'b', 'c'].map((p) => link(`https://readonly.test/${p}`)));
    await db.prisma.$executeRawUnsafe(`ALTER DATABASE "${db.name}" SET default_transaction_read_only = on`);
    const readOnly = createPrismaClient(db.url, { maxConnections: 1 });
    try {
      const { logger, warned } = warnings();
      const store = new OutcomeStore({ prisma: readOnly, clock, logger });
      const out = await store.applyMany(ls.map((l) => ({ linkId: l.id, attempts: [attempt(l.id, l.url)], link: done, page: page(l.id, l.url, l.url) })));
      expect(out.map((r) => (r.status === 'rejected' ? (r.reason as { code?: string }).code : r.status))).toEqual(['db_unavailable', 'db_unavailable', 'db_unavailable']);
      expect(warned).toEqual([]);
    } finally {
      await readOnly.$disconnect();
      await db.prisma.$executeRawUnsafe(`ALTER DATABASE "${db.name}" RESET default_transaction_read_only`);
    }
    expect(await db.prisma.fetcherAttempt.count({ where: { linkId: { in: ls.map((l) => l.id) } } })).toBe(0);
  });

  it('when the batch fails, each write is tried on its own: only the one at fault fails, the others commit with their hooks', async () => {
    await db.prisma.$executeRawUnsafe('CREATE TABLE IF NOT EXISTS batch_outbox (link uuid, status text)');
    const outbox: OutcomeHook = async (tx, write, applied) => {
      if (applied.linkUpdated) await tx.query('INSERT INTO batch_outbox (link, status) VALUES ($1::uuid, $2)', [write.linkId, applied.status]);
    };
    const { logger, warned } = warnings();
    const store = new OutcomeStore({ prisma: db.prisma, clock, hooks: [outbox], logger });
    const ls = await Promise.all(['a', 'b', 'c'].map((p) => link(`https://hooked.test/${p}`)));
    const boom: OutcomeHook = async () => {
      throw new Error('hook failed');
    };
    const out = await store.applyMany(ls.map((l, i) => ({
      linkId: l.id, attempts: [attempt(l.id, l.url)], link: done, page: page(l.id, l.url, l.url), ...(i === 1 ? { hooks: [boom] } : {}),
    })));
    expect(out.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(warned).toEqual(['outcome batch failed: writing its outcomes one by one']);
    const rows = await db.prisma.$queryRawUnsafe<{ link: string }[]>('SELECT link::text FROM batch_outbox ORDER BY link');
    expect(rows.map((r) => r.link).sort()).toEqual([ls[0]!.id, ls[2]!.id].sort());
    expect(await db.prisma.link.findUniqueOrThrow({ where: { id: ls[1]!.id } })).toMatchObject({ status: 'fetching', attemptCount: 0 });
    expect(await db.prisma.fetchedContent.count({ where: { linkId: ls[1]!.id } })).toBe(0);
    expect(await db.prisma.fetcherAttempt.count({ where: { linkId: ls[1]!.id } })).toBe(0);
    expect(await db.prisma.fetchedContent.count({ where: { linkId: { in: [ls[0]!.id, ls[2]!.id] } } })).toBe(2);
  });

  it('the hooks of a batch run in its transaction, one per write, after the statement', async () => {
    await db.prisma.$executeRawUnsafe('CREATE TABLE IF NOT EXISTS batch_outbox2 (link uuid, status text, stored boolean)');
    const outbox: OutcomeHook = async (tx, write, applied) => {
      const [seen] = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM fetched_content WHERE link = $1::uuid', [write.linkId]);
      await tx.query('INSERT INTO batch_outbox2 (link, status, stored) VALUES ($1::uuid, $2, $3)', [write.linkId, applied.status, seen!.n === 1]);
    };
    const { logger, warned } = warnings();
    const store = new OutcomeStore({ prisma: db.prisma, clock, hooks: [outbox], logger });
    const ls = await Promise.all(['a', 'b'].map((p) => link(`https://hooked2.test/${p}`)));
    await store.applyMany(ls.map((l) => ({ linkId: l.id, attempts: [attempt(l.id, l.url)], link: done, page: page(l.id, l.url, l.url) })));
    const rows = await db.prisma.$queryRawUnsafe<{ status: string; stored: boolean }[]>('SELECT status, stored FROM batch_outbox2');
    expect(rows).toEqual([{ status: 'done', stored: true }, { status: 'done', stored: true }]);
    expect(warned).toEqual([]);
  });

  it('two writes of one link in a call are written one after the other', async () => {
    const store = new OutcomeStore({ prisma: db.prisma, clock });
    const l = await link('https://twice.test/a');
    const out = await store.applyMany([
      { linkId: l.id, attempts: [attempt(l.id, l.url, { success: false, errorType: 'timeout' })], link: {} },
      { linkId: l.id, attempts: [attempt(l.id, l.url)], link: done, page: page(l.id, l.url, 'x') },
    ]);
    expect(out.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    expect(await db.prisma.link.findUniqueOrThrow({ where: { id: l.id } })).toMatchObject({ status: 'done', attemptCount: 2 });
  });
});

describe('OutcomeBatcher on Postgres', () => {
  it('concurrent outcomes all commit, each resolved with its own result', async () => {
    const { logger, warned } = warnings();
    const store = new OutcomeStore({ prisma: db.prisma, clock, logger });
    const batcher = new OutcomeBatcher(store, { maxBatch: 8, maxWaitMs: 5 });
    const ls = await Promise.all(Array.from({ length: 30 }, (_, i) => link(`https://batcher.test/${i}`)));
    const out = await Promise.all(ls.map((l) => batcher.apply({ linkId: l.id, attempts: [attempt(l.id, l.url)], link: done, page: page(l.id, l.url, l.url) })));
    expect(out.every((a) => a.linkUpdated && a.status === 'done' && a.contentId !== null && a.attemptIds.length === 1)).toBe(true);
    expect(new Set(out.map((a) => a.contentId)).size).toBe(30);
    expect(await db.prisma.link.count({ where: { id: { in: ls.map((l) => l.id) }, status: 'done', attemptCount: 1 } })).toBe(30);
    expect(await db.prisma.fetchedContent.count({ where: { linkId: { in: ls.map((l) => l.id) } } })).toBe(30);
    expect(warned).toEqual([]);
  });
});
