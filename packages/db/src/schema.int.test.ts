import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '@crawler/core';
import { createTestDatabase, type TestDatabase } from './testing.js';
import { ContentStore } from './content/content-store.js';
import { RouteStore } from './routes/route-store.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('db_schema');
});
afterAll(async () => {
  await db?.drop();
});

// Every model created, read, updated and deleted through the generated client: the migrated database matches
// schema.prisma column for column (a missing column or wrong type fails here).
describe('schema.prisma ↔ migrations', () => {
  it('Link', async () => {
    const l = await db.prisma.link.create({
      data: { url: 'https://crud.test/', initialUrl: 'https://crud.test/?utm=1', domain: 'crud.test', learningModeEnabled: null, pausedUntil: new Date('2026-01-01T00:00:00Z') },
    });
    expect(l).toMatchObject({ status: 'queued', riskLevel: 0, attemptCount: 0, learningModeEnabled: null, fetcher: null });
    expect(l.id).toMatch(/^[0-9a-f-]{36}$/);
    const u = await db.prisma.link.update({
      where: { id: l.id },
      data: { status: 'paused', riskLevel: 2, attemptCount: { increment: 1 }, lastAttemptAt: new Date(), learningModeEnabled: true, fetcher: 'playwright', selectionSource: 'learned', lastErrorType: 'blocked_captcha', lastError: 'challenge' },
    });
    expect(u).toMatchObject({ status: 'paused', riskLevel: 2, attemptCount: 1, learningModeEnabled: true, lastErrorType: 'blocked_captcha' });
    expect(u.updatedAt.getTime()).toBeGreaterThanOrEqual(l.updatedAt.getTime());
    await expect(db.prisma.link.create({ data: { url: 'https://crud.test/', initialUrl: 'x', domain: 'crud.test' } })).rejects.toThrow();
    expect(await db.prisma.link.findUnique({ where: { url: 'https://crud.test/' } })).not.toBeNull();
    await db.prisma.link.delete({ where: { id: l.id } });
    expect(await db.prisma.link.count({ where: { id: l.id } })).toBe(0);
  });

  it('FetcherAttempt and AttemptHeuristic', async () => {
    const link = await db.prisma.link.create({ data: { url: 'https://crud2.test/', initialUrl: 'https://crud2.test/', domain: 'crud2.test' } });
    const a = await db.prisma.fetcherAttempt.create({
      data: {
        linkId: link.id, url: link.url, fetcher: 'simple_http', success: false, isBanned: true, errorType: 'blocked_403', httpStatus: 403,
        responseHeaders: { server: 'nginx', 'cf-ray': 'abc' }, durationMs: 120, selectionSource: 'probe',
        heuristics: { create: [{ heuristicType: 'domain', heuristicValue: 'crud2.test', importanceScore: 0.4 }, { heuristicType: 'status_403', heuristicValue: 'true' }] },
      },
      include: { heuristics: true },
    });
    expect(typeof a.id).toBe('bigint');
    expect(a.responseHeaders).toEqual({ server: 'nginx', 'cf-ray': 'abc' });
    // Rows written through the client get the attempt's fields copied by trigger.
    const h = await db.prisma.attemptHeuristic.findMany({ where: { attemptId: a.id }, orderBy: { id: 'asc' } });
    expect(h.map((x) => [x.heuristicType, x.fetcher, x.success, x.attemptedAt?.getTime()])).toEqual([
      ['domain', 'simple_http', false, a.attemptedAt.getTime()],
      ['status_403', 'simple_http', false, a.attemptedAt.getTime()],
    ]);
    await db.prisma.fetcherAttempt.update({ where: { id_attemptedAt: { id: a.id, attemptedAt: a.attemptedAt } }, data: { success: true, fetcher: 'playwright' } });
    const h2 = await db.prisma.attemptHeuristic.update({ where: { id_attemptedAt: { id: h[0]!.id, attemptedAt: h[0]!.attemptedAt } }, data: { importanceScore: 0.9, heuristicValue: 'crud2.test' } });
    expect(h2).toMatchObject({ importanceScore: 0.9, success: true, fetcher: 'playwright' });
    await db.prisma.attemptHeuristic.delete({ where: { id_attemptedAt: { id: h[1]!.id, attemptedAt: h[1]!.attemptedAt } } });
    const prior = await db.prisma.fetcherAttempt.create({ data: { url: 'seed:x', fetcher: 'simple_http', success: true, selectionSource: 'prior' } });
    expect(prior.linkId).toBeNull();
    await db.prisma.fetcherAttempt.delete({ where: { id_attemptedAt: { id: a.id, attemptedAt: a.attemptedAt } } });
    expect(await db.prisma.attemptHeuristic.count({ where: { attemptId: a.id } })).toBe(0);
    await db.prisma.fetcherAttempt.delete({ where: { id_attemptedAt: { id: prior.id, attemptedAt: prior.attemptedAt } } });
    await db.prisma.link.delete({ where: { id: link.id } });
  });

  it('FetcherRoute through RouteStore', async () => {
    const routes = new RouteStore({ prisma: db.prisma });
    expect(await routes.get('example.com')).toBeNull();
    expect(await routes.set('www.Example.com', 'direct_access')).toEqual({ domain: 'example.com', fetcher: 'simple_http' });
    expect(await routes.get('example.com')).toEqual({ domain: 'example.com', fetcher: 'simple_http' });
    await routes.set('example.com', 'playwright');
    await routes.set('b.test', 'playwright_stealth');
    expect(await routes.list()).toEqual([
      { domain: 'b.test', fetcher: 'playwright_stealth' },
      { domain: 'example.com', fetcher: 'playwright' },
    ]);
    expect(await routes.delete('example.com')).toBe(true);
    expect(await routes.delete('example.com')).toBe(false);
    await expect(routes.set(' ', 'playwright')).rejects.toMatchObject({ code: 'invalid_route' });
    const raw = await db.prisma.fetcherRoute.findUniqueOrThrow({ where: { domain: 'b.test' } });
    expect(raw.createdAt).toBeInstanceOf(Date);
  });

  it('FetchedContent through ContentStore', async () => {
    const link = await db.prisma.link.create({ data: { url: 'https://c.test/', initialUrl: 'https://c.test/', domain: 'c.test' } });
    const clock = new ManualClock(Date.parse('2026-02-01T00:00:00Z'));
    const content = new ContentStore({ prisma: db.prisma, clock });
    const html = new TextEncoder().encode('<html><body>' + 'hello crawler '.repeat(2000) + '</body></html>');
    const saved = await content.save({ linkId: link.id, body: html, contentType: 'text/html', httpStatus: 200, finalUrl: 'https://c.test/', fetcher: 'direct_access' });
    expect(saved).toMatchObject({ sizeBytes: html.byteLength, fetcher: 'simple_http', httpStatus: 200 });
    expect(saved.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(saved.storedBytes).toBeLessThan(html.byteLength / 10);
    const got = await content.get(saved.id);
    expect(Buffer.from(got!.body).equals(Buffer.from(html))).toBe(true);
    clock.advance(1000);
    const second = await content.save({ linkId: link.id, body: new Uint8Array([0, 255, 1]), contentType: 'application/pdf', httpStatus: 200, finalUrl: 'https://c.test/x.pdf', fetcher: 'simple_http' });
    const latest = await content.latestForLink(link.id);
    expect(latest?.id).toBe(second.id);
    expect([...latest!.body]).toEqual([0, 255, 1]);
    expect(await content.get(999999n)).toBeNull();
    await db.prisma.fetchedContent.update({ where: { id: second.id }, data: { contentType: 'application/octet-stream' } });
    await db.prisma.fetchedContent.delete({ where: { id: second.id } });
    expect(await content.latestForLink(link.id)).toMatchObject({ id: saved.id });
    await expect(content.save({ linkId: '00000000-0000-0000-0000-000000000000', body: html, httpStatus: 200, finalUrl: 'x', fetcher: 'simple_http' })).rejects.toMatchObject({ code: 'db_constraint' });
  });

  it('ContentStore.saveAndComplete stores the page and marks its link done in one statement', async () => {
    const link = await db.prisma.link.create({
      data: { url: 'https://d.test/', initialUrl: 'https://d.test/', domain: 'd.test', status: 'fetching', riskLevel: 3, attemptCount: 2, pausedUntil: new Date('2030-01-01T00:00:00Z'), lastErrorType: 'timeout', lastError: 'slow' },
    });
    const content = new ContentStore({ prisma: db.prisma, clock: new ManualClock(Date.parse('2026-03-01T00:00:00Z')) });
    const html = new TextEncoder().encode('<html><body>done</body></html>');
    const at = new Date('2026-03-01T00:00:00Z');
    const saved = await content.saveAndComplete({ linkId: link.id, body: html, contentType: 'text/html', httpStatus: 200, finalUrl: 'https://d.test/', fetcher: 'direct_access' }, { attemptsMade: 1, lastAttemptAt: at });
    expect(saved).toMatchObject({ linkId: link.id, fetcher: 'simple_http', sizeBytes: html.byteLength });
    expect(Buffer.from((await content.get(saved!.id))!.body).toString()).toBe('<html><body>done</body></html>');
    expect(await db.prisma.link.findUniqueOrThrow({ where: { id: link.id } })).toMatchObject({
      status: 'done', riskLevel: 0, pausedUntil: null, fetcher: 'simple_http', lastErrorType: null, lastError: null, attemptCount: 3, lastAttemptAt: at,
    });
    // A link that is gone (pruned mid-fetch): nothing stored, no error.
    const missing = '00000000-0000-4000-8000-000000000000';
    expect(await content.saveAndComplete({ linkId: missing, body: html, httpStatus: 200, finalUrl: 'x', fetcher: 'simple_http' })).toBeNull();
    expect(await db.prisma.fetchedContent.count({ where: { linkId: missing } })).toBe(0);
  });

  it('LinkEvent, written by the trigger when saveAndComplete marks a link done', async () => {
    const link = await db.prisma.link.create({ data: { url: 'https://ev.test/', initialUrl: 'https://ev.test/', domain: 'ev.test', status: 'fetching' } });
    await new ContentStore({ prisma: db.prisma }).saveAndComplete({ linkId: link.id, body: new Uint8Array([1]), httpStatus: 200, finalUrl: 'https://ev.test/', fetcher: 'simple_http' });
    const [e] = await db.prisma.linkEvent.findMany({ where: { linkId: link.id } });
    expect(e).toMatchObject({ type: 'link.done', status: 'done', url: 'https://ev.test/', fetcher: 'simple_http', errorType: null, webhookAttempts: 0, deliveredAt: null, deadAt: null, streamedAt: null });
    expect(e!.id).toMatch(/^[0-9a-f-]{36}$/);
    const u = await db.prisma.linkEvent.update({ where: { id: e!.id }, data: { webhookAttempts: 2, lastError: 'x', deliveredAt: new Date(), leaseUntil: null, streamLeaseUntil: new Date(), retryingSince: new Date() } });
    expect(u.webhookAttempts).toBe(2);
    await db.prisma.linkEvent.delete({ where: { seq: e!.seq } });
  });

  it('translates an unreachable database into db_unavailable', async () => {
    const { createPrismaClient } = await import('./client.js');
    const { RouteStore: Routes } = await import('./routes/route-store.js');
    const dead = createPrismaClient('postgresql://postgres@127.0.0.1:1/none', { connectionTimeoutMs: 2000 });
    try {
      await expect(new Routes({ prisma: dead }).get('x.test')).rejects.toMatchObject({ code: 'db_unavailable', retryable: true });
    } finally {
      await dead.$disconnect();
    }
  });
});
