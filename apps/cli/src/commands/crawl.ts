import { statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { looksLikeSitemap, type CrawlerRuntime, type EnqueueResult } from '@crawler/pipeline';
import { UsageError, type Command } from '../command.js';
import { failIfDeferred } from '../crawler/deferred.js';
import { checkBrowserExecutable, cliLogger, collectUrls, openRuntime, reportingConfigFrom } from '../crawler/cli-context.js';
import { buildCrawlReport, formatCrawlReport } from '../crawler/crawl-report.js';
import { closeOnSignals } from './run.js';
import { SCHEDULE_OPTIONS, SCHEDULE_USAGE, parseScheduleFlags } from '../crawler/schedule-flags.js';
import { startCliEvents, type CliEvents } from '../crawler/cli-events.js';

const USAGE = [
  `usage: crawl crawl <file|URL...> [--json] [--learning on|off] ${SCHEDULE_USAGE}  (an existing file is a list of URLs, one per line; "-" is stdin)`,
  '       crawl crawl <file|URL...> --follow [--scope same-site|same-host|same-origin|all] [--max-depth N] [--max-pages N]',
  '             [--max-pages-per-host N] [--include GLOB|re:REGEX]... [--exclude GLOB|re:REGEX]... [--sitemaps] [--follow-nofollow] [--json]',
  `             ${SCHEDULE_USAGE}  (--max-age: re-crawl, fetching again stored pages older than it)`,
].join('\n');

const FOLLOW_OPTIONS = {
  follow: { type: 'boolean' },
  scope: { type: 'string' },
  'max-depth': { type: 'string' },
  'max-pages': { type: 'string' },
  'max-pages-per-host': { type: 'string' },
  include: { type: 'string', multiple: true },
  exclude: { type: 'string', multiple: true },
  sitemaps: { type: 'boolean' },
  'follow-nofollow': { type: 'boolean' },
} as const;

/** A non-negative integer option, or undefined when absent. */
function intOption(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer ≥ ${min}, got ${JSON.stringify(value)}\n${USAGE}`);
  return n;
}

const command: Command = {
  usage: USAGE,
  async run(args, io) {
    let parsed;
    try {
      parsed = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' }, learning: { type: 'string' }, ...FOLLOW_OPTIONS, ...SCHEDULE_OPTIONS } });
    } catch (err) {
      throw new UsageError(`${(err as Error).message}\n${USAGE}`);
    }
    if (parsed.positionals.length === 0) throw new UsageError(`no URLs or files given\n${USAGE}`);
    const { parseLearningFlag } = await import('./enqueue.js');
    const learningModeEnabled = parseLearningFlag(parsed.values.learning);
    const split = splitPositionals(parsed.positionals);
    for (const p of notFiles(split.urls)) io.stderr.write(`crawl crawl: ${p}: no such file (taken as a URL instead)\n`);
    const urls = await collectUrls(io, { ...split, stdinWhenEmpty: false });
    // An empty file (or stdin) is no crawl: without this the run would work the fleet's whole queue until idle.
    if (urls.length === 0) throw new UsageError(`no URLs in ${parsed.positionals.join(', ')}\n${USAGE}`);
    const v = parsed.values;
    const followOnly = ['scope', 'max-depth', 'max-pages', 'max-pages-per-host', 'include', 'exclude', 'sitemaps', 'follow-nofollow'].filter((k) => v[k as keyof typeof v] !== undefined);
    if (!v.follow && followOnly.length > 0) throw new UsageError(`--${followOnly[0]} needs --follow\n${USAGE}`);
    const config = reportingConfigFrom(io);
    const schedule = parseScheduleFlags(v, config.revisitMinIntervalS, USAGE);
    if (v.follow) {
      const note = sitemapSeedNote(urls, v.sitemaps ?? false);
      if (note) io.stderr.write(`${note}\n`);
      const { runFollowCrawl } = await import('./crawl-follow.js');
      return runFollowCrawl(io, urls, {
        maxAgeSeconds: schedule.maxAgeSeconds,
        revisit: schedule.revisit,
        scope: v.scope as never,
        maxDepth: intOption('max-depth', v['max-depth'], 0),
        maxPages: intOption('max-pages', v['max-pages'], 1),
        maxPagesPerHost: intOption('max-pages-per-host', v['max-pages-per-host'], 1),
        include: v.include,
        exclude: v.exclude,
        sitemaps: v.sitemaps,
        followNofollow: v['follow-nofollow'],
        json: v.json ?? false,
        usage: USAGE,
      });
    }
    checkBrowserExecutable(config);
    const logger = cliLogger(io, config.logLevel);
    const runtime = await openRuntime(config, { logger });
    let events: CliEvents | null = null;
    const release = closeOnSignals(runtime, () => undefined, async () => events?.stop());
    try {
      // The workers start first and the URLs go in in parts, so the first pages are fetched while the rest go in (on
      // 1,500 URLs the whole insert took about 0.25 s before the first request). With --max-age the URLs go in at
      // once: a URL given twice is refreshed once, which a later part could not know once its first copy is fetched.
      runtime.startWorkers();
      events = startCliEvents(runtime, config, logger);
      const enq = await enqueueInParts(runtime, urls, { learningModeEnabled, ...schedule }, schedule.maxAgeSeconds === undefined ? ENQUEUE_PART : urls.length);
      const ids = [...new Set(enq.accepted.map((a) => a.linkId))];
      // The progress bar's module loads only for a terminal.
      const cliProgress = io.stdout.isTTY && !parsed.values.json ? (await import('cli-progress')).default : null;
      const bar = cliProgress ? new cliProgress.SingleBar({ format: 'crawling [{bar}] {value}/{total} links settled', stream: io.stdout as NodeJS.WritableStream as never }, cliProgress.Presets.shades_classic) : null;
      bar?.start(ids.length, 0);
      // The bar is redrawn at most twice a second, whatever the idle check's pace.
      let drawnAt = 0;
      await runtime.waitUntilIdle({
        onTick: bar
          ? async () => {
              if (Date.now() - drawnAt < 500) return;
              drawnAt = Date.now();
              bar.update(await runtime.linkStore.countSettled(ids));
            }
          : undefined,
      });
      bar?.update(ids.length);
      bar?.stop();
      const report = buildCrawlReport(await runtime.linkStore.summaries(ids), enq.rejected);
      io.stdout.write(parsed.values.json ? `${JSON.stringify(report)}\n` : formatCrawlReport(report));
      return report.totals.failed > 0 || report.totals.rejected > 0 ? 1 : 0;
    } finally {
      release();
      // After a signal the dispatcher is stopped and the clients are closed: there is nothing left to deliver with.
      if (!runtime.closed) await events?.finish();
      await runtime.close();
    }
  },
};

/**
 * A warning for a follow crawl seeded with a sitemap's URL but without --sitemaps: the seed is fetched as a page, and
 * a sitemap read as a page gives no links, so the crawl would end after it. Null when there is nothing to say.
 */
export function sitemapSeedNote(seeds: readonly string[], sitemaps: boolean): string | null {
  if (sitemaps) return null;
  const named = seeds.find((s) => {
    try {
      return looksLikeSitemap(s);
    } catch {
      return false;
    }
  });
  return named ? `crawl crawl: ${named} is a sitemap: without --sitemaps it is fetched as a page and gives no links; add --sitemaps to crawl the pages it lists` : null;
}

/** URLs per enqueue while the workers already run. */
const ENQUEUE_PART = 250;

/** runtime.enqueue over `urls` in parts of `part`, in order: one result, as one call would give it. */
export async function enqueueInParts(runtime: Pick<CrawlerRuntime, 'enqueue'>, urls: readonly string[], opts: Parameters<CrawlerRuntime['enqueue']>[1], part: number): Promise<EnqueueResult> {
  const out: EnqueueResult = { accepted: [], rejected: [] };
  for (let i = 0; i < urls.length || i === 0; i += Math.max(1, part)) {
    const r = await runtime.enqueue(urls.slice(i, i + Math.max(1, part)), opts);
    out.accepted.push(...r.accepted);
    out.rejected.push(...r.rejected);
    failIfDeferred(r.deferred);
  }
  return out;
}

/**
 * Which positionals are files of URLs ("-" is stdin) and which are URLs. A file must exist: anything else is a URL
 * candidate, so a typo or a bare word is reported as that one invalid URL while the rest of the batch goes in, instead
 * of aborting the crawl as an unreadable file.
 */
export function splitPositionals(positionals: readonly string[], isFile: (p: string) => boolean = existingFile): { urls: string[]; files: string[] } {
  const files = positionals.filter((p) => p === '-' || (!/^[a-z][a-z0-9+.-]*:/i.test(p) && isFile(p)));
  return { urls: positionals.filter((p) => !files.includes(p)), files };
}

/**
 * The URL candidates that were most likely meant as files of URLs, not there: no scheme, and a path or a list file's
 * name (`lists/seeds`, `urls.txt`). They still go in as URLs (and are rejected as such); this is the word for why.
 */
export function notFiles(urlCandidates: readonly string[]): string[] {
  return urlCandidates.filter((p) => !/^[a-z][a-z0-9+.-]*:/i.test(p) && (/^\.{0,2}\//.test(p) || /\.(?:txt|csv|tsv|json|jsonl|ndjson|list|lst|log|md)$/i.test(p)));
}

function existingFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

export default command;
