import cliProgress from 'cli-progress';
import { IN_PROGRESS_STATUSES, OUT_OF_SCOPE_REASONS, type CrawlView, type OutOfScopeReason } from '@crawler/db';
import type { LinkStatus } from '@crawler/core';
import { CrawlSpecError, CrawlerStoppedError, type CrawlSpec } from '@crawler/pipeline';
import { UsageError, type CommandIO } from '../command.js';
import { failIfDeferred } from '../crawler/deferred.js';
import { checkBrowserExecutable, cliLogger, openRuntime, reportingConfigFrom } from '../crawler/cli-context.js';
import { buildCrawlReport, formatCrawlReport } from '../crawler/crawl-report.js';
import { closeOnSignals } from './run.js';
import { startCliEvents, type CliEvents } from '../crawler/cli-events.js';

/** `crawl crawl --follow`'s options beyond the seeds. */
export interface FollowOptions extends Omit<CrawlSpec, 'seeds'> {
  json: boolean;
  usage: string;
  /** How often the crawl's state is read. @defaultValue 250 */
  pollMs?: number;
}

/** Stranded crawl links (queued without a route job after a crash) get their job back this often while waiting. */
const REQUEUE_EVERY_MS = 30_000;

/**
 * Create a link-following crawl from the seeds, run the router and fetchers in this process until the crawl is done
 * (none of its links queued, routing, fetching or paused: the same answer any process would give), and print every
 * link of it with the crawl's counters.
 */
export async function runFollowCrawl(io: CommandIO, seeds: string[], opts: FollowOptions): Promise<number> {
  const config = reportingConfigFrom(io);
  checkBrowserExecutable(config);
  const logger = cliLogger(io, config.logLevel);
  const runtime = await openRuntime(config, { logger });
  let events: CliEvents | null = null;
  const release = closeOnSignals(runtime, () => undefined, async () => events?.stop());
  try {
    let created;
    try {
      const { json: _j, usage: _u, pollMs: _p, ...spec } = opts;
      created = await runtime.crawls.create({ ...spec, seeds });
    } catch (err) {
      if (err instanceof CrawlSpecError) throw new UsageError(`${err.message}\n${opts.usage}`);
      throw err;
    }
    const id = created.crawl.id;
    failIfDeferred(created.deferred);
    // A crawl follows links from the pages it fetches: with every seed another owner's it has nothing to start from.
    if (created.admitted === 0 && created.rejected.length < seeds.length) {
      const statuses = await runtime.linkStore.statusesByUrl(created.crawl.seeds);
      io.stderr.write(nothingToFetch(created.crawl.seeds, statuses, created.crawl.maxAgeSeconds));
    }
    runtime.startWorkers();
    events = startCliEvents(runtime, config, logger);
    const bar = io.stdout.isTTY && !opts.json ? new cliProgress.SingleBar({ format: 'crawling [{bar}] {value}/{total} pages settled, {discovered} links seen', stream: io.stdout as never }, cliProgress.Presets.shades_classic) : null;
    bar?.start(created.admitted, 0, { discovered: 0 });
    let lastRequeue = Date.now();
    for (let quiet = 0; quiet < 2; ) {
      await new Promise((r) => setTimeout(r, opts.pollMs ?? 250));
      // A signal closed the runtime (its in-flight pages are finished): stop here, not on a query to a closed pool.
      if (runtime.closed) throw new CrawlerStoppedError();
      const view = await runtime.crawlStore.view(id);
      if (!view) break;
      bar?.setTotal(view.counters.admitted);
      bar?.update(view.counters.done + view.counters.failed, { discovered: view.counters.discovered });
      quiet = view.state === 'running' ? 0 : quiet + 1;
      if (Date.now() - lastRequeue > REQUEUE_EVERY_MS) {
        lastRequeue = Date.now();
        await runtime.requeueStrandedCrawlLinks(REQUEUE_EVERY_MS);
      }
    }
    bar?.stop();
    const view = await runtime.crawlStore.view(id);
    const rows = await runtime.linkStore.crawlSummaries(id);
    const report = buildCrawlReport(rows, created.rejected);
    const crawl = view ? { id, status: view.state, counters: view.counters, outOfScopeSamples: view.outOfScopeSamples, sitemaps: created.sitemaps ? { files: created.sitemaps.files, urls: created.sitemaps.urls.length, errors: created.sitemaps.errors } : undefined } : { id };
    if (opts.json) io.stdout.write(`${JSON.stringify({ crawl, ...report })}\n`);
    else {
      io.stdout.write(formatCrawlReport(report));
      if (view) {
        const c = view.counters;
        io.stdout.write(`crawl ${id} ${view.state}: ${c.discovered} links seen, ${c.admitted} admitted, ${c.duplicate} duplicate, ${c.outOfScope} out of scope${outOfScopeBreakdown(view)}, ${c.overLimit} over a limit${c.overDepth > 0 ? ` (${c.overDepth} of them past maxDepth)` : ''}${view.maxAgeSeconds !== null ? `, ${c.refreshed} stored pages fetched again, ${c.fresh} fresh enough` : ''}; ${c.done} done, ${c.failed} failed\n`);
        io.stdout.write(outOfScopeSampleLines(view));
      }
    }
    return report.totals.failed > 0 || report.totals.rejected > 0 ? 1 : 0;
  } finally {
    release();
    // After a signal the dispatcher is stopped and the clients are closed: there is nothing left to deliver with.
    if (!runtime.closed) await events?.finish();
    await runtime.close();
  }
}

/**
 * Why a crawl admitted none of its seeds, for stderr: each seed is a link some earlier crawl or enqueue owns, either
 * stored (fetched again only with a max age it is older than) or still in progress for its owner (fetched once, for
 * them: no max age takes it over, and the crawl follows no link from it).
 */
export function nothingToFetch(seeds: readonly string[], statuses: ReadonlyMap<string, LinkStatus>, maxAgeSeconds: number | null): string {
  const busy = seeds.filter((url) => (IN_PROGRESS_STATUSES as readonly string[]).includes(statuses.get(url) ?? ''));
  const lines: string[] = [];
  if (busy.length > 0) {
    const which = busy.length === 1 ? `the seed ${busy[0]} is` : `${busy.length} seeds are`;
    lines.push(`nothing to fetch: ${which} in progress for an earlier crawl or enqueue (queued, routing, fetching or paused; a page is fetched once), `
      + `so this crawl follows no link from ${busy.length === 1 ? 'it' : 'them'}; once it is done, --max-age 0 fetches it again and re-crawls from it`);
  }
  if (busy.length < seeds.length) {
    const every = busy.length > 0 ? 'every other seed' : 'every seed';
    lines.push(maxAgeSeconds === null
      ? `nothing to fetch: ${every} is already stored (by an earlier crawl or enqueue), so no link is followed; --max-age 0 fetches them again and re-crawls from them`
      : `nothing to fetch: ${every} was fetched more recently than --max-age, so no link is followed; a shorter --max-age fetches them again`);
  }
  return lines.map((l) => `${l}\n`).join('');
}

/** What each reason refused, in words: `scope` by the crawl's scope (another site, host or origin than the seeds'). */
function reasonWords(reason: OutOfScopeReason, scope: CrawlView['scope']): string {
  switch (reason) {
    case 'scope':
      return scope === 'same-host' ? 'another host' : scope === 'same-origin' ? 'another origin' : 'another site';
    case 'include':
      return 'no include matched';
    case 'exclude':
      return 'excluded';
    case 'trap':
      return 'a path repeating itself';
    case 'nofollow':
      return 'nofollow';
  }
}

/** ` (12 another site, 3 excluded)`: the out-of-scope count by reason, the reasons that refused any. */
export function outOfScopeBreakdown(view: Pick<CrawlView, 'scope' | 'counters'>): string {
  const parts = OUT_OF_SCOPE_REASONS.filter((r) => view.counters.outOfScopeByReason[r] > 0).map((r) => `${view.counters.outOfScopeByReason[r]} ${reasonWords(r, view.scope)}`);
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

/** One line per reason with the first URLs it refused: `  out of scope, excluded: https://…, https://…`. */
export function outOfScopeSampleLines(view: Pick<CrawlView, 'scope' | 'outOfScopeSamples'>): string {
  return OUT_OF_SCOPE_REASONS.filter((r) => (view.outOfScopeSamples[r]?.length ?? 0) > 0)
    .map((r) => `  out of scope, ${reasonWords(r, view.scope)}: ${view.outOfScopeSamples[r]!.join(' ')}\n`)
    .join('');
}
