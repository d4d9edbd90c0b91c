/**
 * The fleet as deployed: the BUILT router app and two BUILT fetcher apps as separate processes, on real Redis and
 * Postgres, against loopback sites that count what they receive. Each site is its own domain (127.0.0.x).
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { enqueueLinks } from '@crawler/pipeline';
import { LinkStore } from '@crawler/db';
import { JobQueues, createRedisConnection, fetchQueueName, deleteRedisPrefix } from '@crawler/queue';
import { robotsTxt, sleep, startTestServer, staticArticle, tooManyRequests, type StaticRoute, type TestServer, REDIS_URL } from '@crawler/testkit';
import { spawnApp, type AppProcess, type LogLine } from './__fixtures__/spawn-app.js';

const PREFIX = `{crawler_test_apps_fleet_${process.pid}}`;
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const PAUSE_MS = 4_000;
const FETCH_QUEUE = fetchQueueName('simple_http');

let db: TestDatabase;
let redis: Redis;
let queues: JobQueues;
let links: LinkStore;
let router: AppProcess;
let fetchers: AppProcess[] = [];
const servers: TestServer[] = [];

// The slow site counts requests in flight at once: the fleet-wide per-domain limit of 1 must hold it at 1.
let inFlight = 0;
let maxInFlight = 0;

beforeAll(async () => {
  // The fleet tests run the deployables as shipped: compile them first so dist/ is never stale.
  for (const app of ['apps/router', 'apps/fetcher']) execFileSync(`${REPO}node_modules/.bin/tsc`, ['-p', `${REPO}${app}/tsconfig.json`], { stdio: 'pipe' });
  db = await createTestDatabase('apps_fleet');
  redis = createRedisConnection(REDIS_URL, 'producer');
  queues = new JobQueues({ connection: redis, prefix: PREFIX });
  links = new LinkStore(db.prisma);
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL,
    QUEUE_PREFIX: PREFIX,
    // Legacy mode with a default fetcher: no probe, so every request a site sees is a fetch worker's.
    LEARNING_MODE_ENABLED: 'false',
    DEFAULT_FETCHER: 'simple_http',
    FETCHERS: 'simple_http:4',
    ALLOW_PRIVATE_NETWORKS: 'true',
    // Generous by default, 1 for the slow site through a per-domain override: the override is what holds it.
    DOMAIN_MAX_CONCURRENCY: '4',
    DOMAIN_LIMITS: '127.0.0.2=1',
    DOMAIN_MIN_DELAY_MS: '0',
    // Pauses are capped short so a blocked domain's pause ends inside the test.
    PAUSE_MAX_MS: String(PAUSE_MS),
    METRICS_PORT: '0',
    METRICS_HOST: '127.0.0.1',
    HEALTH_LOG_INTERVAL_MS: '500',
    SHUTDOWN_DRAIN_TIMEOUT_MS: '5000',
    LOG_LEVEL: 'info',
  };
  router = spawnApp('router', `${REPO}apps/router/dist/main.js`, env);
  fetchers = [spawnApp('fetcher-1', `${REPO}apps/fetcher/dist/main.js`, env), spawnApp('fetcher-2', `${REPO}apps/fetcher/dist/main.js`, env)];
  await Promise.all([router, ...fetchers].map((p) => p.waitForLog((l) => l.msg === 'workers started')));
}, 120_000);

afterAll(async () => {
  await Promise.all([router, ...fetchers].map((p) => p?.stop('SIGKILL')));
  await queues?.close();
  if (redis) {
    await deleteRedisPrefix(redis, PREFIX);
    redis.disconnect();
  }
  await Promise.all(servers.map((s) => s.close()));
  await db?.drop();
});

async function enqueue(urls: string[]): Promise<string[]> {
  const { accepted, rejected } = await enqueueLinks(urls, { links, queues });
  expect(rejected).toEqual([]);
  return accepted.map((a) => a.linkId);
}

async function waitFor<T>(what: string, check: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const linksOf = (ids: string[]) => db.prisma.link.findMany({ where: { id: { in: ids } }, include: { attempts: { orderBy: { id: 'asc' } } } });
const allFinished = (ids: string[]) => async () => {
  const rows = await linksOf(ids);
  return rows.length === ids.length && rows.every((r) => r.status === 'done' || r.status === 'failed') ? rows : null;
};
const attemptLines = (p: AppProcess, origin: string) => p.logs.filter((l: LogLine) => l.msg === 'attempt' && String(l.url).startsWith(origin));

describe('the fleet: router + two fetcher processes', () => {
  // First, while the store knows nothing: later tests' successes would (rightly) make these decisions `learned`.
  it('learning mode across processes: the router probes, a fetcher reuses the probe body, one request per static page', async () => {
    const site = await startTestServer({ '/robots.txt': robotsTxt(), '/l/*': { status: 200, body: staticArticle({ title: 'Learned later' }) } }, { host: '127.0.0.5' });
    servers.push(site);
    const { accepted } = await enqueueLinks([0, 1, 2].map((i) => site.url(`/l/${i}`)), { links, queues, learningModeEnabled: true });
    const ids = accepted.map((a) => a.linkId);
    const rows = await waitFor('the learning-mode links finished', allFinished(ids));
    // The first is probed; a link routed after a probed page of the host was fetched may take plain-HTTP domain
    // memory instead (PLAIN_HTTP_MEMORY_MS): one request per page either way.
    expect(rows.map((r) => [r.status, r.fetcher])).toEqual(ids.map(() => ['done', 'simple_http']));
    expect(rows.map((r) => r.selectionSource)).toContain('probe');
    for (const r of rows) expect(['probe', 'domain_memory']).toContain(r.selectionSource);
    for (const i of [0, 1, 2]) expect(site.hits(`/l/${i}`)).toBe(1);
    // The probe ran in the router process; the attempt was logged by a fetcher process.
    expect(router.logs.some((l) => String(l.url ?? '').startsWith(site.origin) || JSON.stringify(l).includes(site.origin))).toBe(true);
    expect(fetchers.flatMap((f) => attemptLines(f, site.origin))).toHaveLength(3);
  });

  it('never overlaps requests to a domain limited to concurrency 1 (a DOMAIN_LIMITS override), though both processes fetch it', async () => {
    const site = await startTestServer(
      {
        '/robots.txt': robotsTxt(),
        '/p/*': async (_req, res) => {
          inFlight += 1;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await sleep(150);
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(staticArticle({ title: 'Slow page' }));
          inFlight -= 1;
        },
      },
      { host: '127.0.0.2' },
    );
    servers.push(site);
    // Which process takes which job is BullMQ's business: on a busy machine one process can take a whole batch, which
    // would prove nothing about the limit across processes. Batches go in until both processes took part (three at
    // most); every request of every batch counts towards the in-flight maximum.
    let perProcess: number[] = [];
    let pages = 0;
    for (let batch = 0; batch < 3; batch++) {
      const ids = await enqueue(Array.from({ length: 12 }, (_, i) => site.url(`/p/${batch}-${i}`)));
      const rows = await waitFor('every slow page finished', allFinished(ids), 60_000);
      expect(rows.map((r) => r.status)).toEqual(ids.map(() => 'done'));
      pages += 12;
      perProcess = fetchers.map((f) => attemptLines(f, site.origin).length);
      if (perProcess.every((n) => n > 0)) break;
    }
    expect(site.requests.filter((r) => r.path.startsWith('/p/'))).toHaveLength(pages);
    expect(maxInFlight).toBe(1);
    // Both processes took part: the limit held across processes, not within one.
    expect(perProcess.reduce((a, b) => a + b, 0)).toBe(pages);
    for (const n of perProcess) expect(n).toBeGreaterThan(0);
  });

  it('a blocked domain gets no request during its pause; its other links wait (delayed, not failed, no attempts) and finish after', async () => {
    let blocked = true;
    const site = await startTestServer(
      {
        '/robots.txt': robotsTxt(),
        '/blocked': (_req, res) => {
          const route = (blocked ? tooManyRequests(1) : { status: 200, body: staticArticle({ title: 'Unblocked' }) }) as StaticRoute;
          blocked = false;
          res.writeHead(route.status ?? 200, { 'content-type': 'text/html', ...route.headers }).end(route.body);
        },
        '/b/*': { status: 200, body: staticArticle({ title: 'Waiting page' }) },
      },
      { host: '127.0.0.3' },
    );
    servers.push(site);
    const [blockedId] = await enqueue([site.url('/blocked')]);
    const paused = await waitFor('the blocked link to be paused', async () => {
      const l = await db.prisma.link.findUnique({ where: { id: blockedId! } });
      return l?.status === 'paused' && l.pausedUntil ? l : null;
    });
    const pausedUntilMs = paused.pausedUntil!.getTime();
    const blockAt = site.requests.find((r) => r.path === '/blocked')!.at;

    const others = await enqueue([0, 1, 2, 3].map((i) => site.url(`/b/${i}`)));
    // While the domain is paused, the other links are parked as delayed fetch jobs.
    const delayedSeen = await waitFor('the other links to be delayed', async () => {
      const delayed = await queues.queue(FETCH_QUEUE).getJobs(['delayed']);
      const mine = delayed.filter((j) => others.includes((j.data as { linkId: string }).linkId));
      return mine.length === others.length ? mine : null;
    });
    expect(delayedSeen).toHaveLength(4);
    const during = await linksOf(others);
    expect(during.map((l) => l.status).filter((s) => s === 'failed' || s === 'done')).toEqual([]);
    expect(during.map((l) => l.attemptCount)).toEqual([0, 0, 0, 0]);
    expect(during.flatMap((l) => l.attempts)).toEqual([]);

    await waitFor('every link of the blocked domain finished', allFinished([blockedId!, ...others]), 60_000);
    // Attempts are written in batches a moment after the link row: wait for all six.
    const rows = await waitFor('the attempts of the blocked domain written', async () => {
      const r = await linksOf([blockedId!, ...others]);
      return r.flatMap((l) => l.attempts).length >= 6 ? r : null;
    });
    expect(rows.map((r) => r.status)).toEqual(rows.map(() => 'done'));
    // No request of any kind reached the site between the block and the end of the pause.
    const inPause = site.requests.filter((r) => r.at > blockAt && r.at < pausedUntilMs);
    expect(inPause.map((r) => r.path)).toEqual([]);
    expect(site.requests.filter((r) => r.path.startsWith('/b/'))).toHaveLength(4);
    // The waits were not attempts: one attempt per waiting link, two for the blocked one (429, then success).
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const id of others) expect(byId.get(id)!.attempts.map((a) => a.success)).toEqual([true]);
    expect(byId.get(blockedId!)!.attempts.map((a) => [a.success, a.isBanned, a.httpStatus])).toEqual([
      [false, true, 429],
      [true, false, 200],
    ]);
    // Room for its own 60 s wait for the links to finish: under CI's load the default 30 s ran out first.
  }, 120_000);

  it('respects robots.txt: a disallowed link fails with a clear reason and its page is never requested', async () => {
    const site = await startTestServer(
      {
        '/robots.txt': robotsTxt('User-agent: *\nDisallow: /private\n'),
        '/private/secret': { status: 200, body: staticArticle({ title: 'Secret' }) },
        '/public': { status: 200, body: staticArticle({ title: 'Public' }) },
      },
      { host: '127.0.0.4' },
    );
    servers.push(site);
    const [privateId, publicId] = await enqueue([site.url('/private/secret'), site.url('/public')]);
    const rows = await waitFor('both links finished', allFinished([privateId!, publicId!]));
    const byId = new Map(rows.map((r) => [r.id, r]));
    const denied = byId.get(privateId!)!;
    expect(denied.status).toBe('failed');
    expect(denied.lastErrorType).toBe('robots_disallowed');
    expect(denied.lastError).toMatch(/robots/i);
    expect(denied.attempts).toEqual([]);
    expect(site.hits('/private/secret')).toBe(0);
    expect(byId.get(publicId!)!.status).toBe('done');
    expect(site.hits('/public')).toBe(1);
    // robots.txt is fetched once for the whole fleet, not once per process or per link.
    expect(site.hits('/robots.txt')).toBe(1);
  });

  it('exposes /metrics and logs health lines from each worker process', async () => {
    const listening = await fetchers[0]!.waitForLog((l) => l.msg === 'metrics listening on /metrics');
    const text = await (await fetch(`http://127.0.0.1:${listening.port as number}/metrics`)).text();
    expect(text).toMatch(/crawler_jobs_total\{queue="fetch-simple_http",outcome="done"\} [1-9]/);
    expect(text).toContain('crawler_queue_jobs{queue="fetch-simple_http",state="waiting"}');
    const health = await fetchers[1]!.waitForLog((l) => l.msg === 'health' && Number((l.health as { jobs: Record<string, number> }).jobs.done ?? 0) > 0);
    expect(health.health).toMatchObject({ queues: { 'fetch-simple_http': expect.any(Object) }, rssMb: expect.any(Number) });
    const routerHealth = await router.waitForLog((l) => l.msg === 'health');
    expect(Object.keys((routerHealth.health as { queues: object }).queues)).toEqual(['route']);
  });

  it('refuses to start with a bad environment, naming the variable and its value', async () => {
    const bad = spawnApp('bad-fetcher', `${REPO}apps/fetcher/dist/main.js`, { DATABASE_URL: db.url, FETCHERS: 'simple_http:zero', METRICS_PORT: '99999' });
    expect(await bad.exited).toBe(1);
    const said = bad.raw.join('\n');
    expect(said).toContain('FETCHERS="simple_http:zero"');
    expect(said).toContain('METRICS_PORT="99999"');
  });

  it('shuts down on SIGTERM in order and exits 0', async () => {
    for (const p of [...fetchers, router]) {
      expect(await p.stop('SIGTERM')).toBe(0);
      const msgs = p.logs.map((l) => l.msg);
      expect(msgs).toContain('crawler closed');
      // Ordered by the lines' own timestamps: what matters is the order things happened in the process.
      const at = (msg: string) => Date.parse(String(p.logs.find((l) => l.msg === msg)?.time));
      const trail = p.logs.slice(-5).map((l) => `${String(l.time)} ${String(l.msg)}`).join(' | ');
      expect(at('shutting down: draining workers'), `${p.name}: ${trail}`).toBeLessThanOrEqual(at('crawler closed'));
      expect(at('crawler closed'), trail).toBeLessThanOrEqual(at('shut down'));
    }
  });
});
