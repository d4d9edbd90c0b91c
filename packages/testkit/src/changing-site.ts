import type { IncomingMessage, ServerResponse } from 'node:http';
import { startTestServer, type RecordedRequest, type TestServer } from './server.js';
import { staticArticle } from './pages.js';

/** Which validator a page of a {@link ChangingSite} sends: an `ETag`, a `Last-Modified`, or none. */
export type PageValidator = 'etag' | 'last-modified' | 'none';

/** A loopback site whose pages change on command and honour conditional requests as real servers do. */
export interface ChangingSite {
  readonly server: TestServer;
  /** Absolute URL of a page. */
  url(path: string): string;
  /** Give a page a new revision: a new body, a new ETag, a later Last-Modified. */
  change(path: string): void;
  /** The page's revision (1 at start). */
  revision(path: string): number;
  /** Every request seen for a path, with its headers. */
  requests(path?: string): RecordedRequest[];
  /** What the site answered, per request, in order: `path status`. */
  answers(): string[];
  /** Absolute URL of the site's sitemap (`/sitemap.xml`, served when started with `sitemap: true`). */
  sitemapUrl(): string;
  close(): Promise<void>;
}

// A fixed origin of time for Last-Modified: revision n was modified n days after it.
const EPOCH_MS = Date.parse('2026-01-01T00:00:00Z');

/**
 * Start a site with the given pages. With `sitemap`, `/sitemap.xml` lists every page with a `<lastmod>`: the time
 * the site started, then the wall-clock time of the page's last change() (robots.txt is a 404, so a crawl finds the
 * sitemap at its default place). A page with `etag` answers `If-None-Match` carrying its current ETag with a 304;
 * one with `last-modified` answers an `If-Modified-Since` at or after its modification date with a 304; pages with
 * neither always send the body. Each revision's body differs (its number is in the text).
 */
export async function startChangingSite(pages: Record<string, PageValidator>, opts: { host?: string; sitemap?: boolean } = {}): Promise<ChangingSite> {
  const revisions = new Map(Object.keys(pages).map((p) => [p, 1]));
  const startedAt = new Date();
  const changedAt = new Map<string, Date>();
  const answers: string[] = [];
  const etagOf = (path: string) => `"${path.replace(/\W/g, '')}-r${revisions.get(path)}"`;
  const modifiedOf = (path: string) => new Date(EPOCH_MS + revisions.get(path)! * 86_400_000);
  const routes = Object.fromEntries(
    Object.entries(pages).map(([path, validator]) => [
      path,
      (req: IncomingMessage, res: ServerResponse) => {
        const headers: Record<string, string> = { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' };
        if (validator === 'etag') headers.etag = etagOf(path);
        if (validator === 'last-modified') headers['last-modified'] = modifiedOf(path).toUTCString();
        const inm = req.headers['if-none-match'];
        const ims = req.headers['if-modified-since'];
        const notModified =
          (validator === 'etag' && typeof inm === 'string' && inm.split(',').map((t) => t.trim()).includes(etagOf(path))) ||
          (validator === 'last-modified' && typeof ims === 'string' && !Number.isNaN(Date.parse(ims)) && Date.parse(ims) >= modifiedOf(path).getTime());
        if (notModified) {
          answers.push(`${path} 304`);
          res.writeHead(304, headers).end();
          return;
        }
        answers.push(`${path} 200`);
        const title = `Page ${path} revision ${revisions.get(path)}`;
        res.writeHead(200, headers).end(staticArticle({ title }));
      },
    ]),
  );
  if (opts.sitemap) {
    routes['/sitemap.xml'] = (_req: IncomingMessage, res: ServerResponse) => {
      const entries = Object.keys(pages).map((p) => `<url><loc>${server.url(p)}</loc><lastmod>${(changedAt.get(p) ?? startedAt).toISOString()}</lastmod></url>`);
      res.writeHead(200, { 'content-type': 'application/xml' }).end(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${entries.join('')}</urlset>`);
    };
  }
  const server = await startTestServer(routes, { host: opts.host });
  return {
    server,
    url: (path) => server.url(path),
    change(path) {
      const r = revisions.get(path);
      if (r === undefined) throw new Error(`no page ${path}`);
      revisions.set(path, r + 1);
      changedAt.set(path, new Date());
    },
    revision: (path) => revisions.get(path) ?? 0,
    requests: (path) => server.requests.filter((r) => path === undefined || r.path === path),
    answers: () => [...answers],
    sitemapUrl: () => server.url('/sitemap.xml'),
    close: () => server.close(),
  };
}
