/**
 * Revisits end to end: a loopback site whose pages change on command, with an ETag on some pages, a Last-Modified on
 * others and neither on the rest, crawled twice. The second pass reopens every link (VersionStore.reopenForRevisit,
 * as a refresh does) and must cost one request per page: conditional where the stored page had a validator, a 304
 * where it did not change, a new version and one link.changed event where it did.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startChangingSite, type ChangingSite } from '@crawler/testkit';
import { VersionStore } from '@crawler/db';
import { startE2e, type E2eCrawler } from '../__fixtures__/e2e.js';

let crawler: E2eCrawler | undefined;
let site: ChangingSite | undefined;

afterEach(async () => {
  await crawler?.cleanup();
  await site?.close();
  crawler = undefined;
  site = undefined;
});

const PAGES = { '/e1': 'etag', '/e2': 'etag', '/e3': 'etag', '/m1': 'last-modified', '/m2': 'last-modified', '/m3': 'last-modified', '/n1': 'none', '/n2': 'none', '/n3': 'none' } as const;
const CHANGED = new Set(['/e1', '/m1', '/n1']);

describe('end to end: a second pass over a site that changed in places', () => {
  it('makes one request per page, conditional where it can; 304s and identical bodies store nothing, changes are versions and events', async () => {
    site = await startChangingSite({ ...PAGES });
    crawler = await startE2e('revisit', { ROBOTS_ENABLED: 'false', FETCHERS: 'simple_http:3' });
    const paths = Object.keys(PAGES);
    const { accepted } = await crawler.runtime.enqueue(paths.map((p) => site!.url(p)));
    crawler.runtime.startWorkers();
    await crawler.runtime.waitUntilIdle();
    const idOf = new Map(accepted.map((a) => [new URL(a.url).pathname, a.linkId]));
    expect(site.answers().sort()).toEqual(paths.map((p) => `${p} 200`).sort());
    const first = site.requests().length;
    expect(first).toBe(paths.length);

    for (const p of CHANGED) site.change(p);
    const versions = new VersionStore({ prisma: crawler.db.prisma });
    const reopened = await versions.reopenForRevisit([...idOf.values()]);
    expect(reopened).toHaveLength(paths.length);
    for (const r of reopened) await crawler.runtime.queues.enqueueRoute({ linkId: r.id, url: r.url, generation: r.generation });
    await crawler.runtime.waitUntilIdle();

    // Exactly one request per page on the second pass, conditional exactly where the page sent a validator.
    const second = site.requests().slice(first);
    expect(second.map((r) => r.path).sort()).toEqual([...paths].sort());
    for (const r of second) {
      const kind = PAGES[r.path as keyof typeof PAGES];
      expect([r.path, r.headers['if-none-match'] !== undefined, r.headers['if-modified-since'] !== undefined]).toEqual([r.path, kind === 'etag', kind === 'last-modified']);
    }
    const answers = site.answers().slice(paths.length).sort();
    expect(answers).toEqual(paths.map((p) => `${p} ${CHANGED.has(p) || PAGES[p as keyof typeof PAGES] === 'none' ? 200 : 304}`).sort());

    const prisma = crawler.db.prisma;
    for (const p of paths) {
      const id = idOf.get(p)!;
      const link = await prisma.link.findUniqueOrThrow({ where: { id }, include: { attempts: { orderBy: { id: 'asc' } } } });
      const list = await versions.list(id);
      const visits = await prisma.pageVisit.findMany({ where: { linkId: id }, orderBy: { id: 'asc' } });
      const events = await prisma.linkEvent.findMany({ where: { linkId: id, type: 'link.changed' } });
      expect(link.status, p).toBe('done');
      // A revisit's attempt is ordinary evidence: plain HTTP worked, a 304 included.
      expect(link.attempts.map((a) => [a.fetcher, a.success]), p).toEqual([['simple_http', true], ['simple_http', true]]);
      if (CHANGED.has(p)) {
        expect(list.map((v) => v.version), p).toEqual([1, 2]);
        expect(link.lastVisitChanged, p).toBe(true);
        expect(events.map((e) => [e.oldSha256, e.newSha256, e.version]), p).toEqual([[list[0]!.sha256, list[1]!.sha256, 2]]);
        expect(new TextDecoder().decode((await crawler.content.latestForLink(id))!.body)).toContain(`Page ${p} revision 2`);
        expect(new TextDecoder().decode((await crawler.content.versionForLink(id, 1))!.body)).toContain(`Page ${p} revision 1`);
      } else {
        expect(list.map((v) => [v.version, v.unchangedVisits]), p).toEqual([[1, 1]]);
        expect(link.lastVisitChanged, p).toBe(false);
        expect(events, p).toEqual([]);
        const validator = PAGES[p as keyof typeof PAGES];
        expect(visits.map((v) => [v.kind, v.httpStatus]), p).toEqual([['new', 200], validator === 'none' ? ['identical', 200] : ['not_modified', 304]]);
        expect(link.attempts[1]!.httpStatus, p).toBe(validator === 'none' ? 200 : 304);
      }
    }
    expect(await prisma.linkEvent.count({ where: { type: 'link.changed' } })).toBe(CHANGED.size);
    expect(await prisma.linkEvent.count({ where: { type: 'link.unchanged' } })).toBe(0);
    expect(await prisma.fetchedContent.count()).toBe(paths.length + CHANGED.size);
  }, 120_000);
});
