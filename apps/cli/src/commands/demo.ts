import { parseArgs } from 'node:util';
import { LINK_STATUSES } from '@crawler/core';
import { recreateDatabase } from '@crawler/db';
import { createRuntime, loadConfig, type CrawlerRuntime } from '@crawler/pipeline';
import { ROUTE_QUEUE, closeRedisConnection, createRedisConnection, deleteRedisPrefix, RouteJobSchema, RouteResultSchema } from '@crawler/queue';
import { startSimWeb, type SimWeb, type SiteSpec } from '@crawler/sim-web';
import { UsageError, type Command, type CommandIO } from '../command.js';
import { failIfDeferred } from '../crawler/deferred.js';
import { cliLogger } from '../crawler/cli-context.js';
import { DEMO_ENV_SCHEMA, cliEnv, type DemoEnv } from '../env.js';

const USAGE = 'usage: crawl demo [--json]   (env: DATABASE_URL, DEMO_DATABASE, REDIS_URL, DEMO_QUEUE_PREFIX, CHROMIUM_PATH)';

/** Pages per site: the first crawl must give each site enough attempts (7 → sample factor 0.7) to clear 0.6. */
const FIRST_CRAWL_PAGES = 7;
const SECOND_CRAWL_PAGES = 4;

/**
 * The small web of the demo: one site of each kind. Both walls answer every first visit with a cookie-and-reload
 * interstitial, browsers included; the shop's also refuses a browser that exposes navigator.webdriver. The rate limit
 * is real time: 10 pages a minute.
 */
const DEMO_SITES: SiteSpec[] = [
  { kind: 'static', name: 'news (static HTML)' },
  { kind: 'spa', name: 'app (JavaScript-rendered)' },
  { kind: 'botwall', name: 'shop (wall: no automation)' },
  { kind: 'interstitial', name: 'forum ("Just a moment…")' },
  { kind: 'ratelimit', name: 'api docs (rate-limited)', rateLimit: { maxRequests: 10, windowMs: 60_000 } },
  { kind: 'files', name: 'reports (PDF files)' },
];

/** One link of a crawl, as the report shows it. */
export interface DemoLinkRow {
  site: string;
  url: string;
  fetcher: string | null;
  source: string | null;
  confidence: number | null;
  attempts: number;
  /** The fetchers tried, in order. */
  tried: string[];
  outcome: string;
}

/** One crawl's links and totals. */
export interface DemoCrawl {
  links: DemoLinkRow[];
  /** Decisions by selection source (learned, probe, prior…), counting the router's first decision per link. */
  sources: Record<string, number>;
  probes: number;
  learned: number;
  /** Page requests the sites received during this crawl, and how many of them came from a browser. */
  siteRequests: number;
  browserRequests: number;
  done: number;
  paused: number;
  failed: number;
}

export interface DemoSummary {
  database: string;
  crawls: [DemoCrawl, DemoCrawl];
}

/** The demo's queues, politeness and probe keys from an earlier run: gone, so the run starts from nothing. */
async function clearDemoKeys(redisUrl: string, prefix: string): Promise<void> {
  const r = createRedisConnection(redisUrl, 'producer');
  try {
    await deleteRedisPrefix(r, prefix);
  } finally {
    await closeRedisConnection(r);
  }
}

async function crawlOnce(runtime: CrawlerRuntime, web: SimWeb, from: number, pages: number): Promise<DemoCrawl> {
  const before = web.stats().totals;
  const urls = web.sites.flatMap((s) => s.urls(pages, from));
  const enq = await runtime.enqueue(urls);
  failIfDeferred(enq.deferred);
  const ids = enq.accepted.map((a) => a.linkId);
  await runtime.waitUntilIdle();
  const after = web.stats().totals;

  const rows = await runtime.linkStore.withAttempts(ids);
  // The router's first decision of each link, with its confidence: the completed route jobs' results.
  const routed = new Map<string, { source?: string; confidence?: number; fetcher?: string }>();
  const jobs = await runtime.queues.queue(ROUTE_QUEUE).getJobs(['completed'], 0, 10_000);
  for (const j of jobs.sort((a, b) => (a.finishedOn ?? 0) - (b.finishedOn ?? 0))) {
    const data = RouteJobSchema.safeParse(j.data);
    const rv = RouteResultSchema.safeParse(j.returnvalue);
    if (data.success && rv.success && rv.data.kind === 'routed' && !routed.has(data.data.linkId)) routed.set(data.data.linkId, rv.data);
  }
  const order = new Map(urls.map((u, i) => [u, i]));
  const links: DemoLinkRow[] = rows
    .sort((a, b) => (order.get(a.initialUrl) ?? 0) - (order.get(b.initialUrl) ?? 0))
    .map((l) => {
      const first = routed.get(l.id);
      return {
        site: web.site(l.domain)?.name ?? l.domain,
        url: new URL(l.url).pathname,
        fetcher: l.fetcher,
        source: first?.source ?? l.attempts[0]?.selectionSource ?? l.selectionSource,
        confidence: first?.confidence ?? null,
        attempts: l.attemptCount,
        tried: l.attempts.map((a) => `${a.fetcher}${a.success ? '' : `✗${a.errorType ? `:${a.errorType}` : ''}`}`),
        outcome: outcomeOf(l),
      };
    });
  const sources: Record<string, number> = {};
  for (const l of links) sources[l.source ?? 'none'] = (sources[l.source ?? 'none'] ?? 0) + 1;
  return {
    links,
    sources,
    probes: sources.probe ?? 0,
    learned: sources.learned ?? 0,
    siteRequests: after.pageRequests - before.pageRequests,
    browserRequests: after.requests.browser - before.requests.browser,
    done: links.filter((l) => l.outcome === 'done').length,
    paused: links.filter((l) => l.outcome.startsWith('paused') || l.outcome.startsWith('waiting')).length,
    failed: links.filter((l) => l.outcome.startsWith('failed')).length,
  };
}

function perDone(c: DemoCrawl): string {
  return c.done > 0 ? (c.siteRequests / c.done).toFixed(2) : '-';
}

function outcomeOf(l: { status: string; lastErrorType: string | null; pausedUntil: Date | null }): string {
  if (l.status === LINK_STATUSES.done) return 'done';
  if (l.status === LINK_STATUSES.paused) return `paused (${l.lastErrorType ?? 'blocked'}) until ${l.pausedUntil?.toISOString().slice(11, 19) ?? '?'}`;
  if (l.status === LINK_STATUSES.failed) return `failed (${l.lastErrorType ?? 'unknown'})`;
  // The queues are idle, so a link still on its way has a delayed job: its domain is paused by another link's block.
  return 'waiting: domain paused';
}

function formatCrawl(title: string, c: DemoCrawl): string {
  const lines = [`\n== ${title} ==`, `${'site'.padEnd(26)} ${'page'.padEnd(17)} ${'fetcher'.padEnd(19)} ${'why'.padEnd(8)} ${'conf'.padEnd(5)} ${'tries'.padEnd(5)} ${'attempts'.padEnd(42)} outcome`];
  for (const l of c.links) {
    const conf = l.confidence === null ? '-' : l.confidence.toFixed(2);
    lines.push(`${l.site.padEnd(26)} ${l.url.padEnd(17)} ${(l.fetcher ?? '-').padEnd(19)} ${(l.source ?? '-').padEnd(8)} ${conf.padEnd(5)} ${String(l.attempts).padEnd(5)} ${l.tried.join(' → ').padEnd(42)} ${l.outcome}`);
  }
  const src = Object.entries(c.sources)
    .sort()
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  lines.push(`decisions: ${src} | probes=${c.probes} learned=${c.learned} | site requests=${c.siteRequests} (browser ${c.browserRequests}) | done=${c.done} paused/waiting=${c.paused} failed=${c.failed}`);
  return `${lines.join('\n')}\n`;
}

/** Run the demo end to end; everything it starts is stopped before it resolves. */
export async function runDemo(io: CommandIO, env: DemoEnv): Promise<DemoSummary> {
  const say = (s: string) => io.stdout.write(s);
  // A clean database every run, so the first crawl really starts knowing nothing.
  const dbUrl = await recreateDatabase(env.databaseUrl, env.demoDatabase);
  await clearDemoKeys(env.redisUrl, env.demoQueuePrefix);
  const web = await startSimWeb({ sites: DEMO_SITES, firstHost: env.demoFirstHost });
  let runtime: CrawlerRuntime | undefined;
  try {
    say(`demo database ${env.demoDatabase} (recreated), Redis prefix ${env.demoQueuePrefix}; a local web of ${web.sites.length} sites:\n`);
    for (const s of web.sites) say(`  ${s.name.padEnd(26)} ${s.origin}\n`);
    const config = loadConfig({
      DATABASE_URL: dbUrl,
      REDIS_URL: env.redisUrl,
      QUEUE_PREFIX: env.demoQueuePrefix,
      CHROMIUM_PATH: env.chromiumPath,
      LEARNING_MODE_ENABLED: 'true',
      // Loopback sites are private addresses: the SSRF guard must let them through for the demo only.
      ALLOW_PRIVATE_NETWORKS: 'true',
      FETCHERS: 'simple_http:4,playwright:1,playwright_stealth:1',
      DOMAIN_MAX_CONCURRENCY: '2',
      DOMAIN_MIN_DELAY_MS: '100',
      FETCH_TIMEOUT_MS: '20000',
      LOG_LEVEL: env.logLevel,
    });
    runtime = createRuntime(config, { logger: cliLogger(io, env.logLevel) });
    runtime.startWorkers();
    const first = await crawlOnce(runtime, web, 0, FIRST_CRAWL_PAGES);
    say(formatCrawl(`crawl 1: ${FIRST_CRAWL_PAGES} pages per site, nothing known yet`, first));
    const second = await crawlOnce(runtime, web, FIRST_CRAWL_PAGES, SECOND_CRAWL_PAGES);
    say(formatCrawl(`crawl 2: ${SECOND_CRAWL_PAGES} new pages per site, routed by what crawl 1 taught`, second));
    say(
      `\nsummary: probes ${first.probes} → ${second.probes}, learned decisions ${first.learned} → ${second.learned}, ` +
        `site requests per page fetched ${perDone(first)} → ${perDone(second)}, pages not yet fetched ${first.paused + first.failed} → ${second.paused + second.failed}\n` +
        'why: a probe is a cheap plain-HTTP request whose answer picks the fetcher. "learned" means the past attempts on\n' +
        "this site (and, for files, on its file type) made one fetcher confident enough (success rate × sample factor > 0.6)\n" +
        'to skip the probe. A ✗ shows a fetcher that failed and what happened next: a block pauses the link and the site,\n' +
        'and the link is routed again when the pause ends.\n' +
        'PDFs are learned from the start: seeded priors (a .pdf is a file for plain HTTP).\n',
    );
    return { database: env.demoDatabase, crawls: [first, second] };
  } finally {
    await runtime?.close({ drainTimeoutMs: 5_000 });
    await web.close();
    await clearDemoKeys(env.redisUrl, env.demoQueuePrefix).catch(() => undefined);
  }
}

const command: Command = {
  usage: USAGE,
  async run(args, io) {
    let parsed;
    try {
      parsed = parseArgs({ args, options: { json: { type: 'boolean' } } });
    } catch (err) {
      throw new UsageError(`${(err as Error).message}\n${USAGE}`);
    }
    const env = cliEnv(DEMO_ENV_SCHEMA, io.env);
    if (parsed.values.json) {
      const sink = { ...io, stdout: io.stderr } as CommandIO;
      io.stdout.write(`${JSON.stringify(await runDemo(sink, env))}\n`);
    } else {
      await runDemo(io, env);
    }
    return 0;
  },
};

export default command;
