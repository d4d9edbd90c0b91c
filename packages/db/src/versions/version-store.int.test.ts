import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '@crawler/core';
import { createTestDatabase, type TestDatabase } from '../testing.js';
import { ContentStore } from '../content/content-store.js';
import { OutcomeStore } from '../outcome/outcome-store.js';
import { VersionStore } from './version-store.js';
import { OutboxStore } from '../events/outbox-store.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('db_versions');
});
afterAll(async () => {
  await db?.drop();
});

const clock = new ManualClock(Date.parse('2026-03-01T00:00:00Z'));
const enc = (s: string) => new TextEncoder().encode(s);
const DONE = { status: 'done', riskLevel: 0, pausedUntil: null, fetcher: 'simple_http', lastErrorType: null, lastError: null } as const;

async function link(url: string) {
  return db.prisma.link.create({ data: { url, initialUrl: url, domain: new URL(url).hostname, status: 'fetching' } });
}

function attempt(linkId: string, url: string, httpStatus = 200) {
  return { linkId, url, fetcher: 'simple_http', success: true, httpStatus, attemptedAt: clock.now(), selectionSource: 'learned', heuristics: [] };
}

/** One visit of `id`: the link reopened (after the first), then a fetch with `body`, or a 304 when body is null. */
async function visit(store: OutcomeStore, versions: VersionStore, id: string, url: string, body: string | null, first = false) {
  if (!first) expect(await versions.reopenForRevisit([id])).toHaveLength(1);
  else await db.prisma.link.update({ where: { id }, data: { status: 'fetching' } });
  clock.advance(3_600_000);
  await db.prisma.link.update({ where: { id }, data: { status: 'fetching' } });
  return store.apply({
    linkId: id,
    attempts: [attempt(id, url, body === null ? 304 : 200)],
    link: DONE,
    ...(body === null
      ? { notModified: { fetcher: 'simple_http', httpStatus: 304, finalUrl: url, headers: { etag: '"v"', 'set-cookie': 'a=b' } } }
      : { page: { linkId: id, body: enc(body), contentType: 'text/html', httpStatus: 200, finalUrl: url, fetcher: 'simple_http', headers: { etag: '"v"' } } }),
  });
}

describe('page versions', () => {
  it('stores a new version only for a different body, logs every visit, and says what changed', async () => {
    const store = new OutcomeStore({ prisma: db.prisma, clock, unchangedEvents: true });
    const versions = new VersionStore({ prisma: db.prisma, clock });
    const l = await link('https://v.test/a');
    const kinds: Array<string | null> = [];
    const changed: Array<boolean | null> = [];
    for (const [i, body] of (['one', 'one', null, 'two', null, 'one'] as const).entries()) {
      kinds.push((await visit(store, versions, l.id, l.url, body, i === 0)).visit);
      changed.push((await db.prisma.link.findUniqueOrThrow({ where: { id: l.id } })).lastVisitChanged);
    }
    expect(kinds).toEqual(['new', 'identical', 'not_modified', 'new', 'not_modified', 'new']);
    expect(changed).toEqual([null, false, false, true, false, true]);
    const list = await versions.list(l.id);
    expect(list.map((v) => [v.version, v.unchangedVisits])).toEqual([[1, 2], [2, 1], [3, 0]]);
    const content = new ContentStore({ prisma: db.prisma });
    expect(Buffer.from((await content.versionForLink(l.id, 2))!.body).toString()).toBe('two');
    expect(Buffer.from((await content.latestForLink(l.id))!.body).toString()).toBe('one');
    expect((await content.latestForLink(l.id))!.version).toBe(3);
    expect(await content.versionForLink(l.id, 4)).toBeNull();
    const visits = await db.prisma.pageVisit.findMany({ where: { linkId: l.id }, orderBy: { id: 'asc' } });
    expect(visits.map((v) => [v.kind, v.httpStatus])).toEqual([['new', 200], ['identical', 200], ['not_modified', 304], ['new', 200], ['not_modified', 304], ['new', 200]]);
    expect(visits[2]!.responseHeaders).toEqual({ etag: '"v"' });

    const sha = (await versions.list(l.id)).map((v) => v.sha256);
    const events = await db.prisma.linkEvent.findMany({ where: { linkId: l.id, type: { in: ['link.changed', 'link.unchanged'] } }, orderBy: { seq: 'asc' } });
    expect(events.map((e) => [e.type, e.oldSha256, e.newSha256, e.version])).toEqual([
      ['link.unchanged', sha[0], sha[0], 1],
      ['link.unchanged', sha[0], sha[0], 1],
      ['link.changed', sha[0], sha[1], 2],
      ['link.unchanged', sha[1], sha[1], 2],
      ['link.changed', sha[1], sha[2], 3],
    ]);
    // Every visit is also a link.done: the reopened link reached done again.
    expect(await db.prisma.linkEvent.count({ where: { linkId: l.id, type: 'link.done' } })).toBe(6);
    const claimed = await new OutboxStore({ prisma: db.prisma, clock }).claimForStream(100, 60_000);
    const changedEvent = claimed.find((e) => e.type === 'link.changed' && e.version === 2);
    expect(changedEvent).toMatchObject({ oldSha256: sha[0], newSha256: sha[1] });
    expect(claimed.find((e) => e.type === 'link.done')).not.toHaveProperty('newSha256');
  });

  it('asks with the validators the server sent last for the stored version, never a Last-Modified from the future', async () => {
    const store = new OutcomeStore({ prisma: db.prisma, clock });
    const versions = new VersionStore({ prisma: db.prisma, clock });
    const l = await link('https://v.test/validators');
    const date = () => clock.now().toUTCString();
    const write = async (fetcher: string, headers: Record<string, string>, body: string | null, first = false) => {
      if (!first) expect(await versions.reopenForRevisit([l.id])).toHaveLength(1);
      clock.advance(3_600_000);
      await db.prisma.link.update({ where: { id: l.id }, data: { status: 'fetching' } });
      await store.apply({
        linkId: l.id, attempts: [{ ...attempt(l.id, l.url, body === null ? 304 : 200), fetcher }], link: { ...DONE, fetcher },
        ...(body === null
          ? { notModified: { fetcher, httpStatus: 304, finalUrl: l.url, headers } }
          : { page: { linkId: l.id, body: enc(body), contentType: 'text/html', httpStatus: 200, finalUrl: l.url, fetcher, headers } }),
      });
    };
    const pick = async () => {
      const v = await versions.validators(l.id);
      return v && [v.version, v.etag, v.lastModified];
    };
    const modified = 'Sun, 01 Feb 2026 00:00:00 GMT';
    await write('simple_http', { etag: '"v1"', 'last-modified': modified, date: date() }, 'one', true);
    expect(await pick()).toEqual([1, '"v1"', modified]);
    // A 304 with a new ETag updates it; one without validators leaves it.
    await write('simple_http', { etag: '"v1-b"', date: date() }, null);
    await write('simple_http', { date: date() }, null);
    expect(await pick()).toEqual([1, '"v1-b"', modified]);
    // The same body under a new ETag (a redeploy); a browser's visit of it says nothing about plain HTTP's.
    await write('simple_http', { etag: '"v1-c"', date: date() }, 'one');
    await write('playwright', { etag: '"rendered"', date: date() }, 'one');
    expect(await pick()).toEqual([1, '"v1-c"', modified]);
    // A new version starts from its own response; its Last-Modified a year ahead of its Date is not sent.
    await write('simple_http', { etag: '"v2"', 'last-modified': 'Mon, 01 Mar 2027 00:00:00 GMT', date: date() }, 'two');
    expect(await pick()).toEqual([2, '"v2"', null]);
    await write('simple_http', { 'last-modified': 'Mon, 01 Mar 2027 00:00:00 GMT' }, 'three');
    expect(await pick()).toEqual([3, null, null]);
  });

  it('writes no link.unchanged unless asked', async () => {
    const store = new OutcomeStore({ prisma: db.prisma, clock });
    const versions = new VersionStore({ prisma: db.prisma, clock });
    const l = await link('https://v.test/quiet');
    await visit(store, versions, l.id, l.url, 'x', true);
    await visit(store, versions, l.id, l.url, null);
    await visit(store, versions, l.id, l.url, 'x');
    expect(await db.prisma.linkEvent.count({ where: { linkId: l.id, type: { in: ['link.changed', 'link.unchanged'] } } })).toBe(0);
    expect(await db.prisma.pageVisit.count({ where: { linkId: l.id } })).toBe(3);
  });

  it('reopens only finished links, with a new generation and a fresh attempt budget', async () => {
    const versions = new VersionStore({ prisma: db.prisma, clock });
    const done = await db.prisma.link.create({ data: { url: 'https://v.test/done', initialUrl: 'https://v.test/done', domain: 'v.test', status: 'done', attemptCount: 5, generation: 2 } });
    const busy = await db.prisma.link.create({ data: { url: 'https://v.test/busy', initialUrl: 'https://v.test/busy', domain: 'v.test', status: 'fetching', generation: 0 } });
    const reopened = await versions.reopenForRevisit([done.id, busy.id]);
    expect(reopened).toEqual([{ id: done.id, url: done.url, generation: 3 }]);
    expect(await db.prisma.link.findUniqueOrThrow({ where: { id: done.id } })).toMatchObject({ status: 'queued', attemptCount: 0, generation: 3 });
    expect(await db.prisma.link.findUniqueOrThrow({ where: { id: busy.id } })).toMatchObject({ status: 'fetching', generation: 0 });
  });

  it('prunes versions past the last K that are older than D days, never the latest', async () => {
    const store = new OutcomeStore({ prisma: db.prisma, clock });
    const versions = new VersionStore({ prisma: db.prisma, clock });
    const l = await link('https://v.test/many');
    for (let i = 0; i < 6; i++) {
      await visit(store, versions, l.id, l.url, `body ${i}`, i === 0);
      clock.advance(10 * 86_400_000);
    }
    await visit(store, versions, l.id, l.url, null); // a 304 confirming version 6
    // Versions 1..6, ten days apart, the newest 10 days old at "now": keep the last 2, or anything younger than 35 days (version 4 is 30 days old).
    const before = await db.prisma.fetchedContent.count();
    const pruned = await versions.prune({ keepVersions: 2, keepDays: 35 });
    // Retention is fleet-wide: the other tests' links lose their old versions too; the count says what went.
    expect(pruned.deletedVersions).toBe(before - (await db.prisma.fetchedContent.count()));
    expect((await versions.list(l.id)).map((v) => v.version)).toEqual([4, 5, 6]);
    // Pruning everything but the latest keeps its visits (the 304 confirmed it).
    await versions.prune({ keepVersions: 1, keepDays: 0 });
    expect((await versions.list(l.id)).map((v) => [v.version, v.unchangedVisits])).toEqual([[6, 1]]);
  });
});
