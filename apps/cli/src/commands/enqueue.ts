import { parseArgs } from 'node:util';
import { shownInput } from '@crawler/pipeline';
import { MAX_JOB_PRIORITY, PrioritySchema } from '@crawler/queue';
import { UsageError, type Command } from '../command.js';
import { failIfDeferred } from '../crawler/deferred.js';
import { cliLogger, collectUrls, openRuntime, reportingConfigFrom } from '../crawler/cli-context.js';
import { SCHEDULE_OPTIONS, SCHEDULE_USAGE, parseScheduleFlags } from '../crawler/schedule-flags.js';

const USAGE = `usage: crawl enqueue [URL...] [--file F]... [--learning on|off] [--priority N] ${SCHEDULE_USAGE} [--json]  (no URLs: read stdin, one per line)`;

/** Parse `--learning on|off` into the per-link override. */
export function parseLearningFlag(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (['on', 'true', '1'].includes(value)) return true;
  if (['off', 'false', '0'].includes(value)) return false;
  throw new UsageError(`--learning must be on or off (got ${JSON.stringify(value)})`);
}

/**
 * Parse `--priority N`: BullMQ's job priority, 1 (first) to MAX_JOB_PRIORITY, stored on the link so a rebuilt job keeps
 * it. Links enqueued without one run before any prioritized link (BullMQ's rule), as with the API's `priority`.
 */
export function parsePriorityFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!PrioritySchema.safeParse(n).success) {
    throw new UsageError(`--priority must be a whole number from 1 (first) to ${MAX_JOB_PRIORITY} (got ${JSON.stringify(value)})`);
  }
  return n;
}

const command: Command = {
  usage: USAGE,
  async run(args, io) {
    let parsed;
    try {
      parsed = parseArgs({ args, allowPositionals: true, options: { file: { type: 'string', multiple: true }, learning: { type: 'string' }, priority: { type: 'string' }, json: { type: 'boolean' }, ...SCHEDULE_OPTIONS } });
    } catch (err) {
      throw new UsageError(`${(err as Error).message}\n${USAGE}`);
    }
    const learningModeEnabled = parseLearningFlag(parsed.values.learning);
    const priority = parsePriorityFlag(parsed.values.priority);
    const config = reportingConfigFrom(io);
    const schedule = parseScheduleFlags(parsed.values, config.revisitMinIntervalS, USAGE);
    const urls = await collectUrls(io, { urls: parsed.positionals, files: parsed.values.file ?? [], stdinWhenEmpty: true });
    const runtime = await openRuntime(config, { logger: cliLogger(io, config.logLevel) });
    try {
      const res = await runtime.enqueue(urls, { learningModeEnabled, priority, ...schedule });
      // Stored, without their jobs: said in one line with what Redis said (redisRefusal), exit 1.
      failIfDeferred(res.deferred);
      if (parsed.values.json) {
        io.stdout.write(`${JSON.stringify(res)}\n`);
      } else {
        for (const r of res.rejected) io.stderr.write(`crawl enqueue: ${shownInput(r.input)}: ${r.message} (${r.code})\n`);
        const created = res.accepted.filter((a) => a.created).length;
        const refresh = (kind: string): number => res.accepted.filter((a) => a.refresh === kind).length;
        const refreshNote = schedule.maxAgeSeconds === undefined ? '' : `; of the known: ${refresh('refreshed')} refreshed, ${refresh('fresh')} fresh enough (left alone), ${refresh('in_progress')} already in progress`;
        io.stdout.write(`accepted ${res.accepted.length} (${created} new, ${res.accepted.length - created} already known${refreshNote}), rejected ${res.rejected.length}\n`);
      }
      // Non-zero when anything was rejected, so scripts notice; the valid URLs are in either way.
      return res.rejected.length > 0 ? 1 : 0;
    } finally {
      await runtime.close();
    }
  },
};

export default command;
