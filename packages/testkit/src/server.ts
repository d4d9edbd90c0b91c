import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';

/** A route written as code: full control over the response (trickles, resets, streams). A returned promise is awaited. */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => unknown;

/** A route written as data: the common case of a fixed response, optionally delayed. */
export interface StaticRoute {
  /** @defaultValue 200 */
  status?: number;
  /** Response headers; `content-type` defaults to `text/html; charset=utf-8` when a body is given. */
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Wait this long before sending anything (a slow server, not a slow body). */
  delayMs?: number;
}

export type Route = RouteHandler | StaticRoute;

/**
 * Routes by path. A key matches the request's path with its query string first, then its pathname;
 * a key ending in `*` matches every path with that prefix; the key `*` alone catches everything else.
 */
export type Routes = Record<string, Route>;

/** One request the server saw, in arrival order. */
export interface RecordedRequest {
  method: string;
  /** Path with query string, as sent by the client. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Epoch milliseconds when the request arrived. */
  at: number;
}

export interface TestServerOptions {
  /**
   * Loopback address to bind. Each of 127.0.0.1, 127.0.0.2, … acts as its own host, so tests can have
   * several "domains" without DNS.
   * @defaultValue '127.0.0.1'
   */
  host?: string;
  /** Port to bind: a fixed one lets a test bring a "host that was down" back where links already point. @defaultValue 0 (ephemeral) */
  port?: number;
  /**
   * Serve HTTPS with this certificate (chain first to last, PEM) and key instead of plain HTTP: see `createTestCa`.
   * @defaultValue undefined (plain HTTP)
   */
  tls?: { cert: string; key: string };
}

export interface TestServer {
  /** `http://host:port` (`https://` with `tls`), no trailing slash. */
  readonly origin: string;
  readonly host: string;
  readonly port: number;
  /** Absolute URL for a path on this server (`url('/a')` → `http://127.0.0.1:1234/a`). */
  url(path?: string): string;
  /** Requests seen for a path (matched like routes: with query, then pathname), or all requests without one. */
  hits(path?: string): number;
  /** Every request seen since start or the last `resetHits()`. */
  readonly requests: RecordedRequest[];
  resetHits(): void;
  /** TCP connections accepted since start (with `tls`: handshakes begun, a client refusing the certificate included). */
  readonly connections: number;
  /** Add or replace a route while the server runs. */
  route(path: string, route: Route): void;
  /** Stop listening and destroy open connections (endless bodies would otherwise hold close() forever). */
  close(): Promise<void>;
}

/**
 * Start an HTTP server on a loopback address and an ephemeral port (port 0), serving `routes`.
 * Unknown paths get a 404. Handler errors become a 500 rather than crashing the test process.
 */
export async function startTestServer(routes: Routes, opts: TestServerOptions = {}): Promise<TestServer> {
  const host = opts.host ?? '127.0.0.1';
  const table: Routes = { ...routes };
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const path = req.url ?? '/';
    requests.push({ method: req.method ?? 'GET', path, headers: { ...req.headers }, at: Date.now() });
    const route = findRoute(table, path);
    if (!route) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    serveRoute(route, req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err));
    });
  };
  const server: Server = opts.tls ? createHttpsServer({ cert: opts.tls.cert, key: opts.tls.key }, handler) : createServer(handler);
  // The client side of these tests is what we measure; keep-alive should not make close() hang.
  server.keepAliveTimeout = 1000;
  server.on('connection', (s) => {
    connections += 1;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `${opts.tls ? 'https' : 'http'}://${host}:${port}`;
  let closed: Promise<void> | undefined;

  return {
    origin,
    host,
    port,
    requests,
    url: (path = '/') => origin + (path.startsWith('/') ? path : `/${path}`),
    hits: (path) => (path === undefined ? requests.length : requests.filter((r) => matchesPath(r.path, path)).length),
    resetHits: () => {
      requests.length = 0;
    },
    get connections() {
      return connections;
    },
    route: (path, route) => {
      table[path] = route;
    },
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

function pathnameOf(path: string): string {
  const q = path.indexOf('?');
  return q === -1 ? path : path.slice(0, q);
}

function matchesPath(requested: string, wanted: string): boolean {
  return requested === wanted || pathnameOf(requested) === wanted;
}

function findRoute(table: Routes, path: string): Route | undefined {
  const exact = table[path] ?? table[pathnameOf(path)];
  if (exact) return exact;
  let best: string | undefined;
  for (const key of Object.keys(table)) {
    if (key.length > 1 && key.endsWith('*') && path.startsWith(key.slice(0, -1))) {
      if (!best || key.length > best.length) best = key;
    }
  }
  return best ? table[best] : table['*'];
}

async function serveRoute(route: Route, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (typeof route === 'function') {
    await route(req, res);
    return;
  }
  if (route.delayMs) await sleep(route.delayMs);
  if (res.destroyed) return;
  const headers: Record<string, string> = { ...route.headers };
  const hasType = Object.keys(headers).some((h) => h.toLowerCase() === 'content-type');
  if (route.body !== undefined && !hasType) headers['content-type'] = 'text/html; charset=utf-8';
  res.writeHead(route.status ?? 200, headers);
  res.end(route.body);
}

/** Resolve after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
