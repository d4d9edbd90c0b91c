#!/usr/bin/env node
/** The producer API: POST /links, GET /links/:id, POST/GET/DELETE /crawls, Bull Board, /metrics, /healthz, /readyz. */
import { createPrismaClient, LinkStore } from '@crawler/db';
import { DomainPauses, createCrawlFrontier, exitOnSignals } from '@crawler/pipeline';
import { JobQueues, ROUTE_QUEUE, RedisSetupError, assertRedisDatabase, closeRedisConnection, createRedisConnection, fetchQueueName } from '@crawler/queue';
import { createLogger, createPipelineMetrics } from '@crawler/telemetry';
import { parseApiEnv } from './env.js';
import { createServer } from './server.js';

const env = (() => {
  try {
    return parseApiEnv(process.env);
  } catch (err) {
    process.stderr.write(`api: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
})();
const logger = createLogger({ name: 'api', level: env.crawler.logLevel });
const prisma = createPrismaClient(env.crawler.databaseUrl, { maxConnections: env.crawler.databasePoolSize });
// A Redis outage is one warning with its address, and one line when it is back.
const redis = createRedisConnection(env.crawler.redisTarget, 'producer', {}, { logger });
const queues = new JobQueues({ connection: redis, prefix: env.crawler.queuePrefix, shards: env.crawler.queueShards });
const crawls = createCrawlFrontier({ prisma, queues, redis, config: env.crawler, logger });
const app = await createServer({
  prisma,
  redis,
  queues,
  links: new LinkStore(prisma),
  queueNames: [ROUTE_QUEUE, ...env.crawler.fetchers.map((f) => fetchQueueName(f.name))],
  metrics: createPipelineMetrics({ defaultMetrics: true }),
  bullBoard: env.bullBoard,
  apiKeys: env.apiKeys,
  crawls,
  pauses: new DomainPauses({ redis, prisma, queues, config: env.crawler }),
  maxBatchSize: env.apiMaxBatchSize,
  timeouts: env.timeouts,
  minRevisitIntervalSeconds: env.crawler.revisitMinIntervalS,
  ...(env.crawler.crawlTrackingParams ? { trackingParams: env.crawler.crawlTrackingParams } : {}),
  loggerInstance: logger,
});
if (!env.apiKeys) logger.warn('the API is open: set API_KEYS (comma-separated bearer keys) to require one');
if (!env.bullBoard) logger.warn('Bull Board is off: set BULL_BOARD_USER and BULL_BOARD_PASSWORD to enable it');

let closing: Promise<void> | null = null;
/** Stop taking requests and finish the open ones, then queues, Redis, Postgres; each step on its own. */
const close = () =>
  (closing ??= (async () => {
    for (const [name, step] of [
      ['http', () => app.close()],
      ['sitemap fetcher', () => crawls.close()],
      ['queues', () => queues.close()],
      ['redis', () => closeRedisConnection(redis)],
      ['postgres', () => prisma.$disconnect()],
    ] as const) {
      await step().catch((err: unknown) => logger.error({ err, step: name }, 'shutdown step failed'));
    }
  })());
exitOnSignals(close, logger, 30_000);
try {
  // A database REDIS_URL names that the server lacks would otherwise silently be database 0.
  await assertRedisDatabase(redis);
} catch (err) {
  if (!(err instanceof RedisSetupError)) {
    // Redis unreachable: the API serves what it can (its /readyz says so); the check is made again on the next start.
    logger.warn({ err }, 'could not check the Redis database REDIS_URL names');
  } else {
    process.stderr.write(`api: ${err.message}\n`);
    await close();
    process.exit(1);
  }
}
try {
  await app.listen({ port: env.port, host: env.host });
} catch (err) {
  // A taken port or an address this host does not have: one line naming the variables, as a bad value gets, not
  // Node's uncaught-exception dump.
  const code = (err as NodeJS.ErrnoException).code;
  const why = code === 'EADDRINUSE' ? 'already in use (another API on this host?)' : code === 'EADDRNOTAVAIL' ? 'not an address of this host' : (err as Error).message;
  process.stderr.write(`api: cannot listen on HOST=${env.host} PORT=${env.port}: ${why}\n`);
  await close();
  process.exit(1);
}
