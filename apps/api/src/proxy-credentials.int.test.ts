/**
 * Proxy credentials never leave through the API: a real crawl through loopback proxies that demand user:pass (one of
 * them dead, so its failure is on record), then every read route of the API, its error answers and its own log are
 * searched for the secrets.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { Redis } from 'ioredis';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { DomainPauses, createRuntime, loadConfig, type CrawlerRuntime } from '@crawler/pipeline';
import { deleteRedisPrefix } from '@crawler/queue';
import { createPipelineMetrics } from '@crawler/telemetry';
import { REDIS_URL, challengePage, startForwardProxy, startTestServer, staticArticle, type ForwardProxy, type TestServer } from '@crawler/testkit';
import { createServer } from './server.js';

const PREFIX = `{crawler_test_api_proxy_creds_${process.pid}}`;
const API_KEY = 'proxy-creds-test-key-0123456789abcdef';
const SECRETS = ['dcUs3r', 'dcPa55word', 'resUs3r', 'resPa55word', 'deadUs3r', 'deadPa55word'];

let db: TestDatabase;
let runtime: CrawlerRuntime;
let app: FastifyInstance;
let dead: ForwardProxy;
let dc: ForwardProxy;
let res: ForwardProxy;
let ranged: TestServer;
let walled: TestServer;
const served: string[] = [];
const apiLog: string[] = [];
let rangedLinks: string[] = [];
let walledLinks: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase('api_proxy_creds');
  dead = await startForwardProxy({ localAddress: '127.0.2.43', auth: { user: 'deadUs3r', pass: 'deadPa55word' } });
  await dead.kill();
  dc = await startForwardProxy({ localAddress: '127.0.2.42', auth: { user: 'dcUs3r', pass: 'dcPa55word' } });
  res = await startForwardProxy({ localAddress: '127.0.3.42', protocol: 'socks5', auth: { user: 'resUs3r', pass: 'resPa55word' } });
  // Refuses the worker's own range and the datacenter range, serves residential.
  ranged = await startTestServer(
    {
      '*': (req, reply) => {
        const from = req.socket.remoteAddress ?? '';
        if (from.startsWith('127.0.0.') || from.startsWith('127.0.2.')) return void reply.writeHead(403, { 'content-type': 'text/html' }).end(challengePage('cloudflare'));
        served.push(from);
        reply.writeHead(200, { 'content-type': 'text/html' }).end(staticArticle({ title: `page ${req.url}` }));
      },
    },
    { host: '127.0.42.1' },
  );
  // Refuses everyone: its links end failed or paused, with an error on record.
  walled = await startTestServer({ '*': (_req, reply) => void reply.writeHead(403, { 'content-type': 'text/html' }).end(challengePage('cloudflare')) }, { host: '127.0.42.2' });

  const config = loadConfig({
    DATABASE_URL: db.url,
    REDIS_URL,
    QUEUE_PREFIX: PREFIX,
    ALLOW_PRIVATE_NETWORKS: 'true',
    FETCHERS: 'simple_http:2',
    DOMAIN_MIN_DELAY_MS: '0',
    DOMAIN_MAX_CONCURRENCY: '1',
    ROBOTS_ENABLED: 'false',
    PAUSE_BLOCK_BASE_MS: '1',
    PAUSE_MAX_MS: '5',
    PROXY_TIERS: JSON.stringify([
      // The dead proxy first: the datacenter tier fails over from it to the live one.
      { name: 'datacenter', cost: 1, urls: [dead.authUrl, dc.authUrl] },
      { name: 'residential', cost: 10, urls: [res.authUrl] },
    ]),
  });
  const metrics = createPipelineMetrics(new Registry());
  runtime = createRuntime(config, { prisma: db.prisma, metrics });
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      apiLog.push(chunk.toString());
      done();
    },
  });
  app = await createServer({
    prisma: db.prisma,
    redis: runtime.redis,
    queues: runtime.queues,
    links: runtime.links,
    queueNames: runtime.queueNames(),
    metrics,
    bullBoard: null,
    apiKeys: [API_KEY],
    crawls: { frontier: runtime.crawls, store: runtime.crawlStore },
    pauses: new DomainPauses({ redis: runtime.redis, prisma: db.prisma, queues: runtime.queues, config }),
    loggerInstance: pino({ level: 'debug' }, sink),
  });
  runtime.startWorkers();
  rangedLinks = (await runtime.enqueue([ranged.url('/a'), ranged.url('/b'), ranged.url('/c')])).accepted.map((a) => a.linkId);
  walledLinks = (await runtime.enqueue([walled.url('/x')])).accepted.map((a) => a.linkId);
  await runtime.waitUntilIdle({ pollMs: 50 });
}, 90_000);

afterAll(async () => {
  await app?.close();
  await runtime?.close({ drainTimeoutMs: 5_000 });
  const r = new Redis(REDIS_URL);
  try {
    await deleteRedisPrefix(r, PREFIX);
  } finally {
    r.disconnect();
  }
  await Promise.all([dc?.close(), res?.close(), dead?.close(), ranged?.close(), walled?.close()]);
  await db?.drop();
});

const get = (url: string) => app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${API_KEY}` } });

describe('proxy credentials and the API', () => {
  it('crawled through the proxies: the ranged site was served from the residential exit, the dead proxy is on record', async () => {
    expect(served.length).toBeGreaterThanOrEqual(3);
    expect(served.every((a) => a.startsWith('127.0.3.'))).toBe(true);
    expect(dc.tunnels).toBeGreaterThan(0);
    const metrics = (await get('/metrics')).body;
    expect(metrics).toMatch(new RegExp(`crawler_exit_proxy_failures_total\\{tier="datacenter",proxy="http://\\*\\*\\*@127\\.0\\.0\\.1:${dead.port}"\\} [1-9]`));
  });

  it('shows no credential in any answer: links, one link, metrics, pauses, crawls, errors, its own log', async () => {
    const crawl = await app.inject({ method: 'POST', url: '/crawls', headers: { authorization: `Bearer ${API_KEY}` }, payload: { seeds: [ranged.url('/seed')], maxDepth: 0 } });
    expect(crawl.statusCode).toBeLessThan(300);
    const crawlId = (crawl.json() as { id: string }).id;
    await runtime.waitUntilIdle({ pollMs: 50 });
    const bodies: Record<string, string> = {};
    for (const url of [
      '/links',
      '/links?status=done',
      '/links?status=failed',
      '/links?status=paused',
      ...[...rangedLinks, ...walledLinks].map((id) => `/links/${id}`),
      `/links/${rangedLinks[0]}/content`,
      `/links/${rangedLinks[0]}/versions`,
      '/metrics',
      '/pauses',
      `/crawls/${crawlId}`,
      '/export',
      // Error answers: a bad id, an unknown link, a bad query.
      '/links/not-a-uuid',
      '/links/00000000-0000-4000-8000-000000000000',
      '/links?limit=0',
    ]) {
      const r = await get(url);
      expect(r.statusCode, url).toBeLessThan(500);
      bodies[url] = r.body;
    }
    // The answers say which exit carried each attempt, by tier name.
    const one = JSON.parse(bodies[`/links/${rangedLinks[0]}`]!) as { status: string; attempts: Array<{ exitTier: string; success: boolean }> };
    expect(one.status).toBe('done');
    expect(one.attempts.find((a) => a.success)?.exitTier).toBe('residential');
    const walledOne = JSON.parse(bodies[`/links/${walledLinks[0]}`]!) as { attempts: Array<{ exitTier: string }> };
    expect(new Set(walledOne.attempts.map((a) => a.exitTier))).toContain('datacenter');
    expect(bodies['/metrics']).toContain('tier="residential"');
    const text = [...Object.values(bodies), apiLog.join('')].join('\n');
    for (const s of SECRETS) expect(text, s).not.toContain(s);
    // The check itself can fail: the secrets are in the configuration the crawl ran with.
    expect(runtime.config.exitTiers.map((t) => t.urls.join(' ')).join(' ')).toContain('resPa55word');
  }, 60_000);
});
