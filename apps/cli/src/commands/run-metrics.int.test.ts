/**
 * `crawl run` serves the deployed workers' /metrics (and /healthz, /readyz) on METRICS_PORT: a team that starts with
 * the CLI and points Prometheus at it sees its fetches. The real CLI entry point in a child process, real Redis and
 * Postgres, a local site.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisConnection, deleteRedisPrefix } from '@crawler/queue';
import { createTestDatabase, type TestDatabase } from '@crawler/db/testing';
import { REDIS_URL, startTestServer, staticArticle, waitFor, type TestServer } from '@crawler/testkit';
import { startCrawl } from '../__fixtures__/crawl-process.js';

const PREFIX = `{crawler_test_cli_run_metrics_${process.pid}}`;
const TOKEN = 'run-metrics-test-token-0123456789';

let db: TestDatabase;
let site: TestServer;

beforeAll(async () => {
  db = await createTestDatabase('cli_run_metrics');
  site = await startTestServer({ '*': { body: staticArticle() } });
});

afterAll(async () => {
  await site?.close();
  const r = createRedisConnection(REDIS_URL, 'producer');
  await deleteRedisPrefix(r, PREFIX);
  r.disconnect();
  await db?.drop();
});

function cli(args: string[], extraEnv: Record<string, string> = {}) {
  const run = startCrawl(args, {
    cleanEnv: true,
    env: {
      DATABASE_URL: db.url, REDIS_URL, QUEUE_PREFIX: PREFIX, FETCH_ALLOW_HOSTS: '127.0.0.1', FETCHERS: 'simple_http:4',
      DOMAIN_MIN_DELAY_MS: '0', ROBOTS_ENABLED: 'false', LOG_LEVEL: 'info', ...extraEnv,
    },
  });
  return { child: run.child, exited: run.done.then((r) => r.code), stderr: run.stderr };
}

/** The value of one series in a scrape, 0 when absent. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

describe('crawl run', () => {
  it('serves /metrics on METRICS_PORT: the workers\' series, attempts counted as it fetches, behind METRICS_TOKEN', async () => {
    // Port 0: a free one, which the log line names.
    const run = cli(['run'], { METRICS_PORT: '0', METRICS_TOKEN: TOKEN });
    try {
      const port = await waitFor(async () => {
        const m = /"port":(\d+)[^\n]*"msg":"metrics listening on \/metrics"/.exec(run.stderr());
        return m ? Number(m[1]) : null;
      }, `crawl run to log its metrics port; stderr: ${run.stderr()}`, 60_000);
      const scrape = async () => {
        const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
        expect(res.status).toBe(200);
        return res.text();
      };
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(401);
      const attempts = 'crawler_fetch_duration_seconds_count{fetcher="simple_http",outcome="success"}';
      const before = await scrape();
      expect(sample(before, attempts)).toBe(0);
      // Read from Redis at scrape time, as the router's and fetchers' are.
      expect(before).toMatch(/^crawler_queue_jobs\{queue="route",state="waiting"\} 0$/m);
      expect(before).toMatch(/^crawler_queue_workers\{queue="fetch-simple_http"\} [1-9]/m);
      expect(before).toContain('process_resident_memory_bytes');

      const enqueue = cli(['enqueue', site.url('/a'), site.url('/b'), site.url('/c')], { LOG_LEVEL: 'warn' });
      expect(await enqueue.exited, enqueue.stderr()).toBe(0);
      const after = await waitFor(async () => {
        const text = await scrape();
        return sample(text, attempts) >= 3 ? text : null;
      }, 'three successful attempts counted on /metrics', 120_000);
      expect(after).toMatch(/^crawler_jobs_total\{queue="route",outcome="[a-z_]+"\} [1-9]/m);
      expect(after).toMatch(/^crawler_decisions_total\{source="[a-z_]+",fetcher="simple_http"\} [1-9]/m);
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    } finally {
      run.child.kill('SIGTERM');
    }
    expect(await run.exited, run.stderr()).toBe(0);
  }, 240_000);

  it('refuses a METRICS_PORT that is not a port, naming it, before it connects to anything', async () => {
    const run = cli(['run'], { METRICS_PORT: 'ninety', REDIS_URL: 'redis://127.0.0.1:1/0' });
    expect(await run.exited).toBe(2);
    expect(run.stderr()).toMatch(/METRICS_PORT="?ninety"?: expected a port from 0 to 65535, or "off"/);
  }, 60_000);

  it('answers /healthz while its Redis is down, with /readyz saying Redis is what it waits for; a SIGTERM ends the wait', async () => {
    // A port nothing listens on: the Redis of a fleet started before its Redis is up (a compose file, a failover).
    const deadPort = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number };
        s.close(() => resolve(port));
      });
    });
    const run = cli(['run'], { METRICS_PORT: '0', REDIS_URL: `redis://127.0.0.1:${deadPort}/0` });
    try {
      const port = await waitFor(async () => {
        const m = /"port":(\d+)[^\n]*"msg":"metrics listening on \/metrics"/.exec(run.stderr());
        return m ? Number(m[1]) : null;
      }, `crawl run to serve /healthz while waiting for Redis; stderr: ${run.stderr()}`, 60_000);
      // Alive: a restart policy must not kill a worker for its Redis being away. Not ready: no work goes to it.
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect({ status: ready.status, body: await ready.json() }).toEqual({ status: 503, body: { status: 'unavailable', checks: { redis: 'fail', postgres: 'ok' } } });
    } finally {
      run.child.kill('SIGTERM');
    }
    expect(await run.exited, run.stderr()).toBe(0);
    expect(run.stderr()).toContain('stopped before starting');
  }, 120_000);
});
