import { parseArgs } from 'node:util';
import { OutboxStore, createPrismaClient } from '@crawler/db';
import { startEventDispatcher } from '@crawler/events';
import { onShutdownSignal } from '@crawler/pipeline';
import { createRedisConnection, closeRedisConnection } from '@crawler/queue';
import { UsageError, type Command } from '../command.js';
import { cliLogger, configFrom } from '../crawler/cli-context.js';

const USAGE = 'usage: crawl events dispatch | crawl events replay [--since ISO-TIME] [--id EVENT-ID ...] | crawl events stats';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
          since = new Date(parsed.values.since);
          if (Number.isNaN(since.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(parsed.values.since)) throw new UsageError(`--since must be an ISO time (got ${JSON.stringify(parsed.values.since)})`);
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
          const s = await outbox.stats();
          io.stdout.write(`${JSON.stringify(s)}\n`);
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
    const redis = createRedisConnection(config.redisUrl, 'worker');
    redis.on('error', (err) => logger.warn({ err }, 'redis error'));
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
