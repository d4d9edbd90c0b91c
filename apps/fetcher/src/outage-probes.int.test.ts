/**
 * What an operator's probes see while Redis is away: the BUILT fetcher app on a private Redis that is killed under it.
 * Liveness stays up, readiness says which dependency failed, and /metrics still answers with what the process knows
 * (a scrape that hung for Redis would mark the worker down in Prometheus and lose every metric for the outage).
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { startPrivateRedis, waitFor, type PrivateRedis } from '@crawler/testkit';
import { spawnApp, type AppProcess } from './__fixtures__/spawn-app.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));

let db: TestDatabase;
let redis: PrivateRedis;
let app: AppProcess | undefined;

beforeAll(async () => {
  execFileSync(`${REPO}node_modules/.bin/tsc`, ['-p', `${REPO}apps/fetcher/tsconfig.json`], { stdio: 'pipe' });
  [db, redis] = await Promise.all([createTestDatabase('apps_outage_probes'), startPrivateRedis()]);
}, 120_000);

afterAll(async () => {
  await app?.stop('SIGKILL');
  await redis?.close();
  await db?.drop();
});

/** GET a probe; a request that gets no answer in `ms` fails the test rather than hanging it. */
async function get(port: number, path: string, ms = 8_000): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(ms) });
  return { status: res.status, body: await res.text() };
}

describe('probes during a Redis outage', () => {
  it('/healthz 200, /readyz 503 naming redis, /metrics 200 without the queue gauges and counting the failed read', async () => {
    app = spawnApp('fetcher-outage', `${REPO}apps/fetcher/dist/main.js`, {
      DATABASE_URL: db.url, REDIS_URL: redis.url, FETCHERS: 'simple_http:1', METRICS_PORT: '0', LOG_LEVEL: 'info', RECONCILE_INTERVAL_MS: '0', SCHEDULER_INTERVAL_MS: '0', HEALTH_LOG_INTERVAL_MS: '500',
    });
    await app.waitForLog((l) => l.msg === 'workers started', 60_000);
    const port = (await app.waitForLog((l) => l.msg === 'metrics listening on /metrics')).port as number;
    expect((await get(port, '/metrics')).body).toContain('crawler_queue_jobs{queue="fetch-simple_http"');

    await redis.kill();
    await app.waitForLog((l) => l.msg?.startsWith('redis unreachable') === true, 30_000);
    expect(await get(port, '/healthz')).toEqual({ status: 200, body: '{"status":"ok"}' });
    const ready = await get(port, '/readyz');
    expect([ready.status, JSON.parse(ready.body)]).toEqual([503, { status: 'unavailable', checks: { redis: 'fail', postgres: 'ok' } }]);
    expect((await get(port, '/readyz')).status).toBe(503);
    // The periodic health line goes on through the outage, saying the queue depths could not be read.
    const during = await app.waitForLog((l) => l.msg === 'health' && (l.health as { queues: unknown }).queues === null, 20_000);
    expect(during.health).toMatchObject({ queues: null, jobs: {} });
    const scrape = await get(port, '/metrics');
    expect(scrape.status).toBe(200);
    expect(scrape.body).toContain('process_cpu_seconds_total');
    expect(scrape.body).not.toContain('crawler_queue_jobs{');
    // The failed read is counted when it fails, after its scrape was written: the next scrape shows it.
    const next = await get(port, '/metrics');
    expect(next.body).toMatch(/crawler_queue_depth_errors_total [1-9]/);

    await redis.start();
    await waitFor(async () => (await get(port, '/metrics')).body.includes('crawler_queue_jobs{queue="fetch-simple_http"'), 'queue gauges after Redis came back', 30_000);
    expect((await get(port, '/readyz')).status).toBe(200);
    // The outage in the log: one warning from readiness for its probes, one line when Redis answered again.
    await app.waitForLog((l) => l.level === 30 && l.dependency === 'redis' && l.msg?.startsWith('health check: redis answers again') === true);
    expect(app.logs.filter((l) => l.level === 40 && l.dependency === 'redis').map((l) => l.msg)).toEqual(['health check failed: redis does not answer (logged again when it does)']);
  }, 120_000);
});
