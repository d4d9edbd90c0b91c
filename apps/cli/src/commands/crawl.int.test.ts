/**
 * The `crawl` command line end to end: the CLI as `npx crawl` runs it (bin/crawl.js) in a child process, real Redis
 * and Postgres, a local site.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisConnection, deleteRedisPrefix } from '@crawler/queue';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { slowHeaders, startTestServer, staticArticle, type TestServer, REDIS_URL } from '@crawler/testkit';
import { runCrawl, startCrawl, type CrawlResult } from '../__fixtures__/crawl-process.js';

const PREFIX = `{crawler_test_cli_${process.pid}}`;

let db: TestDatabase;
let server: TestServer;

function crawl(args: string[], stdin = '', extraEnv: Record<string, string | undefined> = {}, onChild?: (child: ChildProcess) => void): Promise<CrawlResult> {
  const run = startCrawl(args, {
    stdin,
    env: {
      DATABASE_URL: db.url,
      REDIS_URL,
      QUEUE_PREFIX: PREFIX,
      // The SSRF guard stays on; FETCH_ALLOW_HOSTS lets the local site (and nothing else private) through.
      FETCH_ALLOW_HOSTS: '127.0.0.1',
      FETCHERS: 'simple_http:4',
      DOMAIN_MIN_DELAY_MS: '0',
      LOG_LEVEL: 'warn',
      ...extraEnv,
    },
  });
  onChild?.(run.child);
  return run.done;
}

beforeAll(async () => {
  db = await createTestDatabase('cli_crawl');
  server = await startTestServer({ '/a': { body: staticArticle({ title: 'A' }) }, '/b': { body: staticArticle({ title: 'B' }) } });
});

afterAll(async () => {
  await server.close();
  const r = createRedisConnection(REDIS_URL, 'producer');
  await deleteRedisPrefix(r, PREFIX);
  r.disconnect();
  await db.drop();
});

describe('crawl CLI', () => {
  it('enqueue reads stdin, reports each invalid URL and stores the rest', async () => {
    // LOG_LEVEL unset, as a user runs it.
    const res = await crawl(['enqueue'], `${server.url('/a')}\n# a comment\nftp://nope.example/x\n\n${server.url('/a')}#again\n`, { LOG_LEVEL: undefined });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('crawl enqueue: ftp://nope.example/x: unsupported scheme ftp');
    expect(res.stdout).toContain('accepted 2 (1 new, 1 already known), rejected 1');
    // Its own account only: no worker log lines (a one-shot command logs at warn unless LOG_LEVEL says otherwise).
    expect(res.stderr).not.toContain('crawler closed');
    expect(res.stderr.split('\n').filter((l) => l.startsWith('{'))).toEqual([]);
    expect(await db.prisma.link.count()).toBe(1);
  });

  it('enqueue takes a producer\'s list in parts: every line stored once, one JSON answer over all parts', async () => {
    const urls = Array.from({ length: 12_001 }, (_, i) => `https://list${i % 13}.invalid/p/${i}`);
    const before = await db.prisma.link.count();
    // Its own key space: the other tests' queue is left as it was.
    const prefix = `{crawler_test_cli_list_${process.pid}}`;
    const res = await crawl(['enqueue', '--json'], `${urls.join('\n')}\n${urls[7]}\nnot a url\n`, { QUEUE_PREFIX: prefix });
    expect([res.code, res.stderr]).toEqual([1, '']);
    const out = JSON.parse(res.stdout) as { accepted: Array<{ url: string; created: boolean }>; rejected: Array<{ input: string; code: string }> };
    expect(out.accepted).toHaveLength(12_002);
    expect(out.accepted.filter((a) => a.created)).toHaveLength(12_001);
    expect(out.accepted.at(-1)).toMatchObject({ url: urls[7], created: false });
    expect(out.rejected).toEqual([expect.objectContaining({ input: 'not a url', code: 'invalid_url' })]);
    expect(await db.prisma.link.count()).toBe(before + 12_001);
    await db.prisma.link.deleteMany({ where: { domain: { endsWith: '.invalid' }, url: { contains: '://list' } } });
    const r = createRedisConnection(REDIS_URL, 'producer');
    try {
      expect(await r.zcard(`${prefix}:route:prioritized`) + await r.llen(`${prefix}:route:wait`)).toBe(12_001);
      await deleteRedisPrefix(r, prefix);
    } finally {
      r.disconnect();
    }
  }, 120_000);

  it('run --until-idle crawls what is queued and exits', async () => {
    const res = await crawl(['run', '--until-idle']);
    expect(res.code).toBe(0);
    expect(await db.prisma.link.findUniqueOrThrow({ where: { url: server.url('/a') } })).toMatchObject({ status: 'done', selectionSource: 'probe' });
    // The process that routed also delivered the link's event to the Redis stream before it exited.
    const r = createRedisConnection(REDIS_URL, 'producer');
    try {
      const entries = await r.xrange(`${PREFIX}:events`, '-', '+');
      const events = entries.map(([, f]) => JSON.parse(f[f.indexOf('event') + 1]!) as { type: string; url: string });
      expect(events).toEqual([expect.objectContaining({ type: 'link.done', url: server.url('/a') })]);
    } finally {
      r.disconnect();
    }
  });

  it('crawl of an empty file or stdin is a usage error, not a run of whatever else is queued', async () => {
    await crawl(['enqueue', 'https://elsewhere.invalid/queued']);
    const res = await crawl(['crawl', '-'], '\n# only a comment\n');
    expect([res.code, res.stderr]).toEqual([2, expect.stringContaining('crawl crawl: no URLs in -')]);
    expect((await db.prisma.link.findUniqueOrThrow({ where: { url: 'https://elsewhere.invalid/queued' } })).status).toBe('queued');
    await db.prisma.link.delete({ where: { url: 'https://elsewhere.invalid/queued' } });
  });

  it('crawl --json enqueues, runs until idle and prints every link with totals', async () => {
    const res = await crawl(['crawl', '--json', server.url('/b'), 'mailto:x@example.com']);
    expect(res.code).toBe(1);
    const report = JSON.parse(res.stdout) as { links: Array<Record<string, unknown>>; totals: Record<string, unknown>; rejected: unknown[] };
    expect(report.links).toEqual([
      // A probe found this host's page /a static a moment ago: plain-HTTP domain memory routes /b without one.
      { url: server.url('/b'), status: 'done', fetcher: 'simple_http', selectionSource: 'domain_memory', attemptCount: 1, errorType: null, error: null, pausedUntil: null },
    ]);
    expect(report.totals).toMatchObject({ links: 1, done: 1, failed: 0, paused: 0, rejected: 1, attempts: 1 });
    expect(server.hits('/b')).toBe(1);
  });

  it('explain prints heuristics, scores and the decision; bad config fails naming the variable', async () => {
    const res = await crawl(['explain', '--json', server.url('/c')]);
    expect(res.code).toBe(0);
    const e = JSON.parse(res.stdout) as { heuristics: Array<{ type: string }>; scores: Array<{ fetcher: string; sampleSize: number }>; decision: { action: string } };
    expect(e.heuristics.map((h) => h.type)).toContain('domain');
    // Two successful attempts on this host so far: below the minimum sample for a score, but a probe found the host
    // static within the hour and its latest plain fetch worked, so the router would use plain HTTP without a probe.
    expect(e.scores).toContainEqual(expect.objectContaining({ fetcher: 'simple_http', sampleSize: 2 }));
    expect(e.decision).toMatchObject({ action: 'domain_memory', fetcher: 'simple_http' });

    const broken = await runCrawl(['explain', server.url('/c')], { env: { DATABASE_URL: db.url, LEARNING_MODE_ENABLED: 'perhaps' } });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain('LEARNING_MODE_ENABLED="perhaps"');
  });

  it('crawl and run --until-idle stop on SIGTERM once their page in flight is stored, exit 130 and leave the rest queued', async () => {
    const slow = await startTestServer(Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`/slow${i}`, slowHeaders(1_500)])));
    let last: ChildProcess | undefined;
    try {
      const env = { FETCHERS: 'simple_http:1', DOMAIN_MAX_CONCURRENCY: '1', PROBE_TIMEOUT_MS: '30000' };
      const urls = Array.from({ length: 6 }, (_, i) => slow.url(`/slow${i}`));
      const pageHits = () => urls.reduce((n, u) => n + slow.hits(new URL(u).pathname), 0);
      for (const args of [['crawl', ...urls.slice(0, 3)], ['run', '--until-idle']]) {
        const before = pageHits();
        const res = await crawl(args, '', env, (child) => {
          last = child;
          // SIGTERM while the first page's request is on the wire.
          const poll = setInterval(() => {
            if (pageHits() > before) {
              clearInterval(poll);
              child.kill('SIGTERM');
            }
          }, 20);
          child.on('close', () => clearInterval(poll));
        });
        expect(res.code, res.stderr).toBe(130);
        expect(res.stderr).toContain('interrupted: the pages in flight were finished and stored');
        if (args[0] === 'crawl') await crawl(['enqueue', ...urls.slice(3)]);
      }
      // Every page fetched was stored; nothing was lost: the rest are still queued, routing or fetching, with a job.
      const links = await db.prisma.link.findMany({ where: { url: { in: urls } }, select: { status: true } });
      expect(links).toHaveLength(6);
      expect(links.filter((l) => l.status === 'done').length).toBeGreaterThanOrEqual(2);
      expect(links.filter((l) => !['done', 'queued', 'routing', 'fetching'].includes(l.status))).toEqual([]);
    } finally {
      // A process that did not stop is not left behind.
      if (last?.exitCode === null) last.kill('SIGKILL');
      await slow.close();
    }
  }, 60_000);
});
