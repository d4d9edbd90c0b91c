/**
 * Revisits of servers that bend HTTP's caching rules the way real ones do, each page on its own loopback host (a wall
 * on one must not pause the others). Three visits of every page: the first stores it, the next two are revisits
 * (VersionStore.reopenForRevisit, as the scheduler's claim does). What must hold: a page that changed is seen to
 * change (no validator makes a revisit 304 for good), validators follow what the server sends now, and a wall, a rate
 * limit or an error at revisit never replaces the stored page.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { challengePage, startTestServer, staticArticle, type TestServer } from '@crawler/testkit';
import { VersionStore } from '@crawler/db';
import { startE2e, type E2eCrawler } from '../__fixtures__/e2e.js';

let crawler: E2eCrawler | undefined;
const servers: TestServer[] = [];

afterEach(async () => {
  await crawler?.cleanup();
  crawler = undefined;
  for (const s of servers.splice(0)) await s.close();
});

/** The visit being made: 1 (first), 2, 3. */
let pass = 1;
let served = 0;
const HTML = { 'content-type': 'text/html; charset=utf-8' };
const page = (title: string) => staticArticle({ title });
const header = (req: IncomingMessage, name: string) => (typeof req.headers[name] === 'string' ? (req.headers[name] as string) : undefined);

// A year from now: a server whose clock (or file times) are wrong. Frameworks that answer If-Modified-Since with
// "not modified unless Last-Modified is later" (express's `fresh`, Rails, Django's ConditionalGetMiddleware) then
// answer 304 to that date until it has passed, whatever the page became.
const FUTURE = new Date(Date.now() + 365 * 86_400_000).toUTCString();
// The sane date the server gives from the second visit on: one value, so the third visit's 304 does not hang on the
// second visit and the third falling within the same second (HTTP dates count whole seconds).
const PAST = new Date(Date.now() - 60_000).toUTCString();

const ROUTES: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
  '/future-last-modified': (req, res) => {
    const modified = pass === 1 ? FUTURE : PAST;
    const since = Date.parse(header(req, 'if-modified-since') ?? '');
    if (!Number.isNaN(since) && Date.parse(modified) <= since) return void res.writeHead(304, { 'last-modified': modified }).end();
    res.writeHead(200, { ...HTML, 'last-modified': modified }).end(page(`future, visit ${pass}`));
  },
  '/unparseable-last-modified': (_req, res) => {
    res.writeHead(200, { ...HTML, 'last-modified': 'yesterday, more or less' }).end(page('unparseable'));
  },
  // A redeploy changes every ETag (nginx's is mtime-size) while the bodies stay the same; the server answers 304 to
  // its current ETag only.
  '/redeployed-etag': (req, res) => {
    const etag = pass === 1 ? '"5f1e-a1"' : '"6a2b-a1"';
    if (header(req, 'if-none-match') === etag) return void res.writeHead(304, { etag }).end();
    res.writeHead(200, { ...HTML, etag }).end(page('redeployed'));
  },
  // A load balancer's backends each make their own ETag: a new one on every response, the same body.
  '/rolling-etag': (_req, res) => {
    served += 1;
    res.writeHead(200, { ...HTML, etag: `"backend-${served}"` }).end(page('rolling'));
  },
  '/wall-at-revisit': (_req, res) => {
    if (pass > 1) return void res.writeHead(403, HTML).end(challengePage('cloudflare'));
    res.writeHead(200, HTML).end(page('wall'));
  },
  '/rate-limited-at-revisit': (_req, res) => {
    if (pass > 1) return void res.writeHead(429, { ...HTML, 'retry-after': '3600' }).end('<h1>Too many requests</h1>');
    res.writeHead(200, HTML).end(page('rate limited'));
  },
  '/error-at-revisit': (_req, res) => {
    if (pass > 1) return void res.writeHead(500, HTML).end('<h1>Internal error</h1>');
    res.writeHead(200, HTML).end(page('error'));
  },
};

describe('end to end: revisits of servers that bend the caching rules', () => {
  it('sees a page change behind a bad validator, follows validators the server changed, and keeps the stored page through walls and errors', async () => {
    const paths = Object.keys(ROUTES);
    const hostOf = new Map<string, TestServer>();
    for (const [i, p] of paths.entries()) {
      const s = await startTestServer(ROUTES, { host: `127.0.0.${60 + i}` });
      servers.push(s);
      hostOf.set(p, s);
    }
    crawler = await startE2e('revisit_hostile', { ROBOTS_ENABLED: 'false', FETCHERS: 'simple_http:4', MAX_ATTEMPTS: '2' });
    pass = 1;
    const { accepted } = await crawler.runtime.enqueue(paths.map((p) => hostOf.get(p)!.url(p)));
    crawler.runtime.startWorkers();
    await crawler.runtime.waitUntilIdle();
    const versions = new VersionStore({ prisma: crawler.db.prisma });
    for (pass = 2; pass <= 3; pass++) {
      // A link still paused by its wall or rate limit is not finished: only finished links are reopened.
      const reopened = await versions.reopenForRevisit(accepted.map((a) => a.linkId));
      for (const r of reopened) await crawler.runtime.queues.enqueueRoute({ linkId: r.id, url: r.url, generation: r.generation });
      await crawler.runtime.waitUntilIdle();
    }
    const idOf = new Map(accepted.map((a) => [new URL(a.url).pathname, a.linkId]));
    const sent = (p: string, name: string) => hostOf.get(p)!.requests.filter((r) => r.path === p).map((r) => r.headers[name] ?? null);
    const latestText = async (p: string) => new TextDecoder().decode((await crawler!.content.latestForLink(idOf.get(p)!))!.body);
    const kinds = async (p: string) => (await crawler!.db.prisma.pageVisit.findMany({ where: { linkId: idOf.get(p)! }, orderBy: { id: 'asc' } })).map((v) => `${v.kind}:${v.httpStatus}`);

    // A Last-Modified later than the response that carried it is no validator: asked with it, such a server says 304
    // for a year while the page changes underneath.
    expect(sent('/future-last-modified', 'if-modified-since')[1]).toBeNull();
    expect(await kinds('/future-last-modified')).toEqual(['new:200', 'new:200', 'not_modified:304']);
    expect(await latestText('/future-last-modified')).toContain('future, visit 2');

    // A Last-Modified that is no date is not sent back as one.
    expect(sent('/unparseable-last-modified', 'if-modified-since')).toEqual([null, null, null]);

    // After a redeploy the stored ETag never matches again: the revisit that found the same body under a new ETag
    // makes that ETag the one to ask with, and the next revisit is a 304 again instead of a full download for good.
    expect(sent('/redeployed-etag', 'if-none-match')).toEqual([null, '"5f1e-a1"', '"6a2b-a1"']);
    expect(await kinds('/redeployed-etag')).toEqual(['new:200', 'identical:200', 'not_modified:304']);

    // A new ETag on every response with the same body is one version, however many visits.
    expect((await versions.list(idOf.get('/rolling-etag')!)).map((v) => v.version)).toEqual([1]);
    expect(await kinds('/rolling-etag')).toEqual(['new:200', 'identical:200', 'identical:200']);

    // A wall, a rate limit or a server error at revisit stores nothing: the page stored before is still the page.
    for (const [p, title] of [['/wall-at-revisit', 'wall'], ['/rate-limited-at-revisit', 'rate limited'], ['/error-at-revisit', 'error']] as const) {
      expect((await versions.list(idOf.get(p)!)).map((v) => [v.version, v.httpStatus]), p).toEqual([[1, 200]]);
      expect(await latestText(p), p).toContain(title);
    }
  }, 120_000);
});
