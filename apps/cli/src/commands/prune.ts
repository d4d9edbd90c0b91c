import { AttemptStore, createPrismaClient, DEFAULT_RETENTION_DAYS } from '@crawler/db';
import { UsageError, type Command } from '../command.js';
import { databaseUrlFrom } from '../env.js';

function parseDays(args: string[]): number {
  let days = DEFAULT_RETENTION_DAYS;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const value = a.startsWith('--older-than-days=') ? a.slice('--older-than-days='.length) : a === '--older-than-days' ? args[++i] : undefined;
    if (value === undefined) throw new UsageError(`unknown argument ${a} (usage: crawl prune [--older-than-days N])`);
    days = Number(value);
    if (!Number.isInteger(days) || days < 1) throw new UsageError(`--older-than-days must be a positive integer (got ${JSON.stringify(value)})`);
  }
  return days;
}

const command: Command = {
  async run(args, io) {
    const olderThanDays = parseDays(args);
    const prisma = createPrismaClient(databaseUrlFrom(io.env));
    try {
      const result = await new AttemptStore({ prisma }).pruneAttempts({ olderThanDays });
      io.stdout.write(`pruned ${result.attempts} attempts and ${result.heuristics} heuristics older than ${olderThanDays} days\n`);
      return 0;
    } finally {
      await prisma.$disconnect();
    }
  },
};

export default command;
