import type { Redis } from 'ioredis';
import type { Clock, Logger } from '@crawler/core';
import { OutboxStore, type PrismaClient } from '@crawler/db';
import type { RetryPolicy } from './backoff.js';
import { EventDispatcher } from './dispatcher.js';

/** The events settings a dispatcher needs (pipeline's EventsConfig has this shape). */
export interface DispatcherSettings {
  webhook: { url: string; secret: string; timeoutMs: number } | null;
  retry: RetryPolicy;
  stream: { key: string; maxLen: number } | null;
}

/**
 * Start a dispatcher for the outbox of `prisma`, or return null when there is nothing to deliver to (no WEBHOOK_URL,
 * stream off). The caller stops it before closing Postgres and Redis.
 */
export function startEventDispatcher(deps: { prisma: PrismaClient; redis: Redis; settings: DispatcherSettings; logger: Logger; clock?: Clock }): EventDispatcher | null {
  const { settings } = deps;
  if (!settings.webhook && !settings.stream) return null;
  const dispatcher = new EventDispatcher({
    outbox: new OutboxStore({ prisma: deps.prisma, clock: deps.clock }),
    webhook: settings.webhook,
    stream: settings.stream ? { redis: deps.redis, key: settings.stream.key, maxLen: settings.stream.maxLen } : null,
    retry: settings.retry,
    logger: deps.logger.child({ component: 'events' }),
    clock: deps.clock,
  });
  dispatcher.start();
  deps.logger.info({ webhook: settings.webhook ? new URL(settings.webhook.url).origin : null, stream: settings.stream?.key ?? null }, 'event dispatcher started');
  return dispatcher;
}
