import { Redis } from 'ioredis';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { AttemptStore, RouteStore, ContentStore } from '@crawler/db';
import type { Clock } from '@crawler/core';
import { loadConfig, type CrawlerConfig } from '../config/crawler-config.js';
import { createRuntime, type RuntimeOverrides } from '../runtime/create-runtime.js';
import type { CrawlerRuntime } from '../runtime/crawler-runtime.js';
import { deleteRedisPrefix } from '@crawler/queue';
import { REDIS_URL } from '@crawler/testkit';

/** Re-exported for the e2e tests, which import their helpers from here. */
export { REDIS_URL, waitFor } from '@crawler/testkit';

let seq = 0;

/** One isolated crawler for one test: its own database, its own Redis prefix, everything closed by `cleanup`. */
/**
 * A crawler set up to ride out faults quickly (the fault e2e files, on private servers): plain HTTP only, no robots.txt
 * or politeness delay, short job locks and stall checks, a reconciler that rebuilds lost work within seconds, and
 * infrastructure retries capped at 2 s.
 */
export const FAULT_ENV = {
  ALLOW_PRIVATE_NETWORKS: 'true',
  FETCHERS: 'simple_http:4',
  ROBOTS_ENABLED: 'false',
  DOMAIN_MIN_DELAY_MS: '0',
  DOMAIN_MAX_CONCURRENCY: '16',
  LOCK_DURATION_MS: '3000',
  STALLED_INTERVAL_MS: '1000',
  RECONCILE_INTERVAL_MS: '2000',
  RECONCILE_GRACE_MS: '3000',
  INFRA_RETRY_MAX_MS: '2000',
} as const;

export interface E2eCrawler {
  db: TestDatabase;
  config: CrawlerConfig;
  runtime: CrawlerRuntime;
  attempts: AttemptStore;
  routes: RouteStore;
  content: ContentStore;
  prefix: string;
  cleanup(): Promise<void>;
}

export async function startE2e(label: string, env: Record<string, string> = {}, overrides: RuntimeOverrides & { clock?: Clock } = {}): Promise<E2eCrawler> {
  const db = await createTestDatabase(`pipeline_${label}`);
  seq += 1;
  const prefix = `{crawler_test_pipeline_${label}_${process.pid}_${seq}}`;
  const config = loadConfig({
    DATABASE_URL: db.url,
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    ALLOW_PRIVATE_NETWORKS: 'true',
    FETCHERS: 'simple_http:4,playwright:1,playwright_stealth:1',
    DOMAIN_MIN_DELAY_MS: '0',
    DOMAIN_MAX_CONCURRENCY: '4',
    ...env,
  });
  const runtime = createRuntime(config, { prisma: db.prisma, ...overrides });
  const clock = overrides.clock;
  return {
    db,
    config,
    runtime,
    prefix,
    attempts: new AttemptStore({ prisma: db.prisma, clock }),
    routes: new RouteStore({ prisma: db.prisma, clock }),
    content: new ContentStore({ prisma: db.prisma, clock }),
    async cleanup() {
      await runtime.close({ drainTimeoutMs: 5_000 });
      const r = new Redis(REDIS_URL);
      try {
        await deleteRedisPrefix(r, prefix);
      } finally {
        r.disconnect();
      }
      await db.drop();
    },
  };
}

