import { createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { domainOf } from '@crawler/core';
import { countContent, countVisits, createPrismaClient } from '@crawler/db';
import { EXPORT_FORMATS, exportPages, type ExportFormat } from '@crawler/export';
import { parseSinceFlag } from '../crawler/since-flag.js';
import { UsageError, type Command } from '../command.js';
import { databaseUrlFrom } from '../env.js';

const USAGE = 'usage: crawl export --format jsonl|warc [--since ISO-TIME] [--status done] [--domain D] [--all-versions] [--out FILE]';
const STATUSES = ['queued', 'routing', 'fetching', 'paused', 'done', 'failed'];

/** Parsed `crawl export` arguments. */
export interface ExportArgs {
  format: ExportFormat;
  since: Date | null;
  status: string | null;
  domain: string | null;
  out: string | null;
  /** JSONL: every stored version, not only each page's latest. */
  allVersions: boolean;
}

export function parseExportArgs(args: string[]): ExportArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { format: { type: 'string' }, since: { type: 'string' }, status: { type: 'string' }, domain: { type: 'string' }, out: { type: 'string', short: 'o' }, 'all-versions': { type: 'boolean', default: false } },
    });
  } catch (err) {
    throw new UsageError(`${(err as Error).message} (${USAGE})`);
  }
  const v = parsed.values;
  const format = (v.format ?? 'jsonl') as ExportFormat;
  if (!EXPORT_FORMATS.includes(format)) throw new UsageError(`--format must be one of ${EXPORT_FORMATS.join(', ')} (got ${JSON.stringify(v.format)})`);
  let since: Date | null = null;
  if (v.since !== undefined) {
    since = parseSinceFlag(v.since, USAGE);
  }
  if (v.status !== undefined && !STATUSES.includes(v.status)) throw new UsageError(`--status must be one of ${STATUSES.join(', ')} (got ${JSON.stringify(v.status)})`);
  // As links store their domain: `www.`, upper case, an IDN or a trailing dot find the pages of that host.
  let domain: string | null = null;
  try {
    if (v.domain !== undefined) domain = domainOf(v.domain);
  } catch {
    throw new UsageError(`--domain must be a domain name (got ${JSON.stringify(v.domain)})`);
  }
  if (v['all-versions'] && format !== 'jsonl') throw new UsageError('--all-versions is for --format jsonl (a WARC export holds every visit already)');
  return { format, since, status: v.status ?? null, domain, out: v.out ?? null, allVersions: v['all-versions'] ?? false };
}

const command: Command = {
  usage: USAGE,
  async run(args, io) {
    const opts = parseExportArgs(args);
    const prisma = createPrismaClient(databaseUrlFrom(io.env), { maxConnections: 2 });
    const stderr = io.stderr as NodeJS.WritableStream & { isTTY?: boolean };
    // The bar goes to stderr, so it can sit beside an export written to stdout.
    const bar = stderr.isTTY ? new cliProgress.SingleBar({ format: 'exporting [{bar}] {value}/{total} pages', stream: stderr as never }, cliProgress.Presets.shades_classic) : null;
    const filter = { since: opts.since, linkStatus: opts.status, domain: opts.domain };
    // A file is written under a temporary name and renamed at the end: a failed export never leaves a truncated file
    // that looks whole. A device or a FIFO (/dev/null, a named pipe) is written directly.
    const special = opts.out ? await stat(opts.out).then((s) => !s.isFile(), () => false) : false;
    const partial = opts.out && !special ? `${opts.out}.partial` : null;
    let pages = 0;
    try {
      bar?.start(opts.format === 'warc' ? await countVisits(prisma, filter) : await countContent(prisma, { ...filter, latestOnly: !opts.allVersions }), 0);
      const source = Readable.from(
        exportPages(prisma, {
          ...filter,
          format: opts.format,
          allVersions: opts.allVersions,
          warcInfo: opts.out ? { filename: opts.out.split('/').pop() } : {},
          onPage: () => {
            pages += 1;
            bar?.increment();
          },
        }),
      );
      if (partial) {
        await pipeline(source, createWriteStream(partial));
        await rename(partial, opts.out!);
      } else if (opts.out) {
        await pipeline(source, createWriteStream(opts.out));
      } else {
        await pipeline(source, io.stdout, { end: false });
      }
      bar?.stop();
      if (opts.out) io.stderr.write(`exported ${pages} ${opts.format === 'warc' ? 'visits' : 'pages'} to ${opts.out}\n`);
      return 0;
    } catch (err) {
      bar?.stop();
      if (partial) await rm(partial, { force: true });
      throw err;
    } finally {
      await prisma.$disconnect();
    }
  },
};

export default command;
