import type { FastifyInstance } from 'fastify';
import { checkDependency } from '@crawler/core';
import type { Redis } from 'ioredis';
import { pingDatabase, type PrismaClient } from '@crawler/db';
import type { Registry } from 'prom-client';

export interface OpsRouteDeps {
  redis: Redis;
  prisma: PrismaClient;
  registry: Registry;
  /** How long each dependency may take to answer /healthz. @defaultValue 2000 */
  healthTimeoutMs?: number;
}

/** GET /healthz (Redis PING and a read of the crawler's tables in Postgres, in parallel) and GET /metrics (Prometheus text). */
export function registerOpsRoutes(app: FastifyInstance, deps: OpsRouteDeps): void {
  const ms = deps.healthTimeoutMs ?? 2_000;
  app.get('/healthz', async (req, reply) => {
    const [redis, postgres] = await Promise.all([
      checkDependency('redis', () => deps.redis.ping(), ms, req.log),
      checkDependency('postgres', () => pingDatabase(deps.prisma), ms, req.log),
    ]);
    const healthy = redis === 'ok' && postgres === 'ok';
    return reply.code(healthy ? 200 : 503).send({ status: healthy ? 'ok' : 'fail', checks: { redis, postgres } });
  });
  app.get('/metrics', async (_req, reply) => {
    const body = await deps.registry.metrics();
    return reply.header('content-type', deps.registry.contentType).send(body);
  });
}
