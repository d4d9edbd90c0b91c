/**
 * Start-up as an operator meets it: the BUILT fetcher app, started twice on one host with default settings (both
 * default to METRICS_PORT 9464), and once with a typo in FETCHERS.
 */
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { spawnApp, type AppProcess } from './__fixtures__/spawn-app.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const PREFIX = `{crawler_test_apps_startup_${process.pid}}`;

let db: TestDatabase;
const apps: AppProcess[] = [];
let holder: Server | null = null;

beforeAll(async () => {
  execFileSync(`${REPO}node_modules/.bin/tsc`, ['-p', `${REPO}apps/fetcher/tsconfig.json`], { stdio: 'pipe' });
  db = await createTestDatabase('apps_startup');
}, 120_000);

afterAll(async () => {
  await Promise.all(apps.map((a) => a.stop('SIGKILL')));
  await new Promise<void>((resolve) => (holder ? holder.close(() => resolve()) : resolve()));
  await db?.drop();
});

/** Hold 127.0.0.1:9464 unless someone on the machine already does: either way the default port is taken. */
async function occupyDefaultMetricsPort(): Promise<void> {
  const server = createServer();
  await new Promise<void>((resolve) => {
    server.once('error', () => resolve());
    server.listen(9464, '127.0.0.1', () => {
      holder = server;
      resolve();
    });
  });
}

describe('fetcher start-up', () => {
  it('starts two workers on one host with default settings: the one that finds 9464 taken falls back to a free port and says so', async () => {
    await occupyDefaultMetricsPort();
    // No METRICS_PORT: the defaults, as a newcomer runs them.
    const env = { DATABASE_URL: db.url, QUEUE_PREFIX: PREFIX, FETCHERS: 'simple_http:1', LOG_LEVEL: 'info', RECONCILE_INTERVAL_MS: '0' };
    const a = spawnApp('fetcher-a', `${REPO}apps/fetcher/dist/main.js`, env);
    const b = spawnApp('fetcher-b', `${REPO}apps/fetcher/dist/main.js`, env);
    apps.push(a, b);
    await Promise.all([a, b].map((p) => p.waitForLog((l) => l.msg === 'workers started', 60_000)));
    const ports = await Promise.all([a, b].map(async (p) => (await p.waitForLog((l) => l.msg === 'metrics listening on /metrics')).port as number));
    expect(ports[0]).not.toBe(ports[1]);
    expect(ports).not.toContain(9464);
    for (const p of [a, b]) {
      const warned = p.logs.find((l) => l.level === 40 && typeof l.msg === 'string' && l.msg.startsWith('METRICS_PORT 9464 is taken'));
      expect(warned, p.name).toBeDefined();
      expect(p.raw.join('\n')).not.toMatch(/EADDRINUSE/);
    }
    // Both workers serve fetch-simple_http; Redis counts their connections fleet-wide. BullMQ opens a worker's
    // blocking connection (the one Redis counts) after 'workers started', so read /metrics until both are seen.
    let text = '';
    let workers = 0;
    for (let deadline = Date.now() + 15_000; workers < 2 && Date.now() < deadline; ) {
      text = await (await fetch(`http://127.0.0.1:${ports[1]}/metrics`)).text();
      workers = Number(/crawler_queue_workers\{queue="fetch-simple_http"\} (\d+)/.exec(text)?.[1] ?? 0);
      if (workers < 2) await new Promise((r) => setTimeout(r, 250));
    }
    expect(text).toContain('crawler_queue_jobs');
    expect(workers).toBeGreaterThanOrEqual(2);
    // Beside /metrics: liveness for a restart policy, readiness (Redis and Postgres answer) for a rollout.
    const live = await fetch(`http://127.0.0.1:${ports[0]}/healthz`);
    expect([live.status, await live.json()]).toEqual([200, { status: 'ok' }]);
    const ready = await fetch(`http://127.0.0.1:${ports[0]}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ok', checks: { redis: 'ok', postgres: 'ok' } }]);
  }, 90_000);

  it('refuses a METRICS_PORT set explicitly that is taken, in one line without a stack trace', async () => {
    await occupyDefaultMetricsPort();
    const p = spawnApp('fetcher-explicit', `${REPO}apps/fetcher/dist/main.js`, { DATABASE_URL: db.url, QUEUE_PREFIX: PREFIX, FETCHERS: 'simple_http:1', METRICS_PORT: '9464', RECONCILE_INTERVAL_MS: '0' });
    apps.push(p);
    expect(await p.exited).toBe(1);
    const failed = p.logs.find((l) => typeof l.msg === 'string' && l.msg.startsWith('start-up failed'));
    expect(failed?.msg).toMatch(/METRICS_PORT=9464: 127\.0\.0\.1:9464 is already in use/);
    expect(failed?.err).toBeUndefined();
  }, 60_000);

  it('refuses a CHROMIUM_PATH it cannot launch when it serves a browser fetcher, and ignores it when it serves only plain HTTP', async () => {
    const env = { DATABASE_URL: db.url, QUEUE_PREFIX: PREFIX, METRICS_PORT: '0', LOG_LEVEL: 'info', RECONCILE_INTERVAL_MS: '0', SCHEDULER_INTERVAL_MS: '0', CHROMIUM_PATH: '/nonexistent/chromium' };
    const browser = spawnApp('fetcher-no-chromium', `${REPO}apps/fetcher/dist/main.js`, { ...env, FETCHERS: 'simple_http:1,playwright_stealth:1' });
    const plain = spawnApp('fetcher-plain', `${REPO}apps/fetcher/dist/main.js`, { ...env, FETCHERS: 'simple_http:1' });
    apps.push(browser, plain);
    expect(await browser.exited).toBe(1);
    expect(browser.raw.join('\n')).toMatch(/CHROMIUM_PATH="\/nonexistent\/chromium": no such file; the browser fetchers this process serves \(playwright_stealth\)/);
    expect(browser.logs.find((l) => l.msg === 'workers started')).toBeUndefined();
    await plain.waitForLog((l) => l.msg === 'workers started', 60_000);
    expect(await plain.stop('SIGTERM')).toBe(0);
  }, 90_000);

  // Database 10 waits in the SELECT of the database check; database 0 has none, and waits for Redis itself.
  for (const redisDb of [10, 0]) it(`exits at once, cleanly, on SIGTERM during start-up (Redis not reachable yet, database ${redisDb}), instead of waiting for the start to finish`, async () => {
    // Nothing listens on this port: the start waits on Redis, as a worker started before its Redis does.
    const down = createServer();
    await new Promise<void>((resolve) => down.listen(0, '127.0.0.1', resolve));
    const port = (down.address() as { port: number }).port;
    await new Promise<void>((resolve) => down.close(() => resolve()));
    const p = spawnApp(`fetcher-sigterm-at-start-${redisDb}`, `${REPO}apps/fetcher/dist/main.js`, {
      DATABASE_URL: db.url, REDIS_URL: `redis://127.0.0.1:${port}/${redisDb}`, QUEUE_PREFIX: PREFIX, FETCHERS: 'simple_http:1', METRICS_PORT: '0',
      LOG_LEVEL: 'info', RECONCILE_INTERVAL_MS: '0', SHUTDOWN_DRAIN_TIMEOUT_MS: '0',
    });
    apps.push(p);
    // /metrics listens before the Redis check: the process is mid-start when the signal comes.
    await p.waitForLog((l) => l.msg === 'metrics listening on /metrics', 60_000);
    expect(await p.stop('SIGTERM')).toBe(0);
    expect(p.logs.find((l) => l.msg === 'workers started')).toBeUndefined();
    expect(p.logs.find((l) => l.msg === 'shutdown timed out; exiting')).toBeUndefined();
    expect(p.logs.find((l) => l.msg === 'start-up aborted by signal')).toBeDefined();
  }, 90_000);

  it('refuses an unknown fetcher name, naming the variable', async () => {
    const p = spawnApp('fetcher-typo', `${REPO}apps/fetcher/dist/main.js`, { DATABASE_URL: db.url, QUEUE_PREFIX: PREFIX, FETCHERS: 'simple_htp:4' });
    apps.push(p);
    expect(await p.exited).toBe(1);
    expect(p.raw.join('\n')).toMatch(/FETCHERS="simple_htp:4": unknown fetcher 'simple_htp'/);
    expect(p.logs.find((l) => l.msg === 'workers started')).toBeUndefined();
  }, 60_000);
});
