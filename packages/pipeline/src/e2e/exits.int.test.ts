/**
 * Exit tiers end to end on real Redis and Postgres: loopback forward proxies whose outbound connections leave from
 * their own source addresses (127.0.2.1 "datacenter", 127.0.3.x "residential"), and a simulated site that refuses
 * the worker's own address and the datacenter range the way real sites refuse ranges.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { Redis } from 'ioredis';
import { startSimSite, type SimSite } from '@crawler/sim-web';
import { startForwardProxy, type ForwardProxy } from '@crawler/testkit';
import { Registry } from 'prom-client';
import { createPipelineMetrics, type PrometheusPipelineMetrics } from '@crawler/telemetry';
import { REDIS_URL, startE2e, type E2eCrawler } from '../__fixtures__/e2e.js';

const SECRETS = ['dcUser', 'dcPa55', 'resUser', 'resPa55', 'sockUser', 'sockPa55'];

let dc: ForwardProxy;
let res1: ForwardProxy;
let res2: ForwardProxy;
let ranged: SimSite;
let open: SimSite;
let crawler: E2eCrawler;
const logLines: string[] = [];
let metrics: PrometheusPipelineMetrics;

beforeAll(async () => {
  dc = await startForwardProxy({ localAddress: '127.0.2.1', auth: { user: 'dcUser', pass: 'dcPa55' } });
  res1 = await startForwardProxy({ localAddress: '127.0.3.1', auth: { user: 'resUser', pass: 'resPa55' } });
  res2 = await startForwardProxy({ localAddress: '127.0.3.2', protocol: 'socks5', auth: { user: 'sockUser', pass: 'sockPa55' } });
  ranged = await startSimSite({ kind: 'static', name: 'ranged', blockedAddresses: ['127.0.0.', '127.0.2.'] }, { host: '127.0.1.11', index: 0 });
  open = await startSimSite({ kind: 'static', name: 'open' }, { host: '127.0.1.12', index: 1 });
  const tiers = [
    { name: 'datacenter', cost: 1, urls: [dc.authUrl] },
    { name: 'residential', cost: 10, urls: [res1.authUrl, res2.authUrl] },
  ];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  crawler = await startE2e(
    'exits',
    {
      PROXY_TIERS: JSON.stringify(tiers),
      // Blocks pause the domain; a millisecond keeps the ladder's climb inside the test.
      PAUSE_BLOCK_BASE_MS: '1',
      PAUSE_MAX_MS: '5',
      DOMAIN_MAX_CONCURRENCY: '1',
      FETCHERS: 'simple_http:2,playwright:1,playwright_stealth:1',
      // Every route asks the store, so the learned arm shows as `learned` rather than as a reused decision.
      ROUTER_DECISION_CACHE_MS: '0',
    },
    { logger: pino({ level: 'debug' }, sink), metrics: (metrics = createPipelineMetrics(new Registry())) },
  );
  crawler.runtime.startWorkers();
}, 60_000);

afterAll(async () => {
  await crawler?.cleanup();
  await Promise.all([dc?.close(), res1?.close(), res2?.close(), ranged?.close(), open?.close()]);
});

async function crawl(urls: string[]): Promise<string[]> {
  const { accepted } = await crawler.runtime.enqueue(urls);
  await crawler.runtime.waitUntilIdle();
  return accepted.map((a) => a.linkId);
}

async function attemptsOf(linkIds: string[]) {
  return crawler.db.prisma.fetcherAttempt.findMany({ where: { linkId: { in: linkIds } }, orderBy: { id: 'asc' } });
}

describe('end to end: exit tiers', () => {
  it('fetches a range-blocking site with plain HTTP through residential (no browser) and an open site direct', async () => {
    const blockedLinks = await crawl(ranged.urls(3, 1));
    const openLinks = await crawl(open.urls(3, 1));
    const links = await crawler.db.prisma.link.findMany({ where: { id: { in: [...blockedLinks, ...openLinks] } } });
    expect(links.map((l) => l.status)).toEqual(links.map(() => 'done'));

    const onRanged = await attemptsOf(blockedLinks);
    const won = onRanged.filter((a) => a.success);
    expect(won).toHaveLength(3);
    expect(won.map((a) => [a.fetcher, a.exitTier])).toEqual(won.map(() => ['simple_http', 'residential']));
    // Each proxied attempt names the proxy that carried it, masked; a direct one names none.
    const proxies = new Set([`http://***@127.0.0.1:${res1.port}`, `socks5://***@127.0.0.1:${res2.port}`]);
    expect(won.every((a) => proxies.has(a.exitProxy ?? ''))).toBe(true);
    expect(onRanged.filter((a) => a.exitTier === 'datacenter').map((a) => a.exitProxy)).toEqual(onRanged.filter((a) => a.exitTier === 'datacenter').map(() => `http://***@127.0.0.1:${dc.port}`));
    expect(onRanged.filter((a) => a.exitTier === 'direct').every((a) => a.exitProxy === null)).toBe(true);
    // Blocked on the way up the ladder (direct, datacenter), never by a browser.
    expect(onRanged.every((a) => a.fetcher === 'simple_http')).toBe(true);
    expect(onRanged.filter((a) => !a.success).every((a) => a.isBanned && ['direct', 'datacenter'].includes(a.exitTier))).toBe(true);
    expect(ranged.stats().requests.browser).toBe(0);
    const served = ranged.requestLog().filter((r) => r.outcome === 'served');
    expect(served.every((r) => r.address.startsWith('127.0.3.'))).toBe(true);

    const onOpen = await attemptsOf(openLinks);
    expect(onOpen.map((a) => [a.fetcher, a.exitTier, a.success])).toEqual(onOpen.map(() => ['simple_http', 'direct', true]));
    expect(open.requestLog().every((r) => r.address === '127.0.0.1')).toBe(true);
  }, 60_000);

  it('once learned, sends the blocked site straight to residential: no probe, no block', async () => {
    // Enough successes for a confident residential arm (confidence = rate × min(1, n / 10) > 0.6).
    await crawl(ranged.urls(6, 10));
    const blocksBefore = ranged.stats().blocked;
    const links = await crawl(ranged.urls(4, 20));
    const attempts = await attemptsOf(links);
    expect(attempts).toHaveLength(4);
    expect(attempts.map((a) => [a.exitTier, a.success])).toEqual(attempts.map(() => ['residential', true]));
    expect(attempts.every((a) => a.selectionSource === 'learned' || a.selectionSource === 'domain_memory')).toBe(true);
    expect(attempts.some((a) => a.selectionSource === 'learned')).toBe(true);
    expect(ranged.stats().blocked).toBe(blocksBefore);
  }, 60_000);

  it('fails over to the tier\'s other proxy when one dies mid-crawl, without failing links or logging attempts against the fetcher', async () => {
    await res1.kill();
    const tunnelsBefore = res2.tunnels;
    const links = await crawl(ranged.urls(4, 40));
    const rows = await crawler.db.prisma.link.findMany({ where: { id: { in: links } } });
    expect(rows.map((l) => l.status)).toEqual(rows.map(() => 'done'));
    const attempts = await attemptsOf(links);
    expect(attempts.map((a) => [a.exitTier, a.success, a.errorType])).toEqual(attempts.map(() => ['residential', true, null]));
    expect(res2.tunnels).toBeGreaterThan(tunnelsBefore);
    // The verdict is the fleet's: a key in Redis under the crawler's prefix, named by a hash (no URL, no credential).
    const r = new Redis(REDIS_URL);
    try {
      const keys = await r.keys(`${crawler.prefix}:proxy-down:*`);
      expect(keys).toHaveLength(1);
      for (const s of SECRETS) expect(keys[0]).not.toContain(s);
    } finally {
      r.disconnect();
    }
    expect(logLines.some((l) => l.includes('proxy unhealthy'))).toBe(true);
  }, 60_000);

  it('counts requests, bytes, blocks and cost per tier in /metrics', async () => {
    const body = await metrics.registry.metrics();
    const value = (name: string, labels: string) => Number(new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(body)?.[1] ?? 'NaN');
    expect(value('crawler_exit_requests_total', 'tier="residential"')).toBeGreaterThanOrEqual(17);
    expect(value('crawler_exit_cost_units_total', 'tier="residential"')).toBe(10 * value('crawler_exit_requests_total', 'tier="residential"'));
    expect(value('crawler_exit_bytes_total', 'tier="residential"')).toBeGreaterThan(0);
    expect(value('crawler_exit_blocks_total', 'tier="datacenter"')).toBeGreaterThan(0);
    expect(value('crawler_exit_requests_total', 'tier="direct"')).toBeGreaterThan(0);
    expect(Number.isNaN(value('crawler_exit_cost_units_total', 'tier="direct"'))).toBe(true);
    expect(value('crawler_exit_proxy_failures_total', `tier="residential",proxy="http://\\*\\*\\*@127.0.0.1:${res1.port}"`)).toBeGreaterThanOrEqual(1);
    // Per proxy: both residential proxies carried requests, and the datacenter one met the blocks.
    expect(value('crawler_exit_proxy_requests_total', `tier="residential",proxy="socks5://\\*\\*\\*@127.0.0.1:${res2.port}"`)).toBeGreaterThan(0);
    expect(value('crawler_exit_proxy_blocks_total', `tier="datacenter",proxy="http://\\*\\*\\*@127.0.0.1:${dc.port}"`)).toBeGreaterThan(0);
  });

  it('never shows a proxy credential in logs, attempts, links or metrics', async () => {
    const text = [
      await metrics.registry.metrics(),
      logLines.join(''),
      JSON.stringify(await crawler.db.prisma.fetcherAttempt.findMany({ select: { errorType: true, responseHeaders: true, selectionSource: true, fetcher: true, exitTier: true, exitProxy: true } })),
      JSON.stringify(await crawler.db.prisma.link.findMany({ select: { lastError: true, lastErrorType: true, fetcher: true } })),
    ].join('\n');
    expect(logLines.length).toBeGreaterThan(10);
    expect(text).toContain('residential');
    for (const s of SECRETS) expect(text).not.toContain(s);
  });
});

describe('end to end: PROXY_DIRECT=false', () => {
  it('sends nothing from the worker\'s own address: robots.txt, sitemaps, the probe and the fetch all leave through the cheapest tier', async () => {
    const seen: string[] = [];
    const { startTestServer, staticArticle } = await import('@crawler/testkit');
    const site = await startTestServer(
      {
        '/robots.txt': (req, res) => {
          seen.push(`${req.socket.remoteAddress} /robots.txt`);
          res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow:\n');
        },
        '/sitemap.xml': (req, res) => {
          seen.push(`${req.socket.remoteAddress} /sitemap.xml`);
          res.writeHead(200, { 'content-type': 'application/xml' }).end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://127.0.1.13:${(req.socket.localPort ?? 0)}/c</loc></url></urlset>`);
        },
        '*': (req, res) => {
          seen.push(`${req.socket.remoteAddress} ${req.url}`);
          res.writeHead(200, { 'content-type': 'text/html' }).end(staticArticle({ title: `page ${req.url}` }));
        },
      },
      { host: '127.0.1.13' },
    );
    const only = await startForwardProxy({ localAddress: '127.0.3.9' });
    const c = await startE2e('exits_nodirect', { PROXY_TIERS: JSON.stringify([{ name: 'residential', cost: 10, urls: [only.url] }]), PROXY_DIRECT: 'false' });
    try {
      const { accepted } = await c.runtime.enqueue([site.url('/a'), site.url('/b')]);
      // A link-following crawl reads the site's sitemap: through the tier too.
      await c.runtime.crawls.create({ seeds: [site.url('/seed')], scope: 'same-site', sitemaps: true, maxDepth: 0 });
      c.runtime.startWorkers();
      await c.runtime.waitUntilIdle();
      const links = await c.db.prisma.link.findMany({ where: { id: { in: accepted.map((a) => a.linkId) } } });
      expect(links.map((l) => l.status)).toEqual(['done', 'done']);
      const attempts = await c.db.prisma.fetcherAttempt.findMany({ where: { linkId: { in: accepted.map((a) => a.linkId) } } });
      expect(attempts.map((a) => a.exitTier)).toEqual(attempts.map(() => 'residential'));
      expect(seen.length).toBeGreaterThanOrEqual(3);
      expect(seen.some((s) => s.endsWith('/robots.txt'))).toBe(true);
      expect(seen.some((s) => s.endsWith('/sitemap.xml'))).toBe(true);
      expect(seen.filter((s) => !s.startsWith('127.0.3.9 '))).toEqual([]);
    } finally {
      await c.cleanup();
      await only.close();
      await site.close();
    }
  }, 60_000);

  it('with its only proxy down, asks the site nothing from the worker\'s own address and blames it for nothing; the link waits for the proxy', async () => {
    const seen: string[] = [];
    const { startTestServer, staticArticle } = await import('@crawler/testkit');
    const site = await startTestServer(
      {
        '*': (req, res) => {
          seen.push(`${req.socket.remoteAddress} ${req.url}`);
          res.writeHead(200, { 'content-type': req.url === '/robots.txt' ? 'text/plain' : 'text/html' }).end(req.url === '/robots.txt' ? 'User-agent: *\nDisallow:\n' : staticArticle({ title: `page ${req.url}` }));
        },
      },
      { host: '127.0.1.14' },
    );
    const first = await startForwardProxy({ localAddress: '127.0.3.10' });
    const port = first.port;
    await first.kill();
    const c = await startE2e('exits_nodirect_down', { PROXY_TIERS: JSON.stringify([{ name: 'residential', cost: 10, urls: [first.url] }]), PROXY_DIRECT: 'false', PROXY_UNHEALTHY_MS: '1000' });
    let revived: ForwardProxy | undefined;
    try {
      const { accepted } = await c.runtime.enqueue([site.url('/a')]);
      c.runtime.startWorkers();
      // The link has met the dead proxy when the fleet has called it down, or (the faults) has gone round it to the
      // site or blamed the site for it.
      const r = new Redis(REDIS_URL);
      const linkId = accepted[0]!.linkId;
      try {
        await expect
          .poll(async () => (await r.keys(`${c.prefix}:proxy-down:*`)).length + seen.length + ((await c.db.prisma.link.findUniqueOrThrow({ where: { id: linkId } })).lastErrorType ? 1 : 0), { timeout: 20_000, interval: 100 })
          .toBeGreaterThan(0);
      } finally {
        r.disconnect();
      }
      expect(seen).toEqual([]);
      const waiting = await c.db.prisma.link.findUniqueOrThrow({ where: { id: linkId } });
      expect(waiting.status).not.toBe('failed');
      // Nothing blamed on the site: at most the link says it waits for its tier's proxy.
      expect(waiting.lastErrorType ?? 'proxy_unavailable').toBe('proxy_unavailable');
      expect(await c.db.prisma.fetcherAttempt.count({ where: { linkId } })).toBe(0);
      revived = await startForwardProxy({ localAddress: '127.0.3.10', port });
      await c.runtime.waitUntilIdle();
      const done = await c.db.prisma.link.findUniqueOrThrow({ where: { id: linkId } });
      expect(done.status).toBe('done');
      expect(seen.length).toBeGreaterThanOrEqual(2);
      expect(seen.filter((s) => !s.startsWith('127.0.3.10 '))).toEqual([]);
    } finally {
      await c.cleanup();
      await revived?.close();
      await site.close();
    }
  }, 90_000);
});
