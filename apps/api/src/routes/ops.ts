import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { PrismaClient } from '@crawler/db';
import type { Registry } from 'prom-client';

export interface OpsRouteDeps {
  redis: Redis;
  prisma: PrismaClient;
  registry: Registry;
  /** How long each dependency may take to answer /healthz. @defaultValue 2000 */
  healthTimeoutMs?: number;
}

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function check(fn: () => Promise<unknown>, ms: number): Promise<string> {
  try {
    await within(fn(), ms);
    return 'ok';
  } catch (err) {
    return `fail: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;
  }
}

/** GET /healthz (Redis PING and Postgres SELECT 1, in parallel) and GET /metrics (Prometheus text). */
export function registerOpsRoutes(app: FastifyInstance, deps: OpsRouteDeps): void {
  const ms = deps.healthTimeoutMs ?? 2_000;
  app.get('/healthz', async (_req, reply) => {
    const [redis, postgres] = await Promise.all([check(() => deps.redis.ping(), ms), check(() => deps.prisma.$queryRaw`SELECT 1`, ms)]);
    const healthy = redis === 'ok' && postgres === 'ok';
    return reply.code(healthy ? 200 : 503).send({ status: healthy ? 'ok' : 'fail', checks: { redis, postgres } });
  });
  app.get('/metrics', async (_req, reply) => {
    const body = await deps.registry.metrics();
    return reply.header('content-type', deps.registry.contentType).send(body);
  });
}
