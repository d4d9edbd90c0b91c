/**
 * Revisits of pages whose markup differs at every response while their content does not: a CSRF `<meta>` token, a
 * script nonce and the request id in that script, a hidden form token, a cache-busting stylesheet URL. Three visits
 * under an adaptive schedule (the next two reopened with VersionStore.reopenForRevisit, as the scheduler's claim
 * does). Each response is stored as a version (an archive keeps the bytes the server sent), but only a change of what
 * the page shows is a change: for links.last_visit_changed, the schedule's interval and the change events.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startTestServer, staticArticle, type TestServer } from '@crawler/testkit';
import { VersionStore } from '@crawler/db';
import { startE2e, type E2eCrawler } from '../__fixtures__/e2e.js';

let crawler: E2eCrawler | undefined;
let server: TestServer | undefined;

afterEach(async () => {
  await crawler?.cleanup();
  await server?.close();
  crawler = undefined;
  server = undefined;
});

/** The visit being made: 1 (first), 2, 3. */
let pass = 1;
/** Responses served: every one gets tokens of its own. */
let served = 0;

/** An article whose volatile markup is new at every response; `paragraphs` is what a reader sees. */
function volatilePage(title: string, paragraphs: string[]): string {
  served += 1;
  const head = `<meta name="csrf-token" content="tok-${served}-${Math.random().toString(36).slice(2)}">`
    + `<link rel="stylesheet" href="/app.css?v=${served}">`
    + `<script nonce="n${served}">window.requestId = "req-${served}";</script>`;
  const form = `<form action="/subscribe" method="post"><input type="hidden" name="authenticity_token" value="form-${served}"><button>Subscribe</button></form>`;
  return staticArticle({ title, paragraphs, head }).replace('</main>', `</main>${form}`);
}

const TEXT = [
  'The ferry left at dawn, as it has every morning since the harbour was dredged, carrying the mail and three crates of oranges.',
  'By noon the fish market had sold out, and the gulls settled on the breakwater to wait for the evening boats.',
];
const EDITED = [TEXT[0]!, 'By noon the fish market had closed early: a storm was forecast, and the evening boats stayed in.'];

const ROUTES: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
  // The same article at every visit; only its tokens differ.
  '/tokens-only': (_req, res) => void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(volatilePage('Harbour news', TEXT)),
  // New tokens at every visit, and at the third a paragraph that reads differently.
  '/edited': (_req, res) => void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(volatilePage('Harbour weather', pass < 3 ? TEXT : EDITED)),
};

describe('end to end: revisits of pages whose markup changes at every response', () => {
  it('stores each response as a version, but only a change of the visible text is a change: schedule and events follow the text', async () => {
    server = await startTestServer(ROUTES);
    crawler = await startE2e('revisit_markup', { ROBOTS_ENABLED: 'false', FETCHERS: 'simple_http:2', EVENTS_UNCHANGED: 'true', SCHEDULER_INTERVAL_MS: '0' });
    pass = 1;
    const paths = Object.keys(ROUTES);
    const start = 600;
    const { accepted } = await crawler.runtime.enqueue(paths.map((p) => server!.url(p)), { revisit: { mode: 'adaptive', intervalSeconds: start, minSeconds: 60, maxSeconds: 86_400 } });
    crawler.runtime.startWorkers();
    await crawler.runtime.waitUntilIdle();
    const versions = new VersionStore({ prisma: crawler.db.prisma });
    const ids = accepted.map((a) => a.linkId);
    for (pass = 2; pass <= 3; pass++) {
      const reopened = await versions.reopenForRevisit(ids);
      expect(reopened).toHaveLength(ids.length);
      for (const r of reopened) await crawler.runtime.queues.enqueueRoute({ linkId: r.id, url: r.url, generation: r.generation });
      await crawler.runtime.waitUntilIdle();
    }
    const prisma = crawler.db.prisma;
    const idOf = new Map(accepted.map((a) => [new URL(a.url).pathname, a.linkId]));
    const stateOf = async (p: string) => {
      const id = idOf.get(p)!;
      const link = await prisma.link.findUniqueOrThrow({ where: { id } });
      const stored = await prisma.fetchedContent.findMany({ where: { linkId: id }, orderBy: { version: 'asc' }, select: { version: true, sha256: true, textSha256: true } });
      const visits = await prisma.pageVisit.findMany({ where: { linkId: id }, orderBy: { id: 'asc' } });
      const events = await prisma.linkEvent.findMany({ where: { linkId: id, type: { in: ['link.changed', 'link.unchanged'] } }, orderBy: { seq: 'asc' } });
      return { link, stored, visits: visits.map((v) => v.kind), events: events.map((e) => `${e.type}@${e.version}`) };
    };

    // Three responses, three byte-different bodies: three versions, whose text fingerprint is one and the same.
    const tokens = await stateOf('/tokens-only');
    expect(tokens.link.status).toBe('done');
    expect(tokens.stored.map((v) => v.version)).toEqual([1, 2, 3]);
    expect(new Set(tokens.stored.map((v) => v.sha256)).size).toBe(3);
    expect(tokens.stored[0]!.textSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(tokens.stored.map((v) => v.textSha256)).size).toBe(1);
    expect(tokens.visits).toEqual(['new', 'new', 'new']);
    // No change: no link.changed, each revisit announced as unchanged, and the interval grew twice (×1.4 each).
    expect(tokens.link.lastVisitChanged).toBe(false);
    expect(tokens.events).toEqual(['link.unchanged@2', 'link.unchanged@3']);
    expect(tokens.link.revisitNextS).toBeCloseTo(start * 1.4 * 1.4, 6);

    // The same tokens, then a paragraph that changed: the third visit is a change, and the interval shrinks for it.
    const edited = await stateOf('/edited');
    expect(edited.stored.map((v) => v.version)).toEqual([1, 2, 3]);
    expect(edited.stored[1]!.textSha256).toBe(edited.stored[0]!.textSha256);
    expect(edited.stored[2]!.textSha256).not.toBe(edited.stored[1]!.textSha256);
    expect(edited.link.lastVisitChanged).toBe(true);
    expect(edited.events).toEqual(['link.unchanged@2', 'link.changed@3']);
    expect(edited.link.revisitNextS).toBeCloseTo(start * 1.4 * 0.8, 6);
    expect(new TextDecoder().decode((await crawler.content.latestForLink(idOf.get('/edited')!))!.body)).toContain('a storm was forecast');
  }, 120_000);
});
