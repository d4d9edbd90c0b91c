import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Options for {@link startRevisitSite}. */
export interface RevisitSiteOptions {
  /** Pages whose body never changes. */
  staticPages?: string[];
  /** Pages whose body is new at every request (a counter in it): every visit finds a new version. */
  alwaysChanging?: string[];
  /** Loopback address. @defaultValue '127.0.0.1' */
  host?: string;
}

/**
 * A loopback site whose pages change on command, for revisit tests: `/` links to every page, `/p/<name>` is a page
 * of its own version, `change(name)` makes a new version, `add(name)` adds a page linked from `/`. Counts requests
 * per path (robots.txt and favicon aside).
 */
export interface RevisitSite {
  origin: string;
  /** `${origin}/p/<name>` */
  url(name: string): string;
  /** Every page's URL (without `/`). */
  pages(): string[];
  change(name: string): void;
  add(name: string, opts?: { alwaysChanging?: boolean }): void;
  /** Requests per path so far. */
  requests(): Map<string, number>;
  requestsOf(name: string): number;
  resetCounts(): void;
  close(): Promise<void>;
}

export async function startRevisitSite(opts: RevisitSiteOptions = {}): Promise<RevisitSite> {
  const versions = new Map<string, number>();
  const changing = new Set(opts.alwaysChanging ?? []);
  for (const p of [...(opts.staticPages ?? []), ...changing]) versions.set(p, 1);
  const counts = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/robots.txt') return res.writeHead(404).end();
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const page = (title: string, text: string, links: string[] = []): void => {
      // Enough text that the probe counts the page as plain static HTML (its body is reused, not fetched again).
      const body = `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${text}</p>${'<p>Plain server-rendered text for a revisit test, long enough to read as a real page.</p>'.repeat(8)}${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</main></body></html>`;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
    };
    if (path === '/') return page('index', 'all pages', [...versions.keys()].map((n) => `/p/${n}`));
    const name = path.startsWith('/p/') ? decodeURIComponent(path.slice(3)) : null;
    if (name === null || !versions.has(name)) return res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    if (changing.has(name)) versions.set(name, versions.get(name)! + 1);
    return page(name, `version ${versions.get(name)}`);
  });
  await new Promise<void>((resolve) => server.listen(0, opts.host ?? '127.0.0.1', resolve));
  const { address, port } = server.address() as AddressInfo;
  const origin = `http://${address}:${port}`;
  return {
    origin,
    url: (name) => `${origin}/p/${encodeURIComponent(name)}`,
    pages: () => [...versions.keys()].map((n) => `${origin}/p/${encodeURIComponent(n)}`),
    change(name) {
      versions.set(name, (versions.get(name) ?? 0) + 1);
    },
    add(name, o = {}) {
      versions.set(name, 1);
      if (o.alwaysChanging) changing.add(name);
    },
    requests: () => new Map(counts),
    requestsOf: (name) => counts.get(`/p/${encodeURIComponent(name)}`) ?? 0,
    resetCounts: () => counts.clear(),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
