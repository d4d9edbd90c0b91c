import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../testing.js';
import { frontierKey } from '@crawler/core';
import { CrawlStore, type FrontierCandidate } from './crawl-store.js';

let db: TestDatabase;
let store: CrawlStore;

beforeAll(async () => {
  db = await createTestDatabase('crawl_store');
  store = new CrawlStore(db.prisma);
});
afterAll(async () => {
  await db?.drop();
});

const SPEC = { scope: 'same-site' as const, include: [], exclude: [], maxDepth: null, maxPagesPerHost: null, followNofollow: false, trackingParams: null, sitemaps: false };

function cand(url: string, depth = 1): FrontierCandidate {
  const u = new URL(url);
  return { url, key: frontierKey(url), host: u.hostname, domain: u.hostname, initialUrl: url, depth };
}

async function newCrawl(o: { maxPages?: number | null; maxPagesPerHost?: number | null } = {}) {
  const seed = `https://s${Math.random().toString(36).slice(2)}.test/`;
  const { crawl, admitted } = await store.create({ ...SPEC, seeds: [seed], maxPages: o.maxPages ?? null, maxPagesPerHost: o.maxPagesPerHost ?? null }, () => ({
    candidates: [cand(seed, 0)],
    tally: { discovered: 1, outOfScope: 0, overLimit: 0 },
  }));
  expect(admitted).toHaveLength(1);
  return { crawl, seed, seedLinkId: admitted[0]!.linkId };
}

describe('CrawlStore admission', () => {
  it('admits exactly maxPages across concurrent admissions, and no key twice', async () => {
    const { crawl, seed, seedLinkId } = await newCrawl({ maxPages: 100 });
    const urls = Array.from({ length: 300 }, (_, i) => `${seed}p/${i}`);
    // 24 "workers" offering overlapping slices, several spellings of one page among them.
    const batches = Array.from({ length: 24 }, (_, w) => {
      const out: FrontierCandidate[] = [];
      for (let k = 0; k < 60; k++) {
        const i = (w * 37 + k * 11) % 300;
        out.push(cand(k % 3 === 0 ? `${urls[i]}/` : urls[i]!));
      }
      return out;
    });
    const results = await Promise.all(batches.map((candidates) => store.admit({ crawlId: crawl.id, discoveredFrom: seedLinkId, candidates, tally: { discovered: candidates.length, outOfScope: 0, overLimit: 0 } })));
    const admitted = results.flatMap((r) => r.admitted);
    expect(admitted).toHaveLength(99);
    expect(new Set(admitted.map((a) => frontierKey(a.url))).size).toBe(99);
    const view = (await store.view(crawl.id))!;
    expect(view.counters.admitted).toBe(100);
    expect(view.counters.queued).toBe(100);
    expect(view.counters.discovered).toBe(1 + 24 * 60);
    expect(view.counters.duplicate + view.counters.overLimit).toBe(24 * 60 - 99);
  });

  it('refuses a list far past maxPages (a big sitemap under a small limit) without failing the admission', async () => {
    const { crawl, seed, seedLinkId } = await newCrawl({ maxPages: 3 });
    const candidates = Array.from({ length: 200_000 }, (_, i) => cand(`${seed}s/${i}`));
    const r = await store.admit({ crawlId: crawl.id, discoveredFrom: seedLinkId, candidates, tally: { discovered: candidates.length, outOfScope: 0, overLimit: 0 } });
    expect(r.admitted).toHaveLength(2);
    expect((await store.view(crawl.id))!.counters).toMatchObject({ admitted: 3, overLimit: 200_000 - 2 });
  }, 60_000);

  it('keeps a per-host cap and gives the slot of a page another owner has to the next candidate', async () => {
    const { crawl, seed, seedLinkId } = await newCrawl({ maxPages: 5, maxPagesPerHost: 3 });
    // Someone else's link: the fleet keeps one row per url, so this crawl cannot take it.
    await db.prisma.link.create({ data: { url: `${seed}taken`, initialUrl: `${seed}taken`, domain: 'x' } });
    const other = 'https://other-host.test/';
    const r = await store.admit({
      crawlId: crawl.id,
      discoveredFrom: seedLinkId,
      candidates: [cand(`${seed}taken`), cand(`${seed}a`), cand(`${seed}b`), cand(`${seed}c`), cand(`${other}x`), cand(`${other}y`), cand(`${other}z`)],
      tally: { discovered: 7, outOfScope: 0, overLimit: 0 },
    });
    // Seed + a + b fill the seed host's cap of 3; c is over it; the budget of 5 leaves two for the other host.
    expect(r.admitted.map((a) => a.url).sort()).toEqual([`${seed}a`, `${seed}b`, `${other}x`, `${other}y`].sort());
    expect(r.duplicate).toBe(1);
    expect(r.overLimit).toBe(2);
    const again = await store.admit({ crawlId: crawl.id, discoveredFrom: seedLinkId, candidates: [cand(`${seed}c`), cand(`${other}z`)], tally: { discovered: 2, outOfScope: 0, overLimit: 0 } });
    expect(again.admitted).toEqual([]);
    expect(again.duplicate).toBe(2);
  });

  it('counts the links maxDepth refused apart, as part of overLimit (GET /crawls/:id: which limit stopped the crawl)', async () => {
    const { crawl, seed, seedLinkId } = await newCrawl({ maxPages: 2 });
    // 3 refused by depth before the frontier; of the 2 candidates, the budget of 2 (seed included) takes one.
    await store.admit({ crawlId: crawl.id, discoveredFrom: seedLinkId, candidates: [cand(`${seed}d1`), cand(`${seed}d2`)], tally: { discovered: 5, outOfScope: 0, overLimit: 3, overDepth: 3 } });
    // Nothing to admit: only the counters move (the path without the crawl's lock).
    await store.admit({ crawlId: crawl.id, discoveredFrom: seedLinkId, candidates: [], tally: { discovered: 2, outOfScope: 0, overLimit: 2, overDepth: 2 } });
    expect((await store.view(crawl.id))!.counters).toMatchObject({ overLimit: 3 + 1 + 2, overDepth: 5 });
  });

  it('counts out-of-scope links by reason and keeps the first few distinct URLs of each, across concurrent admissions', async () => {
    const { crawl, seed, seedLinkId } = await newCrawl();
    const off = (i: number) => `https://other${i}.test/`;
    // Through the locked path (a candidate to admit) and the counters-only one, 12 admissions at once.
    await Promise.all(Array.from({ length: 12 }, (_, i) => store.admit({
      crawlId: crawl.id, discoveredFrom: seedLinkId, candidates: i % 2 === 0 ? [cand(`${seed}in/${i}`)] : [],
      tally: {
        discovered: 4, outOfScope: 3, overLimit: 0,
        outOfScopeBy: { scope: 2, exclude: 1 },
        // Every page links the same off-site front page: kept once.
        outOfScopeSamples: { scope: [off(0), off(i + 1)], exclude: [`${seed}private/${i}-${'x'.repeat(400)}`] },
      },
    })));
    const view = (await store.view(crawl.id))!;
    expect(view.counters.outOfScope).toBe(36);
    expect(view.counters.outOfScopeByReason).toEqual({ scope: 24, include: 0, exclude: 12, trap: 0, nofollow: 0 });
    expect(view.outOfScopeSamples.scope).toHaveLength(5);
    expect(new Set(view.outOfScopeSamples.scope).size).toBe(5);
    expect(view.outOfScopeSamples.scope).toContain(off(0));
    expect(view.outOfScopeSamples.exclude).toHaveLength(5);
    for (const url of view.outOfScopeSamples.exclude!) expect(url).toMatch(new RegExp(`^${seed}private/\\d+-x+…$`));
    expect(view.outOfScopeSamples.exclude![0]!.length).toBe(300);
    expect(Object.keys(view.outOfScopeSamples).sort()).toEqual(['exclude', 'scope']);
  });

  it('a canonical target is seen before the page\'s own links, and a cancelled crawl admits nothing', async () => {
    const { crawl, seed, seedLinkId } = await newCrawl();
    const r = await store.admit({
      crawlId: crawl.id,
      discoveredFrom: seedLinkId,
      candidates: [cand(`${seed}canon`), cand(`${seed}next`)],
      alsoSeen: [{ key: frontierKey(`${seed}canon`), host: new URL(seed).hostname }],
      tally: { discovered: 2, outOfScope: 0, overLimit: 0 },
    });
    expect(r.admitted.map((a) => a.url)).toEqual([`${seed}next`]);
    expect(await store.cancel(crawl.id)).toBe(true);
    const after = await store.admit({ crawlId: crawl.id, discoveredFrom: seedLinkId, candidates: [cand(`${seed}later`)], tally: { discovered: 1, outOfScope: 0, overLimit: 0 } });
    expect(after).toMatchObject({ admitted: [], closed: true });
    const view = (await store.view(crawl.id))!;
    expect(view.state).toBe('cancelled');
    // The queued links failed with the cancellation: nothing of the crawl is left to fetch.
    expect(view.counters.queued).toBe(0);
    expect(view.counters.failed).toBe(2);
  });

  it('a crawl is done once none of its links is in progress, and unknown ids are null', async () => {
    const { crawl, seedLinkId } = await newCrawl();
    expect((await store.view(crawl.id))!.state).toBe('running');
    await db.prisma.link.update({ where: { id: seedLinkId }, data: { status: 'paused' } });
    expect((await store.view(crawl.id))!.state).toBe('running');
    await db.prisma.link.update({ where: { id: seedLinkId }, data: { status: 'done' } });
    expect((await store.view(crawl.id))!.state).toBe('done');
    expect(await store.view('00000000-0000-4000-8000-000000000000')).toBeNull();
    expect(await store.view('not-a-uuid')).toBeNull();
  });
});

describe('CrawlStore.create with seeds stored before', () => {
  /** A crawl whose one seed is `seed`, without a max age. */
  const crawlOf = (seed: string) =>
    store.create({ ...SPEC, seeds: [seed], maxPages: null, maxPagesPerHost: null, maxAgeSeconds: null }, () => ({ candidates: [cand(seed, 0)], tally: { discovered: 1, outOfScope: 0, overLimit: 0 } }));

  it('takes a seed that failed earlier as a new visit: a failed page is not a stored one', async () => {
    const seed = `https://failed${Math.random().toString(36).slice(2)}.test/`;
    const first = await crawlOf(seed);
    const linkId = first.admitted[0]!.linkId;
    await db.prisma.$executeRawUnsafe(`UPDATE links SET status = 'failed', last_error_type = 'network_error', attempt_count = 3, last_attempt_at = now() WHERE id = $1::uuid`, linkId);
    const again = await crawlOf(seed);
    expect(again.admitted.map((a) => a.linkId)).toEqual([linkId]);
    const [row] = await db.prisma.$queryRawUnsafe<Array<{ status: string; crawl: string; attempts: number; error: string | null }>>(
      'SELECT status, crawl::text, attempt_count AS attempts, last_error_type AS error FROM links WHERE id = $1::uuid', linkId);
    expect(row).toEqual({ status: 'queued', crawl: again.crawl.id, attempts: 0, error: null });
    // The first crawl keeps counting the failure it had.
    expect((await store.view(first.crawl.id))!.counters.failed).toBe(1);
  });

  it('leaves a seed stored as done to its page (nothing to fetch)', async () => {
    const seed = `https://done${Math.random().toString(36).slice(2)}.test/`;
    const first = await crawlOf(seed);
    await db.prisma.$executeRawUnsafe(`UPDATE links SET status = 'done', last_attempt_at = now() WHERE id = $1::uuid`, first.admitted[0]!.linkId);
    expect((await crawlOf(seed)).admitted).toEqual([]);
  });
});
