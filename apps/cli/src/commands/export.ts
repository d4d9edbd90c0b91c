import { createWriteStream } from 'node:fs';
import { open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { domainOf } from '@crawler/core';
import { countContent, countVisits, createPrismaClient, currentExportCursor, isCursorForeign, parseExportCursor } from '@crawler/db';
import { EXPORT_FORMATS, exportPages, type ExportFormat } from '@crawler/export';
import { parseSinceFlag } from '../crawler/since-flag.js';
import { UsageError, type Command, type CommandIO } from '../command.js';
import { databaseUrlFrom } from '../env.js';

const USAGE = 'usage: crawl export [--format jsonl|warc] [--since ISO-TIME] [--after CURSOR | --cursor-file FILE] [--status done] [--domain D] [--all-versions] [--out FILE]';
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
  /** Resume after the export that printed this cursor. */
  after: string | null;
  /** Where the cursor is kept between runs: read as `after` when it exists, replaced once the export is complete. */
  cursorFile: string | null;
}

export function parseExportArgs(args: string[]): ExportArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: {
        format: { type: 'string' }, since: { type: 'string' }, status: { type: 'string' }, domain: { type: 'string' }, out: { type: 'string', short: 'o' },
        'all-versions': { type: 'boolean', default: false }, after: { type: 'string' }, 'cursor-file': { type: 'string' },
      },
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
  let after: string | null = null;
  if (v.after !== undefined) {
    after = parseExportCursor(v.after.trim());
    if (after === null) throw new UsageError(`--after must be a cursor an earlier export printed, such as 18675:18680:18677@7312830474560972949.16384.1 (got ${JSON.stringify(v.after)})`);
  }
  if (v.after !== undefined && v['cursor-file'] !== undefined) throw new UsageError('--after and --cursor-file both say where to resume: give one');
  return { format, since, status: v.status ?? null, domain, out: v.out ?? null, allVersions: v['all-versions'] ?? false, after, cursorFile: v['cursor-file'] ?? null };
}

/** The cursor a `--cursor-file` holds: null when the file does not exist yet (the first run exports everything). */
async function readCursorFile(path: string): Promise<string | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const cursor = parseExportCursor(text.trim());
  if (cursor === null) throw new UsageError(`--cursor-file ${path} does not hold a cursor an export wrote (got ${JSON.stringify(text.slice(0, 80))})`);
  return cursor;
}

/**
 * Puts `partial` in place of `path` so that after a crash or a power cut `path` is the old file or the new one,
 * whole: its bytes are flushed before the rename, and the rename (the folder) after it. The output goes first and
 * the cursor after it, so the cursor on disk is never past an output that is not.
 */
async function replaceDurably(partial: string, path: string): Promise<void> {
  const file = await open(partial, 'r');
  try {
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(partial, path);
  const folder = await open(dirname(path), 'r');
  try {
    await folder.sync();
  } catch {
    // Not every platform flushes a folder (EISDIR, EINVAL): the rename is as durable as it makes it.
  } finally {
    await folder.close();
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Holds `FILE.lock` (the pid and host of this export) while a `--cursor-file` export runs: two runs from one cursor
 * (a cron job whose export outlasts its interval) would each rename their output and their cursor into place, and
 * the cursor that wins could be past an output that never held the pages between them. A lock whose process is gone
 * from this host (an export that was killed) is taken over. Returns the release.
 */
async function lockCursorFile(path: string): Promise<() => Promise<void>> {
  const lock = `${path}.lock`;
  for (;;) {
    try {
      await writeFile(lock, `${process.pid} ${hostname()}\n`, { flag: 'wx' });
      return () => rm(lock, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const [pid, host] = (await readFile(lock, 'utf8').catch(() => '')).trim().split(' ');
    if (host !== hostname() || !/^\d+$/.test(pid ?? '') || isRunning(Number(pid))) {
      throw new UsageError(`--cursor-file ${path} is in use by another export (${lock}: pid ${pid || '?'} on ${host || '?'}); remove ${lock} if that export is no longer running`);
    }
    await rm(lock, { force: true });
  }
}

const command: Command = {
  usage: USAGE,
  async run(args, io) {
    const opts = parseExportArgs(args);
    const unlock = opts.cursorFile ? await lockCursorFile(opts.cursorFile) : null;
    try {
      return await exportTo(opts, io);
    } finally {
      await unlock?.();
    }
  },
};

async function exportTo(opts: ExportArgs, io: CommandIO): Promise<number> {
  const after = opts.after ?? (opts.cursorFile ? await readCursorFile(opts.cursorFile) : null);
  const prisma = createPrismaClient(databaseUrlFrom(io.env), { maxConnections: 2 });
  const stderr = io.stderr as NodeJS.WritableStream & { isTTY?: boolean };
  // The bar goes to stderr, so it can sit beside an export written to stdout.
  const bar = stderr.isTTY ? new cliProgress.SingleBar({ format: 'exporting [{bar}] {value}/{total} pages', stream: stderr as never }, cliProgress.Presets.shades_classic) : null;
  const filter = { since: opts.since, linkStatus: opts.status, domain: opts.domain, after };
  // A file is written under a temporary name and renamed at the end: a failed export never leaves a truncated file
  // that looks whole. A device or a FIFO (/dev/null, a named pipe) is written directly.
  const special = opts.out ? await stat(opts.out).then((s) => !s.isFile(), () => false) : false;
  const partial = opts.out && !special ? `${opts.out}.partial` : null;
  let pages = 0;
  try {
    // Taken before the first read: the export holds what was committed then, the next one resumes from it.
    const upTo = await currentExportCursor(prisma);
    if (after && isCursorForeign(after, upTo)) {
      throw new UsageError(`cursor ${after} is not from this database (${upTo}): it comes from another database or from before a restore; export without it to start again`);
    }
    bar?.start(opts.format === 'warc' ? await countVisits(prisma, { ...filter, upTo }) : await countContent(prisma, { ...filter, upTo, latestOnly: !opts.allVersions }), 0);
    const source = Readable.from(
      exportPages(prisma, {
        ...filter,
        upTo,
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
      await replaceDurably(partial, opts.out!);
    } else if (opts.out) {
      await pipeline(source, createWriteStream(opts.out));
    } else {
      await pipeline(source, io.stdout, { end: false });
    }
    bar?.stop();
    // Only once the export is whole: a failed run leaves the previous cursor, and the next run exports the same again.
    if (opts.cursorFile) {
      await writeFile(`${opts.cursorFile}.partial`, `${upTo}\n`);
      await replaceDurably(`${opts.cursorFile}.partial`, opts.cursorFile);
    }
    if (opts.out) io.stderr.write(`exported ${pages} ${opts.format === 'warc' ? 'visits' : 'pages'} to ${opts.out}\n`);
    io.stderr.write(`cursor: ${upTo}\n`);
    return 0;
  } catch (err) {
    bar?.stop();
    if (partial) await rm(partial, { force: true });
    throw err;
  } finally {
    await prisma.$disconnect();
  }
}

export default command;
