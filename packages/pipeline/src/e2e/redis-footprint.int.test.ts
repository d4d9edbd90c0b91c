/**
 * Redis footprint, outside in: a fleet crawls many loopback hosts (healthy, rate-limiting, blocking, hanging, failing
 * TLS), some on a revisit schedule and some through a link-following crawl with sitemaps, and once it is idle every key
 * left under its prefix must either expire by itself or be one of the few fixed keys whose size does not grow with the
 * number of domains, links or pages ever crawled (Postgres is the source of truth; Redis holds rebuildable work).
 * `FOOTPRINT_HOSTS=300` makes it the measurement of README's "Redis footprint" table; it prints the table either way.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { staticArticle } from '@crawler/testkit';
import { startSimWeb, type SimWeb } from '@crawler/sim-web';
import { startE2e, waitFor, REDIS_URL, type E2eCrawler } from '../__fixtures__/e2e.js';

const HOSTS = Number(process.env.FOOTPRINT_HOSTS ?? 30);
/** `FOOTPRINT_BROWSERS=1` adds both browsers, so the walls leave clearance cookies too. */
const BROWSERS = process.env.FOOTPRINT_BROWSERS === '1';
const PAGES = 5;
/** Kind of host i: six of ten healthy, then one each rate-limiting, blocking, hanging and failing TLS. */
const KINDS = ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ratelimit', 'block', 'hang', 'tls'] as const;

let crawler: E2eCrawler | undefined;
let web: SimWeb | undefined;
const servers: Server[] = [];
const hanging = new Set<import('node:http').ServerResponse>();

afterAll(async () => {
  for (const res of hanging) res.destroy();
  await crawler?.cleanup();
  await web?.close();
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
});

function hostOf(i: number): string {
  const n = 2 + i + Math.floor(i / 250) * 6;
  return `127.0.${100 + Math.floor(n / 256)}.${n % 256 || 1}`;
}

async function startHost(i: number): Promise<string> {
  const kind = KINDS[i % KINDS.length]!;
  let served = 0;
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    if (path === '/robots.txt') return void res.writeHead(404).end();
    if (path === '/sitemap.xml') {
      const origin = `http://${req.headers.host}`;
      const locs = Array.from({ length: PAGES }, (_, p) => `<url><loc>${origin}/p/${p}</loc><lastmod>2026-01-01</lastmod></url>`).join('');
      return void res.writeHead(200, { 'content-type': 'application/xml' }).end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs}</urlset>`);
    }
    if (kind === 'hang') return void hanging.add(res);
    if (kind === 'block') return void res.writeHead(403, { 'content-type': 'text/html' }).end('<html><head><title>Access denied</title></head><body><h1>Access denied</h1><p>You have been blocked.</p></body></html>');
    served += 1;
    if (kind === 'ratelimit' && served % 2 === 0) return void res.writeHead(429, { 'retry-after': '1', 'content-type': 'text/html' }).end('<html><body>Too Many Requests</body></html>');
    const p = Number(/\/p\/(\d+)/.exec(path)?.[1] ?? 0);
    const links = [(p + 1) % PAGES, (p + 2) % PAGES].map((n) => `/p/${n}`);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', etag: `"v${p}"` }).end(staticArticle({ title: `Host ${i} page ${p}`, links }));
  });
  servers.push(server);
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, hostOf(i), () => resolve()));
  const { port } = server.address() as AddressInfo;
  return `${kind === 'tls' ? 'https' : 'http'}://${hostOf(i)}:${port}`;
}

/** A key with its host names, ids and numbers replaced by placeholders. */
function patternOf(key: string, prefix: string): string {
  return key
    .replace(prefix, '<prefix>')
    .replace(/\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}(:\d+)?/g, '<host>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>')
    .replace(/[0-9a-f]{16,}/gi, '<hex>')
    .replace(/\d+/g, '<n>');
}

interface KeyRow {
  pattern: string;
  type: string;
  count: number;
  bytes: number;
  withTtl: number;
  /** The longest time to live among the pattern's keys, ms (-1: none has one). */
  maxTtlMs: number;
  members: number;
}

async function footprint(redis: Redis, prefix: string): Promise<KeyRow[]> {
  const rows = new Map<string, KeyRow>();
  let cursor = '0';
  const match = `${prefix.replace(/[{}[\]*?]/g, '\\$&')}*`;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const [type, ttl, bytes] = await Promise.all([redis.type(key), redis.pttl(key), redis.memory('USAGE', key)]);
      const size =
        type === 'zset' ? await redis.zcard(key) : type === 'hash' ? await redis.hlen(key) : type === 'set' ? await redis.scard(key) : type === 'list' ? await redis.llen(key) : type === 'stream' ? await redis.xlen(key) : 1;
      const pattern = patternOf(key, prefix);
      const row = rows.get(`${pattern} ${type}`) ?? { pattern, type, count: 0, bytes: 0, withTtl: 0, maxTtlMs: -1, members: 0 };
      row.count += 1;
      row.bytes += Number(bytes ?? 0);
      row.withTtl += ttl >= 0 ? 1 : 0;
      row.maxTtlMs = Math.max(row.maxTtlMs, ttl);
      row.members += size;
      rows.set(`${pattern} ${type}`, row);
    }
  } while (cursor !== '0');
  return [...rows.values()].sort((a, b) => b.bytes - a.bytes);
}

describe('Redis footprint of an idle fleet', () => {
  it('leaves only keys that expire or whose size does not grow with the domains, links and pages crawled', async () => {
    const origins = await Promise.all(Array.from({ length: HOSTS }, (_, i) => startHost(i)));
    // Bot walls: one only the stealth browser passes, one any browser passes, a rate-limited one.
    web = await startSimWeb({ firstHost: '127.0.99.2', sites: [{ kind: 'botwall' }, { kind: 'interstitial' }, { kind: 'ratelimit' }, { kind: 'spa' }] });
    crawler = await startE2e('redis_footprint', {
      FETCHERS: BROWSERS ? 'simple_http:8,playwright:1,playwright_stealth:1' : 'simple_http:8',
      SITEMAP_RECHECK_INTERVAL_MS: '2000',
      DOMAIN_MAX_CONCURRENCY: '2',
      FETCH_TIMEOUT_MS: '2000',
      PROBE_TIMEOUT_MS: '2000',
      MAX_ATTEMPTS: '2',
      PAUSE_BLOCK_BASE_MS: '1000',
      PAUSE_MAX_MS: '2000',
      UNREACHABLE_PAUSE_BASE_MS: '1000',
      WALL_MAX_WAIT_MS: '2000',
      REVISIT_MIN_INTERVAL_S: '1',
      SCHEDULER_INTERVAL_MS: '1000',
      RECONCILE_INTERVAL_MS: '5000',
    });
    const c = crawler;
    // A link-following crawl with sitemaps over a tenth of the hosts, a revisit schedule on another tenth, plain
    // links on the rest.
    const followed = origins.filter((_, i) => i % 10 === 0);
    const revisited = origins.filter((_, i) => i % 10 === 1);
    const plain = origins.filter((_, i) => i % 10 > 1);
    c.runtime.startWorkers();
    await c.runtime.crawls.create({ seeds: followed.map((o) => `${o}/p/0`), scope: 'same-site', sitemaps: true, revisit: { mode: 'fixed', intervalSeconds: 3 } });
    await c.runtime.enqueue(revisited.flatMap((o) => Array.from({ length: PAGES }, (_, p) => `${o}/p/${p}`)), { revisit: { mode: 'fixed', intervalSeconds: 3 } });
    await c.runtime.enqueue(plain.flatMap((o) => Array.from({ length: PAGES }, (_, p) => `${o}/p/${p}`)));
    await c.runtime.enqueue(web.sites.flatMap((site) => Array.from({ length: PAGES }, (_, p) => `${site.origin}/page/${p + 1}`)));

    const unfinished = { status: { in: ['queued', 'routing', 'fetching', 'paused'] as never } };
    // In flight: what Redis holds per unfinished link while the fleet works.
    const probe = new Redis(REDIS_URL);
    try {
      const inFlight = await c.db.prisma.link.count({ where: unfinished });
      const rows = await footprint(probe, c.prefix);
      const bytes = rows.reduce((n, r) => n + r.bytes, 0);
      console.log(`in flight: links=${inFlight} bytes=${bytes} per link=${Math.round(bytes / Math.max(1, inFlight))}\n${rows.slice(0, 12).map((r) => `  ${r.pattern} ${r.type} keys=${r.count} bytes=${r.bytes}`).join('\n')}`);
    } finally {
      probe.disconnect();
    }
    await waitFor(async () => (await c.db.prisma.link.count({ where: unfinished })) === 0, 'every link settled', 600_000);
    // A few revisit rounds, then the schedules stop, so the fleet goes idle with some revisits behind it.
    await waitFor(async () => ((await c.db.prisma.pageVisit.count()) >= HOSTS * 0.2 * PAGES * 3 ? true : null), 'three rounds of revisits', 300_000);
    await c.db.prisma.$executeRawUnsafe(`UPDATE links SET revisit_mode = NULL, revisit_interval_s = NULL, revisit_min_s = NULL, revisit_max_s = NULL, next_fetch_at = NULL`);
    await c.db.prisma.$executeRawUnsafe(`UPDATE crawls SET revisit_mode = NULL, revisit_interval_s = NULL, revisit_min_s = NULL, revisit_max_s = NULL`);
    await waitFor(async () => (await c.db.prisma.link.count({ where: unfinished })) === 0, 'every revisit settled', 120_000);
    await c.runtime.waitUntilIdle();

    const byStatus = await c.db.prisma.link.groupBy({ by: ['status'], _count: true });
    const redis = new Redis(REDIS_URL);
    try {
      const rows = await footprint(redis, c.prefix);
      const lines = rows.map((r) => `${r.pattern.padEnd(60)} ${r.type.padEnd(6)} keys=${String(r.count).padStart(5)} ttl=${String(r.withTtl).padStart(5)} maxTtlS=${String(Math.round(r.maxTtlMs / 1000)).padStart(6)} members=${String(r.members).padStart(6)} bytes=${r.bytes}`);
      console.log(`hosts=${HOSTS} links=${JSON.stringify(byStatus.map((s) => [s.status, s._count]))}\n${lines.join('\n')}`);
      // What expires does so within a day of its last use (robots.txt's cache lifetime, RFC 9309): an idle fleet
      // sheds what it knew of the domains it crawled, whatever their number.
      for (const r of rows) expect(r.maxTtlMs, `${r.pattern} (${r.type}) time to live`).toBeLessThanOrEqual(24 * 3600_000 + 60_000);
      // Finished jobs are kept by BullMQ's own retention (removeOnComplete/removeOnFail: a count per queue), so their
      // hashes are bounded by it, not by a TTL. Every other key without a TTL must be one of a few fixed ones per
      // queue: none per domain, link or page.
      const jobHash = /^<prefix>:(route|fetch-[a-z_]+):<uuid>(\.g<n>)?(\.a<n>\.[a-z_]+(\.retry)?)?$/;
      const lasting = rows.filter((r) => r.withTtl < r.count && !(r.type === 'hash' && jobHash.test(r.pattern)));
      for (const r of lasting) expect(r.count - r.withTtl, `${r.pattern} (${r.type}) keys without TTL`).toBeLessThanOrEqual(4);
      // And none of them gains a member per domain, link or page beyond the retention: a queue's event stream is
      // trimmed near BullMQ's maxLenEvents (10,000; approximate trimming lets it pass by a node of entries), its
      // completed and failed sets at removeOnComplete's and removeOnFail's counts.
      for (const r of lasting) expect(r.members, `${r.pattern} (${r.type}) members`).toBeLessThanOrEqual(r.type === 'stream' ? 11_000 : 5_000);
    } finally {
      redis.disconnect();
    }
  }, 1_200_000);
});
