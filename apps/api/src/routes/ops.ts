import type { FastifyInstance } from 'fastify';
import { dependencyCheck } from '@crawler/core';
import type { Redis } from 'ioredis';
import { pingDatabase, type PrismaClient } from '@crawler/db';
import { probeRedisWrite } from '@crawler/queue';
import type { Registry } from 'prom-client';

export interface OpsRouteDeps {
  redis: Redis;
  /** The queue prefix of every shard: readiness writes a short-lived key under each, so every master holding one is asked. */
  redisPrefixes: readonly string[];
  prisma: PrismaClient;
  registry: Registry;
  /** How long each dependency may take to answer /readyz. @defaultValue 2000 */
  healthTimeoutMs?: number;
}

/**
 * GET /healthz (liveness: the process answers), GET /readyz (readiness: Redis takes a write under every shard's
 * prefix and the crawler's tables in Postgres answer, in parallel) and GET /metrics (Prometheus text).
 */
export function registerOpsRoutes(app: FastifyInstance, deps: OpsRouteDeps): void {
  const ms = deps.healthTimeoutMs ?? 2_000;
  // Liveness never follows Redis or Postgres: restarting the API does not mend either, and a restart policy on it
  // would only add a cold start to their outage.
  app.get('/healthz', async (_req, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }));
  const checkOptions = { timeoutMs: ms, logger: app.log };
  // A write, not a PING: a Redis full under maxmemory (noeviction) answers PONG but refuses every link posted.
  const checkRedis = dependencyCheck('redis', () => probeRedisWrite(deps.redis, deps.redisPrefixes), checkOptions);
  const checkPostgres = dependencyCheck('postgres', () => pingDatabase(deps.prisma), checkOptions);
  app.get('/readyz', async (_req, reply) => {
    const [redis, postgres] = await Promise.all([checkRedis(), checkPostgres()]);
    const ready = redis === 'ok' && postgres === 'ok';
    return reply
      .code(ready ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({ status: ready ? 'ok' : 'unavailable', checks: { redis, postgres } });
  });
  app.get('/metrics', async (_req, reply) => {
    const body = await deps.registry.metrics();
    return reply.header('content-type', deps.registry.contentType).send(body);
  });
}
