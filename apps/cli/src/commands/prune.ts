import { AttemptStore, createPrismaClient, DEFAULT_RETENTION_DAYS, OutboxStore, VersionStore } from '@crawler/db';
import { MAX_RETENTION_DAYS } from '@crawler/pipeline';
import { UsageError, type Command } from '../command.js';
import { reportingConfigFrom } from '../crawler/cli-context.js';

const USAGE = 'usage: crawl prune [--older-than-days N]';

function parseDays(args: string[]): number {
  let days = DEFAULT_RETENTION_DAYS;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const value = a.startsWith('--older-than-days=') ? a.slice('--older-than-days='.length) : a === '--older-than-days' ? args[++i] : undefined;
    if (value === undefined) throw new UsageError(`unknown argument ${a} (${USAGE})`);
    days = Number(value);
    // Past 100 years the cut-off date is no longer a date ('Invalid time value' from every prune step).
    if (!Number.isInteger(days) || days < 1 || days > MAX_RETENTION_DAYS) throw new UsageError(`--older-than-days must be a positive integer up to ${MAX_RETENTION_DAYS} (got ${JSON.stringify(value)})`);
  }
  return days;
}

const command: Command = {
  usage: USAGE,
  async run(args, io) {
    const olderThanDays = parseDays(args);
    const config = reportingConfigFrom(io);
    const prisma = createPrismaClient(config.databaseUrl);
    try {
      const result = await new AttemptStore({ prisma }).pruneAttempts({ olderThanDays });
      io.stdout.write(`pruned ${result.attempts} attempts and ${result.heuristics} heuristics older than ${olderThanDays} days\n`);
      // The events outbox: an event goes once every channel this configuration uses is done with it (delivered or
      // dead-lettered for the webhook, added to the Redis stream), or at once when no channel is in use.
      const events = await new OutboxStore({ prisma }).prune({
        before: new Date(Date.now() - olderThanDays * 86_400_000),
        webhook: config.events.webhook !== null,
        stream: config.events.stream !== null,
      });
      io.stdout.write(`pruned ${events} link events older than ${olderThanDays} days\n`);
      // Page versions: each link keeps its last VERSIONS_KEEP versions and any younger than VERSIONS_KEEP_DAYS (its
      // latest always); the visits that confirmed a deleted version go with it.
      const versions = await new VersionStore({ prisma }).prune({ keepVersions: config.versionsKeep, keepDays: config.versionsKeepDays });
      io.stdout.write(`pruned ${versions.deletedVersions} page versions (kept: the last ${config.versionsKeep} per page, or younger than ${config.versionsKeepDays} days)\n`);
      return 0;
    } finally {
      await prisma.$disconnect();
    }
  },
};

export default command;
