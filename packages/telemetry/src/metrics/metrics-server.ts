import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { silentLogger, type Logger } from '@crawler/core';
import { metricsHandler } from './pipeline-metrics.js';

export interface MetricsServerOptions {
  registry: Registry;
  /** Port to listen on; 0 picks a free one (tests). */
  port: number;
  /** Interface to bind; a container scraped from its network needs 0.0.0.0. @defaultValue '127.0.0.1' */
  host?: string;
  /** @defaultValue silentLogger */
  logger?: Logger;
  /**
   * Readiness for GET /readyz: whether the process can take work now (its Redis and Postgres answer, it is not
   * shutting down). 200 with the checks when `ready`, 503 otherwise. Without it /readyz answers as /healthz.
   */
  readiness?: () => Promise<Readiness>;
  /**
   * How long a client may take to send a request's headers before it gets a 408 and its connection is closed, so
   * headers dripped a byte at a time (slow-loris) hold no socket. Node's own limit is 60 s, checked every 30 s. @defaultValue 10000
   */
  headersTimeoutMs?: number;
  /** How long a client may take to send a whole request (these are GETs: no body to wait for); at least headersTimeoutMs. @defaultValue 10000 */
  requestTimeoutMs?: number;
  /**
   * When set, GET /metrics answers only a request that sends `Authorization: Bearer <token>` (Prometheus'
   * `authorization: { credentials: … }`); others get a 401. /healthz and /readyz stay open for orchestrators' probes:
   * they say nothing but ok or fail.
   */
  bearerToken?: string;
}

/** What GET /readyz reports: each check's verdict (`ok`, `fail`: never a driver's words, which name hosts), and whether all passed. */
export interface Readiness {
  ready: boolean;
  checks: Record<string, string>;
}

export interface MetricsServer {
  /** The port actually bound. */
  readonly port: number;
  close(): Promise<void>;
}

/**
 * A bare HTTP server for the worker apps (router, fetcher) that have no web framework: GET /metrics, which Prometheus
 * scrapes where each worker runs; GET /healthz, liveness (the process answers: its event loop turns), for a restart
 * policy; GET /readyz, readiness (see `readiness`), for a load balancer or an orchestrator's rollout. Liveness never
 * depends on Redis or Postgres: workers ride out their outages, and restarting every worker of a fleet because
 * Postgres blinked would only add a cold start to the outage.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const render = metricsHandler(options.registry);
  const logger = options.logger ?? silentLogger;
  const json = (res: ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
  const headersTimeout = options.headersTimeoutMs ?? 10_000;
  const requestTimeout = Math.max(headersTimeout, options.requestTimeoutMs ?? 10_000);
  // Node checks both limits when it sweeps its connections, every 30 s by default: a quarter of the limit holds it.
  const limits = { headersTimeout, requestTimeout, connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(headersTimeout / 4))) };
  const server: Server = createServer(limits, (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/healthz') {
      json(res, 200, { status: 'ok' });
      return;
    }
    if (req.method === 'GET' && path === '/readyz') {
      if (!options.readiness) {
        json(res, 200, { status: 'ok' });
        return;
      }
      options.readiness().then(
        (r) => json(res, r.ready ? 200 : 503, { status: r.ready ? 'ok' : 'unavailable', checks: r.checks }),
        (err: unknown) => json(res, 503, { status: 'unavailable', checks: { readiness: (err as Error).message ?? String(err) } }),
      );
      return;
    }
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    if (options.bearerToken !== undefined && !hasBearer(req, options.bearerToken)) {
      res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer realm="metrics"' }).end('unauthorized');
      return;
    }
    render().then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
      (err: unknown) => {
        logger.error({ err }, 'rendering metrics failed');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  let closing: Promise<void> | undefined;
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}

/** Whether `req` carries `Authorization: Bearer <token>`, compared in constant time. */
function hasBearer(req: IncomingMessage, token: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  if (!m) return false;
  const given = Buffer.from(m[1]!);
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}
