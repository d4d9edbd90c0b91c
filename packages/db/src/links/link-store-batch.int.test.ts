import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../testing.js';
import { LinkStore, type LinkChange } from './link-store.js';

let db: TestDatabase;
let plain: LinkStore;

beforeAll(async () => {
  db = await createTestDatabase('db_link_batch');
  plain = new LinkStore(db.prisma);
});

afterAll(async () => {
  await db.drop();
});

async function newLinks(site: string, n: number) {
  return plain.upsertMany(Array.from({ length: n }, (_, i) => ({ url: `https://${site}/${i}`, initialUrl: `https://${site}/${i}`, domain: site })));
}

const at = new Date('2026-11-22T10:00:00.000Z');
/** Changes of several shapes (the router's decision, a pause, clearing fields, counting attempts) and a finished link. */
const changes: LinkChange[] = [
  { status: 'fetching', fetcher: 'simple_http', selectionSource: 'learned' },
  { status: 'fetching', fetcher: 'playwright', selectionSource: 'probe' },
  { status: 'paused', pausedUntil: at, riskLevel: 2, lastErrorType: 'rate_limited', lastError: 'slow', generation: 3 },
  { status: 'routing' },
  { lastError: null, fetcher: null, attemptsMade: 2, lastAttemptAt: at },
  { status: 'failed', lastErrorType: 'x', lastError: 'late' },
];

async function stateOf(ids: string[]) {
  return Promise.all(ids.map(async (id) => {
    const { id: _id, url: _u, initialUrl: _i, domain: _d, crawlId: _c, ...rest } = (await plain.get(id))!;
    return rest;
  }));
}

describe('LinkStore.updateManyUnlessFinished and the batched updateUnlessFinished', () => {
  it('write every shape of change exactly as updateUnlessFinished does one by one, and leave finished links alone', async () => {
    const one = await newLinks('one.example', changes.length);
    const many = await newLinks('many.example', changes.length);
    const viaBatcher = await newLinks('batcher.example', changes.length);
    for (const set of [one, many, viaBatcher]) {
      await plain.update(set[5]!.id, { status: 'done' });
      await plain.update(set[4]!.id, { lastError: 'old', fetcher: 'simple_http', attemptsMade: 1 });
    }
    const single: boolean[] = [];
    for (const [i, c] of changes.entries()) single.push(await plain.updateUnlessFinished(one[i]!.id, c));
    const batched = await plain.updateManyUnlessFinished(changes.map((patch, i) => ({ id: many[i]!.id, patch })));
    expect(batched.map((r) => (r.status === 'fulfilled' ? r.value : r.reason))).toEqual(single);
    expect(single).toEqual([true, true, true, true, true, false]);
    expect(await stateOf(many.map((l) => l.id))).toEqual(await stateOf(one.map((l) => l.id)));

    const store = new LinkStore(db.prisma, { batch: { maxBatch: 32, maxWaitMs: 5 } });
    const out = await Promise.all(changes.map((c, i) => store.updateUnlessFinished(viaBatcher[i]!.id, c)));
    expect(out).toEqual(single);
    expect(await stateOf(viaBatcher.map((l) => l.id))).toEqual(await stateOf(one.map((l) => l.id)));
  });

  it('the batched statement updates many links of one shape at once', async () => {
    const ls = await newLinks('shape.example', 20);
    const out = await plain.updateManyUnlessFinished(ls.map((l, i) => ({ id: l.id, patch: { status: 'fetching', fetcher: i % 2 ? 'simple_http' : 'playwright', selectionSource: 'learned' } })));
    expect(out.every((r) => r.status === 'fulfilled' && r.value)).toBe(true);
    const rows = await db.prisma.link.findMany({ where: { id: { in: ls.map((l) => l.id) } }, orderBy: { url: 'asc' } });
    expect(new Set(rows.map((r) => `${r.status}:${r.selectionSource}`))).toEqual(new Set(['fetching:learned']));
    expect(rows.filter((r) => r.fetcher === 'playwright')).toHaveLength(10);
  });

  it('a change the database refuses fails alone', async () => {
    const ls = await newLinks('refused.example', 3);
    const out = await plain.updateManyUnlessFinished([
      { id: ls[0]!.id, patch: { status: 'fetching', riskLevel: 1 } },
      { id: ls[1]!.id, patch: { status: 'fetching', riskLevel: 2 ** 40 } },
      { id: ls[2]!.id, patch: { status: 'fetching', riskLevel: 3 } },
    ]);
    expect(out.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await plain.get(ls[0]!.id))!.riskLevel).toBe(1);
    expect((await plain.get(ls[1]!.id))!.status).toBe('queued');
    expect((await plain.get(ls[2]!.id))!.riskLevel).toBe(3);
  });

  it('read in batches: concurrent get calls share statements and return what one-by-one reads return, a bad id failing alone', async () => {
    const set = await newLinks('reads.example', 12);
    await plain.update(set[3]!.id, { status: 'paused', pausedUntil: at, lastError: 'slow' });
    const batched = new LinkStore(db.prisma, { readBatch: { maxBatch: 5 } });
    const ids = [...set.map((l) => l.id), '00000000-0000-4000-8000-000000000000', set[0]!.id.toUpperCase()];
    const want = await Promise.all(ids.map((id) => plain.get(id)));
    const got = await Promise.allSettled([...ids.map((id) => batched.get(id)), batched.get('not-a-uuid')]);
    expect(got.slice(0, ids.length)).toEqual(want.map((value) => ({ status: 'fulfilled', value })));
    expect(want[12]).toBeNull();
    expect(want[13]).toMatchObject({ id: set[0]!.id });
    expect(got[ids.length]).toMatchObject({ status: 'rejected' });
    // A write that committed before a read was asked for is seen by it.
    await plain.update(set[1]!.id, { status: 'done' });
    expect(await batched.get(set[1]!.id)).toMatchObject({ status: 'done' });
  });
});
