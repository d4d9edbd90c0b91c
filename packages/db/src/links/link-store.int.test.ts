import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../testing.js';
import pg from 'pg';
import { LinkStore, READ_ROUTABLE_SQL, SCAN_STALE_SQL } from './link-store.js';
import { LIST_SQL, listLinks } from './link-query.js';
import { planNodes } from '../__fixtures__/plans.js';

let db: TestDatabase;
let links: LinkStore;

beforeAll(async () => {
  db = await createTestDatabase('pipeline_link_repo');
  links = new LinkStore(db.prisma);
});

afterAll(async () => {
  await db.drop();
});

async function newLink(url: string) {
  const [row] = await links.upsertMany([{ url, initialUrl: url, domain: new URL(url).hostname }]);
  return row!;
}

describe('LinkStore on real Postgres (the hot path in plain SQL)', () => {
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

  // The same answers with reads in batches (the runtime's store): READ_ROUTABLE_SQL's conditions are then checked on the
  // row the batched read returned.
  it.each([
    ['one statement per read', () => links],
    ['reads in batches', () => new LinkStore(db.prisma, { readBatch: { maxBatch: 8 } })],
  ])('readRoutable (%s) returns an unfinished, unpaused link of the generation without writing it, and refuses paused, finished, stale and missing ones', async (_, store) => {
    const links = store();
    const tag = Math.random().toString(36).slice(2, 8);
    const newLink = async (url: string) => (await links.upsertMany([{ url: `${url}-${tag}`, initialUrl: `${url}-${tag}`, domain: 'repo.example' }]))[0]!;
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

  it('looks a link up by primary key even when the statistics say no link is unfinished', async () => {
    // A second crawl, or a producer's burst after a quiet period: the statistics were taken while every link was
    // finished, then thousands of queued links arrived. The per-link statements ("this link, if unfinished") must not
    // become scans of the reconciler's partial index of unfinished links (measured: 8 000 entries read per page).
    const burst = await createTestDatabase('pipeline_link_repo_burst');
    try {
      const sql = (text: string, ...params: unknown[]) => burst.prisma.$executeRawUnsafe(text, ...params);
      const insert = (n: number, status: string, tag: string) =>
        sql(`INSERT INTO links (url, initial_url, domain, status) SELECT u, u, 'burst.test', $2 FROM (SELECT 'https://burst.test/${tag}/' || g AS u FROM generate_series(1, $1::int) g) x`, n, status);
      await insert(3_000, 'done', 'old');
      await sql('ANALYZE links');
      await insert(3_000, 'queued', 'new');
      const [probe] = await burst.prisma.$queryRawUnsafe<{ id: string }[]>(`SELECT id::text FROM links WHERE url = 'https://burst.test/new/1500'`);
      const update = `UPDATE links SET status = $2, updated_at = now() WHERE id = $1::uuid AND status NOT IN ('done', 'failed') RETURNING 1`;
      const indexesOf = (plan: unknown): string[] => {
        const out: string[] = [];
        const walk = (n: { Plans?: unknown[]; 'Index Name'?: string }) => {
          if (n['Index Name']) out.push(n['Index Name']);
          for (const c of n.Plans ?? []) walk(c as never);
        };
        walk((plan as { Plan: never }[])[0]!.Plan);
        return out;
      };
      // Prepared statements as the pool runs them, with a plan for the values and with a generic one; one connection.
      const plans = await burst.prisma.$transaction(async (tx) => {
        const out: Record<string, string[]> = {};
        const explain = async (text: string) => indexesOf((await tx.$queryRawUnsafe<{ 'QUERY PLAN': unknown }[]>(text))[0]!['QUERY PLAN']);
        await tx.$executeRawUnsafe(`PREPARE read_routable(uuid, timestamptz, int) AS ${READ_ROUTABLE_SQL}`);
        await tx.$executeRawUnsafe(`PREPARE decide(uuid, text) AS ${update}`);
        for (const mode of ['force_custom_plan', 'force_generic_plan']) {
          await tx.$executeRawUnsafe(`SET LOCAL plan_cache_mode = ${mode}`);
          out[`${mode} read`] = await explain(`EXPLAIN (FORMAT JSON) EXECUTE read_routable('${probe!.id}', now(), 0)`);
          out[`${mode} write`] = await explain(`EXPLAIN (FORMAT JSON) EXECUTE decide('${probe!.id}', 'fetching')`);
        }
        await tx.$executeRawUnsafe('DEALLOCATE ALL');
        return out;
      });
      expect(plans).toEqual({
        'force_custom_plan read': ['links_pkey'], 'force_custom_plan write': ['links_pkey'],
        'force_generic_plan read': ['links_pkey'], 'force_generic_plan write': ['links_pkey'],
      });
    } finally {
      await burst.drop();
    }
  });

  it('pages unfinished links sharing one updated_at by the index: every link once, no sort of the tied ones', async () => {
    // One bulk insert gives every link the same updated_at: the reconciler's keyset pages must still be index ranges
    // (a page used to read and sort every tied link: 0.5 s per page at 500k) and must neither skip nor repeat a link.
    const bulk = await createTestDatabase('pipeline_link_repo_keyset');
    const client = new pg.Client({ connectionString: bulk.url });
    await client.connect();
    try {
      await client.query(`INSERT INTO links (url, initial_url, domain, status, updated_at)
        SELECT 'https://k.example/' || g, 'https://k.example/' || g, 'k.example', 'queued', now() - interval '1 hour' FROM generate_series(1, 3000) g`);
      await client.query('ANALYZE links');
      await client.query('SET plan_cache_mode = force_generic_plan');
      await client.query(`PREPARE scan(text, timestamptz, timestamptz, uuid, int) AS ${SCAN_STALE_SQL}`);
      const nodes = await planNodes(client, `EXECUTE scan('queued', now(), 'epoch', '00000000-0000-0000-0000-000000000000', 500)`);
      expect(nodes.some((n) => n.includes('idx_links_unfinished_updated'))).toBe(true);
      expect(nodes.filter((n) => /Sort/.test(n))).toEqual([]);
      const store = new LinkStore(bulk.prisma);
      const seen: string[] = [];
      let after = { updatedAt: new Date(0), id: '00000000-0000-0000-0000-000000000000' };
      for (;;) {
        const page = await store.staleUnfinished('queued', new Date(), after, 257);
        seen.push(...page.map((l) => l.id));
        if (page.length < 257) break;
        after = { updatedAt: page.at(-1)!.updatedAt, id: page.at(-1)!.id };
      }
      expect(seen).toHaveLength(3000);
      expect(new Set(seen).size).toBe(3000);
    } finally {
      await client.end();
      await bulk.drop();
    }
  });

  it('lists links newest first by an index (GET /links): no scan and sort of the whole table per page', async () => {
    // Without an index on (created_at, id) every page of GET /links read and sorted every link: 0.2 s per page at
    // 500k links, seconds at millions, for the first page and the last alike.
    const bulk = await createTestDatabase('pipeline_link_list');
    const client = new pg.Client({ connectionString: bulk.url });
    await client.connect();
    try {
      await client.query(`INSERT INTO links (url, initial_url, domain, status, created_at)
        SELECT 'https://l.example/' || g, 'https://l.example/' || g, 'l.example', 'done', now() - (g % 700) * interval '1 second' FROM generate_series(1, 3000) g`);
      await client.query('ANALYZE links');
      await client.query('SET plan_cache_mode = force_custom_plan');
      await client.query(`PREPARE list(text, text, text, timestamptz, uuid, int) AS ${LIST_SQL}`);
      const nodesOf = (args: string) => planNodes(client, `EXECUTE list(${args})`);
      for (const args of [`NULL, NULL, NULL, NULL, NULL, 101`, `'done', NULL, NULL, now() - interval '5 minutes', '00000000-0000-0000-0000-000000000000', 101`]) {
        const nodes = await nodesOf(args);
        expect(nodes.filter((n) => /Sort|Seq Scan/.test(n)), args).toEqual([]);
      }
      // Every link once, newest first, over pages whose boundaries fall inside runs of one created_at.
      const seen: string[] = [];
      let after: { createdAt: Date; id: string } | undefined;
      for (;;) {
        const page = await listLinks(bulk.prisma, { limit: 257, after });
        seen.push(...page.links.map((l) => l.id));
        if (!page.more) break;
        after = { createdAt: page.links.at(-1)!.createdAt, id: page.links.at(-1)!.id };
      }
      expect(new Set(seen).size).toBe(3000);
    } finally {
      await client.end();
      await bulk.drop();
    }
  });
});

describe('LinkStore.backlog (crawl stats: what is waiting, and on which sites)', () => {
  it('counts unfinished links by status and by domain, most first, leaving finished links out', async () => {
    const bl = new LinkStore(db.prisma);
    const before = await bl.backlog(100);
    const mk = async (host: string, n: number, status: string) => {
      for (let i = 0; i < n; i++) {
        const l = await newLink(`https://${host}/backlog-${status}-${i}`);
        await bl.update(l.id, { status: status as never });
      }
    };
    await mk('big.backlog.example', 3, 'queued');
    await mk('big.backlog.example', 2, 'paused');
    await mk('small.backlog.example', 1, 'fetching');
    await mk('small.backlog.example', 4, 'done');
    await mk('gone.backlog.example', 2, 'failed');
    const after = await bl.backlog(100);
    expect(after.total - before.total).toBe(6);
    expect(after.byStatus.queued - before.byStatus.queued).toBe(3);
    expect(after.byStatus.paused - before.byStatus.paused).toBe(2);
    expect(after.byStatus.fetching - before.byStatus.fetching).toBe(1);
    expect(after.byStatus.routing - before.byStatus.routing).toBe(0);
    const big = after.topDomains.find((d) => d.domain === 'big.backlog.example');
    expect(big).toEqual({ domain: 'big.backlog.example', total: 5, queued: 3, routing: 0, fetching: 0, paused: 2 });
    expect(after.topDomains.find((d) => d.domain === 'small.backlog.example')).toMatchObject({ total: 1, fetching: 1 });
    expect(after.topDomains.some((d) => d.domain === 'gone.backlog.example')).toBe(false);
    const ranked = after.topDomains.map((d) => d.domain);
    expect(ranked.indexOf('big.backlog.example')).toBeLessThan(ranked.indexOf('small.backlog.example'));
    expect((await bl.backlog(1)).topDomains).toHaveLength(1);
  });
});
