import { createServer, type Server } from 'node:http';
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
}

export interface MetricsServer {
  /** The port actually bound. */
  readonly port: number;
  close(): Promise<void>;
}

/**
 * A bare HTTP server answering GET /metrics, for the worker apps (router, fetcher) that have no web framework:
 * Prometheus scrapes each worker where it runs.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const render = metricsHandler(options.registry);
  const logger = options.logger ?? silentLogger;
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '/').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
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
