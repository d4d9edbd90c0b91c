import { Redis } from 'ioredis';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { AttemptStore, RouteStore, ContentStore } from '@crawler/db';
import type { Clock } from '@crawler/core';
import { loadConfig, type CrawlerConfig } from '../config/crawler-config.js';
import { createRuntime, type RuntimeOverrides } from '../runtime/create-runtime.js';
import type { CrawlerRuntime } from '../runtime/crawler-runtime.js';
import { deleteRedisPrefix } from '@crawler/queue';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
let seq = 0;

/** One isolated crawler for one test: its own database, its own Redis prefix, everything closed by `cleanup`. */
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

/** Poll `check` until it returns a truthy value. */
export async function waitFor<T>(check: () => Promise<T | null | undefined | false>, what: string, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
