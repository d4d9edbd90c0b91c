/**
 * Hostile and enormous pages against one crawler process, one case per process: a loopback server serves the case's
 * page as a crawl's seed (so its links are extracted and admitted) beside a control site on another host whose pages
 * must keep flowing. Measured in the crawler's own process: the event loop's longest delay (perf_hooks
 * monitorEventLoopDelay), peak RSS over the start, BullMQ stalls (QueueEvents 'stalled') and fetches made twice, how
 * the seed ends (status, error type, stored bytes) and how many links it made the crawl admit.
 *
 *   node dist/hostile-pages.js --case links500k [--fetcher simple_http|playwright] [--timeout-ms 120000]
 *   node dist/hostile-pages.js --list
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { brotliCompressSync, constants as zc, gzipSync } from 'node:zlib';
import { HOSTILE_BODIES, hostileHtml } from './hostile-bodies.js';

const MiB = 1024 * 1024;
const MAX_BYTES = 10 * MiB;

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const html = hostileHtml;

function send(res: ServerResponse, body: string | Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers });
  res.end(body);
}

/** Multi-member gzip: `members` copies of 64 MiB of zeros (about 64 KB each on the wire). */
let gzipMember: Buffer | undefined;
const madeBodies = new Map<string, Buffer>();
let brotliBomb: Buffer | undefined;

const CASES: Record<string, Handler> = {
  tiny: (_q, res) => send(res, html('<a href="/a">a</a>')),
  over: (_q, res) => send(res, html('y'.repeat(MAX_BYTES + 1))),
  overChunked: (_q, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    const chunk = 'z'.repeat(MiB);
    for (let i = 0; i < 11; i++) res.write(chunk);
    res.end();
  },
  // The big pages are made once, before anything is measured (see main): making them per request put the server's
  // own strings in the crawler's peak.
  ...Object.fromEntries(Object.keys(HOSTILE_BODIES).map((k) => [k, (_q: IncomingMessage, res: ServerResponse) => send(res, madeBodies.get(k)!)])),
  slowloris: (_q, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.write('<!doctype html><html><body>');
    const t = setInterval(() => res.write('x'), 3000);
    res.on('close', () => clearInterval(t));
  },
  gzipBomb: (_q, res) => {
    res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
    // 64 members: 4 GiB inflated.
    let n = 0;
    const more = () => {
      while (n < 64) {
        n++;
        if (!res.write(gzipMember!)) return void res.once('drain', more);
      }
      res.end();
    };
    more();
  },
  brotliBomb: (_q, res) => {
    res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'br', 'content-length': String(brotliBomb!.length) });
    res.end(brotliBomb!);
  },
  alternates: (_q, res) => {
    const parts: string[] = [];
    for (let i = 0; i < 20_000; i++) parts.push(`<link rel=alternate type=application/rss+xml href=/feed/${i}.xml>`);
    send(res, html('', parts.join('')));
  },
  badUtf8: (_q, res) => {
    // A UTF-16LE BOM, a meta saying UTF-8, and bytes that are neither: lone surrogates, overlongs, 0xFF runs.
    const junk = Buffer.alloc(4 * MiB);
    for (let i = 0; i < junk.length; i++) junk[i] = i % 7 === 0 ? 0xff : i % 5 === 0 ? 0xc0 : i % 3 === 0 ? 0xed : 0x3c;
    const body = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<html><head><meta charset="utf-8"></head><body><a href="/u">u</a>'), junk, Buffer.from('</body></html>')]);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-16' });
    res.end(body);
  },
  refreshLoop: (req, res) => {
    const n = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('n') ?? '0');
    send(res, html(`<a href="/c">c</a>`, `<meta http-equiv="refresh" content="0; url=/case/refreshLoop?n=${n + 1}">`));
  },
  refreshSelf: (_q, res) => send(res, html(`<a href="/c">c</a>`, `<meta http-equiv="refresh" content="0">`)),
};

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] ?? fallback : fallback;
}

async function listen(handler: Handler, host: string): Promise<{ origin: string; close(): void; hits: Map<string, number> }> {
  const hits = new Map<string, number>();
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return { origin: `http://${host}:${(server.address() as AddressInfo).port}`, hits, close: () => { server.closeAllConnections(); server.close(); } };
}

async function main(): Promise<void> {
  if (process.argv.includes('--list')) {
    console.log(Object.keys(CASES).join('\n'));
    return;
  }
  const name = arg('case', 'links500k');
  const fetcher = arg('fetcher', 'simple_http');
  const timeoutMs = Number(arg('timeout-ms', '120000'));
  const handler = CASES[name];
  if (!handler) throw new Error(`unknown case ${name}`);
  // Made before anything is measured: the server shares the crawler's process.
  const make = HOSTILE_BODIES[name];
  if (make) madeBodies.set(name, make());
  if (name === 'gzipBomb') gzipMember = gzipSync(Buffer.alloc(64 * MiB), { level: 9 });
  if (name === 'brotliBomb') {
    // 64 MiB of zeros in one brotli stream (quality 5 keeps the making quick): past maxBytes six times over.
    const block = brotliCompressSync(Buffer.alloc(64 * MiB), { params: { [zc.BROTLI_PARAM_QUALITY]: 5 } });
    brotliBomb = block;
  }
  const { createTestDatabase } = await import('@crawler/db/testing');
  const { createRuntime, loadConfig } = await import('@crawler/pipeline');
  const { deleteRedisPrefix, fetchQueueName } = await import('@crawler/queue');
  const { QueueEvents } = await import('bullmq');
  const { Redis } = await import('ioredis');

  const hostile = await listen((req, res) => {
    if (req.url?.startsWith(`/case/${name}`)) return handler(req, res);
    send(res, html('<a href="/">home</a>'));
  }, '127.0.7.1');
  const control = await listen((_q, res) => send(res, html('<a href="/">home</a>')), '127.0.7.2');

  const db = await createTestDatabase(`bench_hostile_${name}`.toLowerCase());
  const prefix = `{crawler_bench_hostile_${process.pid}}`;
  const config = loadConfig({
    DATABASE_URL: db.url, QUEUE_PREFIX: prefix, ALLOW_PRIVATE_NETWORKS: 'true', FETCHERS: fetcher === 'simple_http' ? 'simple_http:4' : `${fetcher}:2,simple_http:2`,
    ...(fetcher === 'simple_http' ? {} : { LEARNING_MODE_ENABLED: 'false', DEFAULT_FETCHER: fetcher }),
    DOMAIN_MAX_CONCURRENCY: '2', DOMAIN_MIN_DELAY_MS: '0', ROBOTS_ENABLED: 'false', LOG_LEVEL: 'warn', FETCH_TIMEOUT_MS: '30000',
    LOCK_DURATION_MS: '30000', STALLED_INTERVAL_MS: '15000', FETCH_INLINE: 'false',
  });
  const runtime = createRuntime(config, { prisma: db.prisma });
  const stalls: string[] = [];
  const events = config.fetchers.map((f) => new QueueEvents(fetchQueueName(f.name), { connection: { url: config.redisUrl }, prefix }));
  for (const e of events) e.on('stalled', ({ jobId }) => stalls.push(jobId));
  const loop = monitorEventLoopDelay({ resolution: 10 });
  let rss0 = process.memoryUsage().rss;
  let rssPeak = rss0;
  let peakBefore = rss0;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 50);
  let started = performance.now();
  try {
    runtime.startWorkers();
    // Warm-up: the process's start (Prisma, BullMQ, the analysis thread, Chromium) is not the page's cost.
    const warm = await runtime.enqueue([`${control.origin}/warm`]);
    for (let w = 0; w < 240; w++) {
      const row = await db.prisma.link.findUnique({ where: { id: warm.accepted[0]!.linkId } });
      if (row?.status === 'done' || row?.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 250));
    }
    loop.enable();
    rss0 = process.memoryUsage().rss;
    rssPeak = rss0;
    // getrusage's peak sees what the 50 ms sampler misses inside a synchronous parse; it is the process's peak since
    // its start, so it says something only where it passes the peak before the page (printed too).
    const maxRss0 = process.resourceUsage().maxRSS * 1024;
    peakBefore = maxRss0;
    started = performance.now();
    const seedUrl = `${hostile.origin}/case/${name}`;
    const crawl = await runtime.crawls.create({ seeds: [seedUrl], scope: 'same-host', maxDepth: 1 });
    // The control site: one link every 200 ms while the hostile page is fetched; each must end done.
    const controlIds: string[] = [];
    const controlTimer = setInterval(() => {
      void runtime.enqueue([`${control.origin}/c/${controlIds.length}`]).then((r) => controlIds.push(...r.accepted.map((a) => a.linkId)));
    }, 200);
    let seed = null as null | { status: string; lastErrorType: string | null; lastError: string | null; fetcher: string | null; attemptCount: number };
    for (;;) {
      await new Promise((r) => setTimeout(r, 250));
      const row = await db.prisma.link.findFirst({ where: { crawlId: crawl.crawl.id, url: seedUrl } });
      if (row && (row.status === 'done' || row.status === 'failed')) {
        seed = row;
        break;
      }
      if (performance.now() - started > timeoutMs) {
        seed = row;
        break;
      }
    }
    const seedMs = performance.now() - started;
    // A few more seconds of control links after the seed settled, then their outcome.
    await new Promise((r) => setTimeout(r, 3000));
    clearInterval(controlTimer);
    await new Promise((r) => setTimeout(r, 3000));
    const controls = await db.prisma.link.groupBy({ by: ['status'], where: { id: { in: controlIds } }, _count: true });
    const admitted = await db.prisma.link.count({ where: { crawlId: crawl.crawl.id, NOT: { url: seedUrl } } });
    const seedRow = await db.prisma.link.findFirst({ where: { crawlId: crawl.crawl.id, url: seedUrl } });
    const pages = seedRow ? await db.prisma.fetchedContent.findMany({ where: { linkId: seedRow.id }, select: { sizeBytes: true } }) : [];
    const attempts = seedRow ? await db.prisma.fetcherAttempt.count({ where: { linkId: seedRow.id } }) : -1;
    loop.disable();
    console.log(JSON.stringify({
      case: name, fetcher,
      seed: seed ? { status: seed.status, errorType: seed.lastErrorType, lastError: seed.lastError?.slice(0, 160), fetcher: seed.fetcher, attemptCount: seed.attemptCount } : null,
      seedSettledMs: Math.round(seedMs), attempts, storedBytes: pages.map((p) => p.sizeBytes),
      admittedLinks: admitted, serverHits: hostile.hits.get(`/case/${name}`) ?? 0,
      stalled: stalls.length, controls: Object.fromEntries(controls.map((c) => [c.status, c._count])),
      loopMaxMs: Math.round(loop.max / 1e6), loopP99Ms: Math.round(loop.percentile(99) / 1e6),
      rssStartMiB: Math.round(rss0 / MiB), rssPeakMiB: Math.round(rssPeak / MiB), rssGrowthMiB: Math.round((rssPeak - rss0) / MiB),
      maxRssBeforeMiB: Math.round((peakBefore - rss0) / MiB), maxRssGrowthMiB: Math.round((process.resourceUsage().maxRSS * 1024 - rss0) / MiB),
    }));
  } finally {
    clearInterval(sampler);
    await runtime.close({ drainTimeoutMs: 2_000 }).catch(() => undefined);
    await Promise.all(events.map((e) => e.close()));
    const r = new Redis(config.redisUrl);
    await deleteRedisPrefix(r, prefix);
    r.disconnect();
    await db.drop();
    hostile.close();
    control.close();
  }
}

await main();
process.exit(0);
