import { parseArgs } from 'node:util';
import { shownInput, type EnqueueResult } from '@crawler/pipeline';
import { MAX_JOB_PRIORITY, PrioritySchema } from '@crawler/queue';
import { UsageError, type Command } from '../command.js';
import { failIfDeferred } from '../crawler/deferred.js';
import { cliLogger, openRuntime, reportingConfigFrom, urlParts } from '../crawler/cli-context.js';
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

/** URLs per enqueue: a part's links are stored in one round of statements and their jobs added in one. */
const ENQUEUE_FILE_PART = 5_000;

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
    // Read, enqueued and reported in parts: a list of millions of URLs is never held whole (a spread of it overflowed
    // the call stack past ~120,000 lines, and one batch of 300,000 took 760 MB).
    const parts = urlParts(io, { urls: parsed.positionals, files: parsed.values.file ?? [], stdinWhenEmpty: true }, ENQUEUE_FILE_PART);
    const first = await parts.next();
    const runtime = await openRuntime(config, { logger: cliLogger(io, config.logLevel) });
    try {
      const json = parsed.values.json === true;
      const counts = { accepted: 0, created: 0, rejected: 0, refreshed: 0, fresh: 0, inProgress: 0 };
      const rejected: EnqueueResult['rejected'] = [];
      if (json) io.stdout.write('{"accepted":[');
      const enqueue = async (urls: string[]): Promise<void> => {
        const res = await runtime.enqueue(urls, { learningModeEnabled, priority, ...schedule });
        // Stored, without their jobs: said in one line with what Redis said (redisRefusal), exit 1.
        failIfDeferred(res.deferred);
        for (const a of res.accepted) {
          if (json) io.stdout.write(`${counts.accepted > 0 ? ',' : ''}${JSON.stringify(a)}`);
          counts.accepted++;
          if (a.created) counts.created++;
          if (a.refresh === 'refreshed') counts.refreshed++;
          else if (a.refresh === 'fresh') counts.fresh++;
          else if (a.refresh === 'in_progress') counts.inProgress++;
        }
        counts.rejected += res.rejected.length;
        if (json) rejected.push(...res.rejected);
        else for (const r of res.rejected) io.stderr.write(`crawl enqueue: ${shownInput(r.input)}: ${r.message} (${r.code})\n`);
      };
      await enqueue(first.done ? [] : first.value);
      for await (const urls of parts) await enqueue(urls);
      if (json) {
        io.stdout.write(`],"rejected":${JSON.stringify(rejected)}}\n`);
      } else {
        const refreshNote = schedule.maxAgeSeconds === undefined ? '' : `; of the known: ${counts.refreshed} refreshed, ${counts.fresh} fresh enough (left alone), ${counts.inProgress} already in progress`;
        io.stdout.write(`accepted ${counts.accepted} (${counts.created} new, ${counts.accepted - counts.created} already known${refreshNote}), rejected ${counts.rejected}\n`);
      }
      // Non-zero when anything was rejected, so scripts notice; the valid URLs are in either way.
      return counts.rejected > 0 ? 1 : 0;
    } finally {
      await runtime.close();
    }
  },
};

export default command;
