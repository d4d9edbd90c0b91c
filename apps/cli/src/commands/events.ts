import { parseArgs } from 'node:util';
import { OutboxStore, createPrismaClient, type OutboxStats } from '@crawler/db';
import type { CrawlerConfig } from '@crawler/pipeline';
import { startEventDispatcher } from '@crawler/events';
import { onShutdownSignal } from '@crawler/pipeline';
import { createRedisConnection, closeRedisConnection } from '@crawler/queue';
import { parseSinceFlag } from '../crawler/since-flag.js';
import { InterruptedError, UsageError, type Command } from '../command.js';
import { cliLogger, configFrom, waitForRedisUnlessSignalled } from '../crawler/cli-context.js';

const USAGE = 'usage: crawl events dispatch | crawl events replay [--since ISO-TIME] [--id EVENT-ID ...] | crawl events stats';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What `crawl events stats` prints: each channel in use with its own counts; a channel not configured says so. */
export interface EventStatsReport {
  /** The webhook's delivery states, or null when WEBHOOK_URL is not set (nothing is pending delivery then). */
  webhook: { pending: number; delivered: number; dead: number } | null;
  /** Events not yet added to the Redis stream, or null when EVENTS_STREAM=off. */
  stream: { key: string; unstreamed: number } | null;
  /** Set when no channel is configured: events wait in the outbox until one is. */
  note?: string;
}

/** Counts per configured channel: a channel that is off has nothing pending, whatever the outbox's columns say. */
export function eventStatsReport(s: OutboxStats, events: Pick<CrawlerConfig['events'], 'webhook' | 'stream'>): EventStatsReport {
  const out: EventStatsReport = {
    webhook: events.webhook ? { pending: s.pending, delivered: s.delivered, dead: s.dead } : null,
    stream: events.stream ? { key: events.stream.key, unstreamed: s.unstreamed } : null,
  };
  if (!events.webhook && !events.stream) out.note = 'no channel is configured (WEBHOOK_URL unset, EVENTS_STREAM=off): events stay in the outbox until one is';
  return out;
}

const command: Command = {
  usage: USAGE,
  async run(args, io) {
    const [sub, ...rest] = args;
    const config = configFrom(io);
    if (sub === 'stats' || sub === 'replay') {
      let since: Date | null = null;
      let ids: string[] | null = null;
      if (sub === 'replay') {
        let parsed;
        try {
          parsed = parseArgs({ args: rest, options: { since: { type: 'string' }, id: { type: 'string', multiple: true } } });
        } catch (err) {
          throw new UsageError(`${(err as Error).message} (${USAGE})`);
        }
        if (parsed.values.since !== undefined) {
          since = parseSinceFlag(parsed.values.since, USAGE);
        }
        if (parsed.values.id) {
          const bad = parsed.values.id.filter((id) => !UUID.test(id));
          if (bad.length > 0) throw new UsageError(`--id takes event ids (UUIDs), got ${bad.map((b) => JSON.stringify(b)).join(', ')}`);
          ids = parsed.values.id;
        }
      } else if (rest.length > 0) {
        throw new UsageError(USAGE);
      }
      const prisma = createPrismaClient(config.databaseUrl, { maxConnections: 2 });
      try {
        const outbox = new OutboxStore({ prisma });
        if (sub === 'stats') {
          io.stdout.write(`${JSON.stringify(eventStatsReport(await outbox.stats(), config.events))}\n`);
        } else {
          const n = await outbox.replayDead({ since, ids });
          io.stdout.write(`${n} dead letters queued for delivery again${config.events.webhook ? '' : ' (WEBHOOK_URL is not set: a dispatcher with one will send them)'}\n`);
        }
        return 0;
      } finally {
        await prisma.$disconnect();
      }
    }
    if (sub !== 'dispatch' || rest.length > 0) throw new UsageError(USAGE);
    if (!config.events.webhook && !config.events.stream) throw new UsageError('nothing to dispatch to: set WEBHOOK_URL (and WEBHOOK_SECRET), or leave EVENTS_STREAM on');
    const logger = cliLogger(io, config.logLevel);
    const prisma = createPrismaClient(config.databaseUrl, { maxConnections: 4 });
    const redis = createRedisConnection(config.redisTarget, 'worker', {}, { logger });
    // A dispatcher is a service: a SIGTERM while it still waits for Redis (down, not up yet) stops it cleanly, with 0,
    // as one once running does.
    try {
      await waitForRedisUnlessSignalled(redis, async () => {
        await closeRedisConnection(redis).catch(() => {});
        await prisma.$disconnect();
      });
    } catch (err) {
      if (err instanceof InterruptedError) return 0;
      throw err;
    }
    const dispatcher = startEventDispatcher({ prisma, redis, settings: config.events, logger })!;
    // Runs until SIGTERM/SIGINT: the current round finishes, then Redis and Postgres close.
    let release = (): void => {};
    await new Promise<void>((resolve) => {
      release = onShutdownSignal(() => resolve());
    });
    release();
    await dispatcher.stop();
    await closeRedisConnection(redis).catch(() => {});
    await prisma.$disconnect();
    return 0;
  },
};

export default command;
