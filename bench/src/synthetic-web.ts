import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pageTargetBytes, renderPage } from './page-corpus.js';

/** Options of {@link startSyntheticWeb}. */
export interface SyntheticWebOptions {
  /** Number of static article pages, spread round-robin over the domains. */
  pages: number;
  /**
   * Number of domains. Each is its own server on its own loopback address (127.0.0.10, .11, …, then 127.0.1.0, …)
   * so the crawler sees distinct hosts, as it would on the web.
   * @defaultValue 4
   */
  domains?: number;
  /** Fixed delay before every response, in milliseconds, to imitate network distance. @defaultValue 0 */
  latencyMs?: number;
  /** Same-site navigation links per page. @defaultValue 12 */
  navLinks?: number;
  /** Related-story links per page (about one in four points at another domain). @defaultValue 20 */
  relatedLinks?: number;
  /** Where the addresses start: domain d listens on {@link loopbackHost}(firstHostOctet + d). @defaultValue 10 */
  firstHostOctet?: number;
}

/** Request counts seen by the synthetic web since start or the last {@link SyntheticWeb.resetCounts}. */
export interface RequestStats {
  /** Every request, whatever the path. */
  totalRequests: number;
  /** Requests for article pages (`/story/<n>`), the pages a crawl is asked to fetch. */
  pageRequests: number;
  /** Distinct article pages requested at least once. */
  distinctPages: number;
  /** Highest number of requests any single article page received. */
  maxRequestsPerPage: number;
  /** Requests for `/robots.txt`. */
  robotsRequests: number;
  /** Requests for anything else (home, static assets, unknown paths). */
  otherRequests: number;
  /** Requests by HTTP method (a HEAD probe shows up here). */
  byMethod: Record<string, number>;
}

/** A running synthetic web. */
export interface SyntheticWeb {
  /** One origin per domain, e.g. `http://127.0.0.10:40123`. */
  origins: string[];
  /** The absolute URL of every article page, in page-index order. */
  urls: string[];
  /** Counts since start or the last reset. */
  stats(): RequestStats;
  /** Requests received by one URL (path and query must match exactly). */
  requestsFor(url: string): number;
  resetCounts(): void;
  close(): Promise<void>;
}

const STORY_PREFIX = '/story/';

/** The n-th loopback address counted from 127.0.0.0: 10 → 127.0.0.10, 256 → 127.0.1.0 (all of 127/8 is loopback). */
export function loopbackHost(n: number): string {
  if (!Number.isInteger(n) || n < 1 || n >= 1 << 24) throw new RangeError(`loopback host index out of range: ${n}`);
  return `127.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

/** The absolute URLs of `pages` article pages spread round-robin over `origins`. */
export function listPageUrls(origins: string[], pages: number): string[] {
  return Array.from({ length: pages }, (_, i) => `${origins[i % origins.length]}${STORY_PREFIX}${i}`);
}

function pageIndexOf(pathname: string, domain: number, domains: number, pages: number): number | null {
  if (!pathname.startsWith(STORY_PREFIX)) return null;
  const rest = pathname.slice(STORY_PREFIX.length);
  if (!/^\d+$/.test(rest)) return null;
  const index = Number(rest);
  // A page exists only on the domain it was assigned to, like a real site's URL space.
  return index < pages && index % domains === domain ? index : null;
}

/** Pick `count` page indexes deterministically from `index`, optionally confined to one domain. */
function neighbourIndexes(index: number, count: number, pages: number, stride: number, domain: number | null, domains: number): number[] {
  const out: number[] = [];
  for (let k = 1; out.length < count && k <= count * 4; k++) {
    let j = (index + k * stride) % pages;
    if (domain !== null) j = j - (j % domains) + domain;
    if (j < pages && j !== index) out.push(j);
  }
  return out;
}

/** Start the synthetic web: one HTTP server per domain on loopback, ephemeral ports. */
export async function startSyntheticWeb(options: SyntheticWebOptions): Promise<SyntheticWeb> {
  const domains = Math.max(1, options.domains ?? 4);
  const pages = options.pages;
  const latencyMs = options.latencyMs ?? 0;
  const navLinks = options.navLinks ?? 12;
  const relatedLinks = options.relatedLinks ?? 20;
  const firstOctet = options.firstHostOctet ?? 10;

  const byUrl = new Map<string, number>();
  const byMethod: Record<string, number> = {};
  let totalRequests = 0;
  let pageRequests = 0;
  let robotsRequests = 0;
  let otherRequests = 0;
  let maxRequestsPerPage = 0;
  let distinctPages = 0;
  const origins: string[] = [];

  const htmlOf = (index: number, domain: number): string => {
    const nav = neighbourIndexes(index, navLinks, pages, 7, domain, domains).map((j) => `${STORY_PREFIX}${j}`);
    const related = neighbourIndexes(index, relatedLinks, pages, 13, null, domains).map((j) => {
      const d = j % domains;
      return d === domain ? `${STORY_PREFIX}${j}` : `${origins[d]}${STORY_PREFIX}${j}`;
    });
    return renderPage({ index, targetBytes: pageTargetBytes(index), navHrefs: nav, relatedHrefs: related });
  };

  const handle = (domain: number, req: IncomingMessage, res: ServerResponse): void => {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const pathname = path.split('?')[0]!;
    totalRequests++;
    byMethod[method] = (byMethod[method] ?? 0) + 1;
    const key = `${origins[domain]}${path}`;
    const index = pageIndexOf(pathname, domain, domains, pages);
    if (index !== null) {
      pageRequests++;
      const n = (byUrl.get(key) ?? 0) + 1;
      byUrl.set(key, n);
      if (n === 1) distinctPages++;
      if (n > maxRequestsPerPage) maxRequestsPerPage = n;
    } else {
      byUrl.set(key, (byUrl.get(key) ?? 0) + 1);
      if (pathname === '/robots.txt') robotsRequests++;
      else otherRequests++;
    }
    const send = (): void => {
      let status = 200;
      let type = 'text/html; charset=utf-8';
      let body: string;
      if (index !== null) body = htmlOf(index, domain);
      else if (pathname === '/robots.txt') {
        type = 'text/plain; charset=utf-8';
        body = 'User-agent: *\nAllow: /\n';
      } else if (pathname === '/') body = htmlOf(domain % Math.max(1, pages), domain);
      else if (pathname.startsWith('/static/')) {
        type = pathname.endsWith('.css') ? 'text/css' : 'application/javascript';
        body = '/* static asset */\n';
      } else {
        status = 404;
        body = '<!doctype html><title>Not found</title><h1>Not found</h1>';
      }
      const bytes = Buffer.from(body, 'utf8');
      res.writeHead(status, { 'content-type': type, 'content-length': bytes.length, 'cache-control': 'max-age=600' });
      res.end(method === 'HEAD' ? undefined : bytes);
    };
    if (latencyMs > 0) setTimeout(send, latencyMs);
    else send();
  };

  const servers: Server[] = [];
  for (let d = 0; d < domains; d++) {
    const host = loopbackHost(firstOctet + d);
    const server = createServer((req, res) => handle(d, req, res));
    // Crawlers keep connections open between pages; outlast their idle timeouts so reuse is measured, not churn.
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => resolve());
    });
    servers.push(server);
    origins.push(`http://${host}:${(server.address() as AddressInfo).port}`);
  }
  const urls = listPageUrls(origins, pages);

  return {
    origins,
    urls,
    stats: () => ({
      totalRequests,
      pageRequests,
      distinctPages,
      maxRequestsPerPage,
      robotsRequests,
      otherRequests,
      byMethod: { ...byMethod },
    }),
    requestsFor: (url) => byUrl.get(url) ?? 0,
    resetCounts: () => {
      byUrl.clear();
      for (const k of Object.keys(byMethod)) delete byMethod[k];
      totalRequests = pageRequests = robotsRequests = otherRequests = maxRequestsPerPage = distinctPages = 0;
    },
    close: async () => {
      await Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((resolve) => {
              s.close(() => resolve());
              s.closeAllConnections();
            }),
        ),
      );
    },
  };
}
