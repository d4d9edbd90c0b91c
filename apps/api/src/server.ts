import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { Redis } from 'ioredis';
import { Counter } from 'prom-client';
import { CrawlerError } from '@crawler/core';
import { NOT_MIGRATED_MESSAGE, isSchemaMissingError, type CrawlStore, type PrismaClient } from '@crawler/db';
import type { CrawlFrontier, DomainPauses, LinkRepo } from '@crawler/pipeline';
import type { JobQueues } from '@crawler/queue';
import type { PrometheusPipelineMetrics } from '@crawler/telemetry';
import type { ApiTimeouts, BullBoardCredentials } from './env.js';
import { registerLinkRoutes } from './routes/links.js';
import { registerBullBoard } from './routes/admin.js';
import { registerOpsRoutes } from './routes/ops.js';
import { registerPagesRoutes } from './routes/pages.js';
import { maskedRequestUrl, registerApiKeyAuth, serializeRequest } from './routes/auth.js';
import { registerCrawlRoutes } from './routes/crawls.js';
import { registerPausesRoutes } from './routes/pauses.js';

/** Everything the API needs, built by main.ts (or a test) and handed in. */
export interface ServerDeps {
  prisma: PrismaClient;
  /** A producer-grade ioredis client (fails fast instead of hanging a request). */
  redis: Redis;
  queues: JobQueues;
  links: LinkRepo;
  /** The route queue and every fetch queue: shown in Bull Board and measured on /metrics. */
  queueNames: string[];
  /** The crawler's Prometheus metrics; its registry is served at /metrics with queue depths read per scrape. */
  metrics: PrometheusPipelineMetrics;
  bullBoard: BullBoardCredentials | null;
  /** Bearer keys for every route but /healthz, /readyz and Bull Board; null leaves the API open (development). */
  apiKeys: string[] | null;
  /** Link-following crawls (POST/GET/DELETE /crawls); absent: those routes are not served. */
  crawls?: { frontier: Pick<CrawlFrontier, 'create'>; store: Pick<CrawlStore, 'view' | 'cancel'> };
  /** Paused domains (GET /pauses, DELETE /pauses/:domain); absent: those routes are not served. */
  pauses?: Pick<DomainPauses, 'list' | 'lift'>;
  /** @defaultValue 1000 */
  maxBatchSize?: number;
  /** Shortest revisit interval a request may ask for, seconds (REVISIT_MIN_INTERVAL_S). @defaultValue 60 */
  minRevisitIntervalSeconds?: number;
  /** Query parameters a posted URL loses before it becomes a link (CRAWL_TRACKING_PARAMS). @defaultValue core's DEFAULT_TRACKING_PARAMS */
  trackingParams?: readonly string[];
  /** @defaultValue 2000 */
  healthTimeoutMs?: number;
  /** Limits on slow clients (slow-loris): past them 408 and the connection closed. @defaultValue DEFAULT_API_TIMEOUTS */
  timeouts?: ApiTimeouts;
  /** Fastify's logger: a pino instance, or off. @defaultValue off */
  loggerInstance?: FastifyServerOptions['loggerInstance'];
}

/** The API's limits on slow clients when none are given: API_HEADERS_TIMEOUT_MS, API_REQUEST_TIMEOUT_MS, API_IDLE_TIMEOUT_MS's defaults. */
export const DEFAULT_API_TIMEOUTS: ApiTimeouts = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, idleTimeoutMs: 60_000 };

/** Routes polled by machines (liveness, readiness, Prometheus), logged at debug only. */
const QUIET_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * One line per request at info, once it is answered (method, path, status, time), where Fastify writes two
 * (incoming, completed); the probes and scrapes a platform sends every few seconds at debug, where they do not bury
 * what clients did (a failed readiness check logs its own warning). Errors keep Fastify's own line.
 */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, req: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (error) return super.requestCompleted(error, req, reply, metadata);
    const line = { req: { method: req.method, url: maskedRequestUrl(req.url) }, statusCode: reply.statusCode, responseTimeMs: Math.round(reply.elapsedTime) };
    if (QUIET_ROUTES.has(req.routeOptions.url ?? '')) req.log.debug(line, 'request');
    else req.log.info(line, 'request');
  }
}

/**
 * Build the API without listening: tests call `inject()` or `listen({ port: 0 })`, main.ts listens on PORT.
 * Routes: POST /links, GET /links/:id, GET /links/:id/content, GET /export, POST /crawls, GET and DELETE /crawls/:id,
 * GET /pauses, DELETE /pauses/:domain,
 * Bull Board at /admin/queues (basic auth),
 * /metrics, /healthz (liveness), /readyz (readiness); every route but the two probes and Bull Board asks for
 * `Authorization: Bearer <API key>` when keys are configured.
 */
export async function createServer(deps: ServerDeps): Promise<FastifyInstance> {
  const maxBatchSize = deps.maxBatchSize ?? 1_000;
  const bodyLimit = Math.max(1_048_576, maxBatchSize * 4_096);
  const timeouts = deps.timeouts ?? DEFAULT_API_TIMEOUTS;
  const app = Fastify({
    // Room for a full batch of long URLs; beyond it Fastify answers 413 before parsing.
    bodyLimit,
    // Fastify's default (0) lets a body that never ends hold its connection for good.
    requestTimeout: timeouts.requestTimeoutMs,
    connectionTimeout: timeouts.idleTimeoutMs,
    http: {
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      // Node enforces both timeouts when it sweeps its connections, every 30 s by default: a 10 s limit would hold
      // for up to 40. A sweep walks the open connections only.
      connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(timeouts.headersTimeoutMs / 4))),
    },
    // Its own request serializer: pino serializers of the instance given take precedence over Fastify's.
    ...(deps.loggerInstance ? { loggerInstance: deps.loggerInstance.child({}, { serializers: { req: serializeRequest } }) } : { logger: false }),
    logController: new OneLinePerRequest(),
  });

  app.setErrorHandler((err, req, reply) => {
    const status = (err as { statusCode?: number }).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      const code = (err as { code?: string }).code;
      // `curl -d` without a content type sends a form: say what to send, not Fastify's bare "Unsupported Media Type".
      // A producer posting its whole backlog at once: Fastify's "Request body is too large" names neither limit.
      if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        return reply.code(413).send({ error: 'batch_too_large', message: `at most ${maxBatchSize} links (or seeds) per request, in a body of at most ${bodyLimit} bytes: split the batch` });
      }
      const message = code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? `send the body as JSON with Content-Type: application/json (got ${JSON.stringify(req.headers['content-type'] ?? null)})`
        : err instanceof Error ? err.message : String(err);
      return reply.code(status).send({ error: code ?? 'bad_request', message });
    }
    req.log.error({ err }, 'request failed');
    // Not something a retry mends: say what to do.
    if (isSchemaMissingError(err)) return reply.code(503).send({ error: 'db_migration', message: NOT_MIGRATED_MESSAGE });
    // Our typed errors carry a stable code worth showing; anything else stays generic.
    const code = err instanceof CrawlerError ? err.code : 'internal_error';
    return reply.code(503).send({ error: code, message: 'the crawler could not handle this request now; try again' });
  });

  const registry = deps.metrics.registry;
  deps.metrics.collectQueueDepths(async () => {
    const out: Record<string, Record<string, number>> = {};
    Object.assign(out, await deps.queues.queueDepths(deps.queueNames, ['waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed']));
    return out;
  });
  deps.metrics.collectQueueWorkers(() => deps.queues.workerCounts(deps.queueNames));
  const linksCounter =
    (registry.getSingleMetric('crawler_api_links_total') as Counter<'outcome'> | undefined) ??
    new Counter({ name: 'crawler_api_links_total', help: 'Links submitted to POST /links, by outcome (accepted or rejected).', labelNames: ['outcome'], registers: [registry] });

  // Before any route: the hook it adds is global, so routes added later (here or by other modules) are covered too.
  if (deps.apiKeys) await registerApiKeyAuth(app, deps.apiKeys);
  registerLinkRoutes(app, { prisma: deps.prisma, links: deps.links, queues: deps.queues, maxBatchSize, linksCounter, minRevisitIntervalSeconds: deps.minRevisitIntervalSeconds, ...(deps.trackingParams ? { trackingParams: deps.trackingParams } : {}) });
  registerPagesRoutes(app, { prisma: deps.prisma });
  if (deps.crawls) registerCrawlRoutes(app, { ...deps.crawls, maxSeeds: maxBatchSize });
  if (deps.pauses) registerPausesRoutes(app, { pauses: deps.pauses });
  registerOpsRoutes(app, { redis: deps.redis, redisPrefixes: deps.queues.prefixes, prisma: deps.prisma, registry, healthTimeoutMs: deps.healthTimeoutMs });
  // Every shard's queues; with several shards each is named `s<i>/<queue>` on the board.
  const boardQueues = deps.queues.allShards().flatMap((shard) => deps.queueNames.map((n) => ({ queue: deps.queues.queue(n, shard), label: deps.queues.shards > 1 ? `s${shard}/` : '' })));
  await registerBullBoard(app, boardQueues, deps.bullBoard);
  return app;
}
