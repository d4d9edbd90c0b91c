import { statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { createRuntime } from '@crawler/pipeline';
import { UsageError, type Command } from '../command.js';
import { cliLogger, collectUrls, configFrom } from '../crawler/cli-context.js';
import { buildCrawlReport, formatCrawlReport } from '../crawler/crawl-report.js';
import { closeOnSignals } from './run.js';

const USAGE = 'usage: crawl crawl <file|URL...> [--json] [--learning on|off]  (an existing file is a list of URLs, one per line; "-" is stdin)';

const command: Command = {
  async run(args, io) {
    let parsed;
    try {
      parsed = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' }, learning: { type: 'string' } } });
    } catch (err) {
      throw new UsageError(`${(err as Error).message}\n${USAGE}`);
    }
    if (parsed.positionals.length === 0) throw new UsageError(`no URLs or files given\n${USAGE}`);
    const { parseLearningFlag } = await import('./enqueue.js');
    const learningModeEnabled = parseLearningFlag(parsed.values.learning);
    const urls = await collectUrls(io, { ...splitPositionals(parsed.positionals), stdinWhenEmpty: false });
    const config = configFrom(io);
    const runtime = createRuntime(config, { logger: cliLogger(io, config.logLevel) });
    const release = closeOnSignals(runtime, () => undefined);
    try {
      const enq = await runtime.enqueue(urls, { learningModeEnabled });
      const ids = [...new Set(enq.accepted.map((a) => a.linkId))];
      runtime.startWorkers();
      const bar = io.stdout.isTTY && !parsed.values.json ? new cliProgress.SingleBar({ format: 'crawling [{bar}] {value}/{total} links settled', stream: io.stdout as NodeJS.WritableStream as never }, cliProgress.Presets.shades_classic) : null;
      bar?.start(ids.length, 0);
      await runtime.waitUntilIdle({
        onTick: bar ? async () => bar.update(await runtime.prisma.link.count({ where: { id: { in: ids }, status: { in: ['done', 'failed', 'paused'] } } })) : undefined,
      });
      bar?.update(ids.length);
      bar?.stop();
      const rows = await runtime.prisma.link.findMany({ where: { id: { in: ids } } });
      const byId = new Map(rows.map((r) => [r.id, r]));
      const report = buildCrawlReport(ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : [])), enq.rejected);
      io.stdout.write(parsed.values.json ? `${JSON.stringify(report)}\n` : formatCrawlReport(report));
      return report.totals.failed > 0 || report.totals.rejected > 0 ? 1 : 0;
    } finally {
      release();
      await runtime.close();
    }
  },
};

/**
 * Which positionals are files of URLs ("-" is stdin) and which are URLs. A file must exist: anything else is a URL
 * candidate, so a typo or a bare word is reported as that one invalid URL while the rest of the batch goes in, instead
 * of aborting the crawl as an unreadable file.
 */
export function splitPositionals(positionals: readonly string[], isFile: (p: string) => boolean = existingFile): { urls: string[]; files: string[] } {
  const files = positionals.filter((p) => p === '-' || (!/^[a-z][a-z0-9+.-]*:/i.test(p) && isFile(p)));
  return { urls: positionals.filter((p) => !files.includes(p)), files };
}

function existingFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

export default command;
