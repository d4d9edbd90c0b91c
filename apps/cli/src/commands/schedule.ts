import { parseArgs } from 'node:util';
import { ScheduleStore, createPrismaClient } from '@crawler/db';
import { UsageError, type Command } from '../command.js';
import { reportingConfigFrom } from '../crawler/cli-context.js';

const USAGE = 'usage: crawl schedule [--limit N] [--json]  (what the revisit scheduler will enqueue, and when)';

/** Seconds as the shortest readable duration (`90s`, `12m`, `6.0h`, `3.5d`). */
export function formatSeconds(s: number | null): string {
  if (s === null) return '-';
  if (s < 120) return `${Math.round(s * 10) / 10}s`;
  if (s < 7_200) return `${Math.round(s / 6) / 10}m`;
  if (s < 172_800) return `${Math.round(s / 360) / 10}h`;
  return `${Math.round(s / 8_640) / 10}d`;
}

const command: Command = {
  usage: USAGE,
  async run(args, io) {
    let parsed;
    try {
      parsed = parseArgs({ args, options: { limit: { type: 'string' }, json: { type: 'boolean' } } });
    } catch (err) {
      throw new UsageError(`${(err as Error).message}\n${USAGE}`);
    }
    const limit = parsed.values.limit === undefined ? 20 : Number(parsed.values.limit);
    if (!Number.isInteger(limit) || limit < 0 || limit > 10_000) throw new UsageError(`--limit must be an integer from 0 to 10000 (got ${JSON.stringify(parsed.values.limit)})\n${USAGE}`);
    const config = reportingConfigFrom(io);
    const prisma = createPrismaClient(config.databaseUrl, { maxConnections: 2 });
    try {
      const s = await new ScheduleStore({ prisma }).summary({ limit });
      if (parsed.values.json) {
        io.stdout.write(`${JSON.stringify(s)}\n`);
        return 0;
      }
      io.stdout.write(`${s.scheduled} links scheduled: ${s.dueNow} due now, ${s.dueWithinHour} within an hour, ${s.dueWithinDay} within a day, ${s.later} later\n`);
      const now = Date.now();
      for (const l of s.next) {
        const inS = (new Date(l.nextFetchAt).getTime() - now) / 1000;
        const when = inS <= 0 ? `due ${formatSeconds(-inS)} ago` : `in ${formatSeconds(inS)}`;
        const changed = l.lastVisitChanged === null ? '' : l.lastVisitChanged ? ', changed at the last visit' : ', unchanged at the last visit';
        io.stdout.write(`  ${new Date(l.nextFetchAt).toISOString()}  ${when.padEnd(16)} ${l.mode} every ${formatSeconds(l.intervalSeconds)}${changed}  ${l.url}\n`);
      }
      return 0;
    } finally {
      await prisma.$disconnect();
    }
  },
};

export default command;
