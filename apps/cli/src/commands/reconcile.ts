import { parseArgs } from 'node:util';
import { MAX_DURATION_MS } from '@crawler/core';
import { unservedAdvice } from '@crawler/pipeline';
import { UsageError, type Command } from '../command.js';
import { cliLogger, openRuntime, reportingConfigFrom } from '../crawler/cli-context.js';

const USAGE = 'usage: crawl reconcile [--grace-ms N] [--json]';

const command: Command = {
  usage: USAGE,
  async run(args, io) {
    let parsed;
    try {
      parsed = parseArgs({ args, options: { 'grace-ms': { type: 'string' }, json: { type: 'boolean' } } });
    } catch (err) {
      throw new UsageError(`${(err as Error).message}\n${USAGE}`);
    }
    const config = reportingConfigFrom(io);
    const raw = parsed.values['grace-ms'];
    const graceMs = raw === undefined ? config.reconcileGraceMs : Number(raw);
    // Past 100 years the cut-off is no longer a date Postgres can compare with (an 'invalid input syntax' stack trace).
    if (!Number.isInteger(graceMs) || graceMs < 0 || graceMs > MAX_DURATION_MS) throw new UsageError(`--grace-ms must be a non-negative integer up to ${MAX_DURATION_MS} (got ${JSON.stringify(raw)})\n${USAGE}`);
    const runtime = await openRuntime(config, { logger: cliLogger(io, config.logLevel) });
    try {
      const report = await runtime.reconcile({ graceMs });
      if (parsed.values.json) {
        io.stdout.write(`${JSON.stringify(report)}\n`);
        return 0;
      }
      const requeued = Object.entries(report.requeued);
      const total = requeued.reduce((n, [, c]) => n + c, 0);
      io.stdout.write(`scanned ${report.scanned} unfinished links untouched for ${graceMs} ms: ${report.alive} carried by a live job, ${total} requeued\n`);
      for (const [status, n] of requeued) io.stdout.write(`  ${status}: ${n}\n`);
      if (report.nextGeneration > 0) io.stdout.write(`  ${report.nextGeneration} moved to a new generation (their job id was held by a dead job)\n`);
      if (report.pausedDelayed > 0) io.stdout.write(`  ${report.pausedDelayed} paused links wait out the rest of their pause\n`);
      if (report.lost > 0) io.stdout.write(`  ${report.lost} links failed with job_lost: their jobs died more than RECONCILE_MAX_RESCUES times\n`);
      for (const u of report.unserved ?? []) io.stdout.write(`${unservedAdvice(u)}\n`);
      return 0;
    } finally {
      await runtime.close({ drainTimeoutMs: 0 });
    }
  },
};

export default command;
