import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

/** Options of {@link startSiteGraph}. */
export interface SiteGraphOptions {
  /** Tree pages (`/p/<i>`) per crawled host. */
  pagesPerHost: number;
  /** Hosts a crawl from the seeds may visit (one seed each). @defaultValue 2 */
  hosts?: number;
  /** Off-site hosts every page links to; a correct crawl never sends them a request. @defaultValue 1 */
  offSiteHosts?: number;
  /** Loopback address of the first host; the others follow (…10, …11, …). @defaultValue '127.0.1.10' */
  firstHost?: string;
  /** Extra bytes of prose per page, so the router's probe body is reusable and pages look like pages. @defaultValue 1500 */
  paddingBytes?: number;
  /** Pages listed only in sitemaps, per host. @defaultValue 12 */
  orphansPerHost?: number;
}

/** A request the graph served. */
export interface GraphRequest {
  origin: string;
  /** Path and query as requested. */
  path: string;
}

/** A running site graph. */
export interface SiteGraph {
  /** The crawled hosts' origins; `seeds` are their home pages. */
  origins: string[];
  seeds: string[];
  offSiteOrigins: string[];
  /**
   * The pages (frontier keys: origin + path, no query, no trailing slash but the root's) a correct crawl from the seeds
   * fetches, each with its depth, computed from the generator's own edge lists (not by parsing its HTML).
   */
  expected(opts?: { maxDepth?: number; sitemaps?: boolean }): Map<string, number>;
  /** Every request, in order. */
  requests(): GraphRequest[];
  /** Requests per page key, robots.txt and sitemaps excluded. */
  pageRequests(): Map<string, number>;
  /** Requests to off-site hosts. */
  offSiteRequests(): number;
  /** Requests for scripts, styles and images (never pages). */
  resourceRequests(): number;
  resetCounts(): void;
  close(): Promise<void>;
}

/** The n-th address after `first` in its /24 (tests use few hosts). */
function hostAt(first: string, n: number): string {
  const parts = first.split('.').map(Number);
  return `${parts[0]}.${parts[1]}.${parts[2]}.${parts[3]! + n}`;
}

const PROSE = 'The committee met on Tuesday to review the quarterly figures and the plans for the coming season. ';

/**
 * A generated web for link-following tests and benchmarks. Each crawled host has a binary tree of pages
 * (`/p/i` links `/p/2i+1` and `/p/2i+2`) with cycles (links back to the parent, the root and the home page), and
 * on many pages: the same child written with a fragment, tracking parameters or a trailing slash, the other host's
 * home, off-site links, a `rel=nofollow` link to `/secret/i`, `<link rel=next>`, images, scripts and styles, a page
 * whose `rel=canonical` names `/canon/i` (linked from it and nowhere else), a PDF and a link that answers 404.
 * The first host's robots.txt names a sitemap index with a plain and a gzipped child; the other hosts have no
 * Sitemap line and serve `/sitemap.xml`; they list `/orphan/k` pages no page links to. Every tree edge goes one
 * level down, and every other in-scope link points at a page already discovered, so the depth at which a crawl first
 * finds a page is its tree depth whatever the order of fetches.
 */
export async function startSiteGraph(opts: SiteGraphOptions): Promise<SiteGraph> {
  const n = opts.pagesPerHost;
  const hostCount = opts.hosts ?? 2;
  const offCount = opts.offSiteHosts ?? 1;
  const first = opts.firstHost ?? '127.0.1.10';
  const padding = PROSE.repeat(Math.ceil((opts.paddingBytes ?? 1500) / PROSE.length));
  const orphans = opts.orphansPerHost ?? 12;
  const log: GraphRequest[] = [];
  const servers: Server[] = [];
  const origins: string[] = [];
  const offSiteOrigins: string[] = [];

  const listen = async (host: string, handler: (origin: string, req: IncomingMessage, res: ServerResponse) => void): Promise<string> => {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => resolve());
    });
    const origin = `http://${host}:${(server.address() as AddressInfo).port}`;
    server.on('request', (req, res) => {
      log.push({ origin, path: req.url ?? '/' });
      handler(origin, req, res);
    });
    servers.push(server);
    return origin;
  };

  const html = (res: ServerResponse, body: string, status = 200): void => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body);
  };
  const pageHtml = (title: string, head: string, body: string): string =>
    `<!doctype html><html><head><title>${title}</title><link rel="stylesheet" href="/css/site.css"><script src="/js/app.js"></script>${head}</head>` +
    `<body><header><a href="/">Home</a></header><main><h1>${title}</h1><p>${padding}</p>${body}</main></body></html>`;

  const treePage = (h: number, origin: string, i: number): string => {
    const links: string[] = [];
    for (const c of [2 * i + 1, 2 * i + 2]) {
      if (c >= n) continue;
      // The same child, written four ways: one page to the crawl.
      links.push(`<a href="/p/${c}">child ${c}</a>`, `<a href="/p/${c}#comments">comments</a>`, `<a href="/p/${c}?utm_source=feed&amp;utm_medium=rss&amp;fbclid=XyZ">tracked</a>`, `<a href="/p/${c}/">slash</a>`);
    }
    if (2 * i + 1 < n) links.push(`<link rel="next" href="/p/${2 * i + 1}">`);
    if (i > 0) links.push(`<a href="/p/${(i - 1) >> 1}">parent</a>`, '<a href="/p/0">top</a>');
    links.push(`<a href="${origins[(h + 1) % origins.length]}/">elsewhere</a>`);
    for (const off of offSiteOrigins) links.push(`<a href="${off}/story/${i}">partner</a>`, `<iframe src="${off}/embed/${i}"></iframe>`);
    links.push(`<a rel="nofollow" href="/secret/${i}">login</a>`, `<img src="/img/${i}.png" alt="">`, '<a href="mailto:desk@example.com">mail</a>', '<a href="javascript:void(0)">menu</a>');
    if (i % 50 === 7) links.push(`<a href="/dup/${i}">print view</a>`);
    if (i % 97 === 5) links.push(`<a href="/missing/${i}">old link</a>`);
    if (i % 200 === 3) links.push(`<a href="/doc/${i}.pdf">report</a>`);
    return pageHtml(`${origin} page ${i}`, '', links.join('\n'));
  };

  const handle = (h: number) => (origin: string, req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').replace(/[?#].*$/, '');
    const m = /^\/(p|dup|canon|secret|orphan|missing)\/(\d+)\/?$/.exec(path);
    if (path === '/robots.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`User-agent: *\nAllow: /\n${h === 0 ? `Sitemap: ${origin}/sitemap_index.xml\n` : ''}`);
    } else if (path === '/sitemap_index.xml' && h === 0) {
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${origin}/sitemaps/a.xml</loc></sitemap><sitemap><loc>${origin}/sitemaps/b.xml.gz</loc></sitemap></sitemapindex>`);
    } else if ((path === '/sitemaps/a.xml' && h === 0) || (path === '/sitemap.xml' && h > 0)) {
      const ks = Array.from({ length: orphans }, (_, k) => k).filter((k) => h > 0 || k % 2 === 0);
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${ks.map((k) => `<url><loc>${origin}/orphan/${k}</loc></url>`).join('')}<url><loc>${origin}/</loc></url></urlset>`);
    } else if (path === '/sitemaps/b.xml.gz' && h === 0) {
      const ks = Array.from({ length: orphans }, (_, k) => k).filter((k) => k % 2 === 1);
      res.writeHead(200, { 'content-type': 'application/gzip' });
      res.end(gzipSync(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${ks.map((k) => `<url><loc>${origin}/orphan/${k}?utm_campaign=sm</loc></url>`).join('')}</urlset>`));
    } else if (path === '/') {
      html(res, pageHtml(`${origin} home`, '', `<a href="/p/0">start</a><a href="/p/0?utm_source=home">start again</a><a href="${origins[(h + 1) % origins.length]}/">elsewhere</a>${offSiteOrigins.map((o) => `<a href="${o}/">partner</a>`).join('')}`));
    } else if (m && m[1] === 'p' && Number(m[2]) < n) {
      html(res, treePage(h, origin, Number(m[2])));
    } else if (m && m[1] === 'dup') {
      html(res, pageHtml('print view', `<link rel="canonical" href="/canon/${m[2]}">`, `<a href="/canon/${m[2]}">the article</a>`));
    } else if (m && (m[1] === 'canon' || m[1] === 'secret')) {
      html(res, pageHtml(m[1], '', '<a href="/">home</a>'));
    } else if (m && m[1] === 'orphan') {
      html(res, pageHtml(`orphan ${m[2]}`, '', '<a href="/">home</a>'));
    } else if (/^\/doc\/\d+\.pdf$/.test(path)) {
      res.writeHead(200, { 'content-type': 'application/pdf' });
      res.end(`%PDF-1.4\n${'0'.repeat(2000)}\n%%EOF`);
    } else {
      html(res, pageHtml('Not found', '', ''), 404);
    }
  };

  try {
    // Off-site hosts come first in the address range only to get their origins before pages name them.
    for (let k = 0; k < offCount; k++) offSiteOrigins.push(await listen(hostAt(first, hostCount + k), (_o, _req, res) => html(res, pageHtml('partner', '', ''))));
    for (let h = 0; h < hostCount; h++) origins.push(await listen(hostAt(first, h), handle(h)));
  } catch (err) {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    throw err;
  }

  const keyOf = (origin: string, path: string): string => {
    let p = path.replace(/[?#].*$/, '');
    if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
    return `${origin}${p}`;
  };

  return {
    origins,
    seeds: origins.map((o) => `${o}/`),
    offSiteOrigins,
    expected(o = {}) {
      const out = new Map<string, number>();
      const add = (key: string, depth: number): void => {
        if (o.maxDepth !== undefined && depth > o.maxDepth) return;
        if (!out.has(key) || out.get(key)! > depth) out.set(key, depth);
      };
      origins.forEach((origin) => {
        add(`${origin}/`, 0);
        if (n > 0) add(`${origin}/p/0`, 1);
        for (let i = 0; i < n; i++) {
          // Tree depth: the root /p/0 is one link from home.
          const d = Math.floor(Math.log2(i + 1)) + 1;
          if (i > 0) add(`${origin}/p/${i}`, d);
          if (i % 50 === 7) add(`${origin}/dup/${i}`, d + 1);
          if (i % 97 === 5) add(`${origin}/missing/${i}`, d + 1);
          if (i % 200 === 3) add(`${origin}/doc/${i}.pdf`, d + 1);
        }
      });
      if (o.sitemaps) origins.forEach((origin) => {
        for (let k = 0; k < orphans; k++) add(`${origin}/orphan/${k}`, 0);
      });
      return out;
    },
    requests: () => [...log],
    pageRequests() {
      const out = new Map<string, number>();
      for (const r of log) {
        if (!origins.includes(r.origin) || /^\/(robots\.txt|sitemap|css\/|js\/|img\/)/.test(r.path)) continue;
        const key = keyOf(r.origin, r.path);
        out.set(key, (out.get(key) ?? 0) + 1);
      }
      return out;
    },
    offSiteRequests: () => log.filter((r) => offSiteOrigins.includes(r.origin)).length,
    resourceRequests: () => log.filter((r) => /^\/(css|js|img)\//.test(r.path)).length,
    resetCounts: () => void log.splice(0),
    close: () => Promise.all(servers.map((s) => new Promise<void>((r) => { s.closeAllConnections(); s.close(() => r()); }))).then(() => undefined),
  };
}
