import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
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

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// The answer is public (no key on /healthz): it says what failed, never the driver's words, which name hosts,
// databases and users. Those go to the log.
async function check(name: string, fn: () => Promise<unknown>, ms: number, log: FastifyBaseLogger): Promise<'ok' | 'fail'> {
  try {
    await within(fn(), ms);
    return 'ok';
  } catch (err) {
    log.warn({ err, dependency: name }, 'health check failed');
    return 'fail';
  }
}

/** GET /healthz (Redis PING and Postgres SELECT 1, in parallel) and GET /metrics (Prometheus text). */
export function registerOpsRoutes(app: FastifyInstance, deps: OpsRouteDeps): void {
  const ms = deps.healthTimeoutMs ?? 2_000;
  app.get('/healthz', async (req, reply) => {
    const [redis, postgres] = await Promise.all([
      check('redis', () => deps.redis.ping(), ms, req.log),
      check('postgres', () => pingDatabase(deps.prisma), ms, req.log),
    ]);
    const healthy = redis === 'ok' && postgres === 'ok';
    return reply.code(healthy ? 200 : 503).send({ status: healthy ? 'ok' : 'fail', checks: { redis, postgres } });
  });
  app.get('/metrics', async (_req, reply) => {
    const body = await deps.registry.metrics();
    return reply.header('content-type', deps.registry.contentType).send(body);
  });
}
