import { connect } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createPipelineMetrics } from './pipeline-metrics.js';
import { startMetricsServer, type MetricsServer } from './metrics-server.js';

let server: MetricsServer | undefined;
afterAll(() => server?.close());

describe('startMetricsServer', () => {
  it('serves the registry at /metrics and 404s elsewhere', async () => {
    const metrics = createPipelineMetrics();
    metrics.decision('probe', 'simple_http');
    server = await startMetricsServer({ registry: metrics.registry, port: 0, host: '127.0.0.1' });
    const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await res.text()).toContain('crawler_decisions_total{source="probe",fetcher="simple_http"} 1');
    expect((await fetch(`http://127.0.0.1:${server.port}/other`)).status).toBe(404);
  });

  it('with a bearer token, serves /metrics only to a request that sends it; /healthz and /readyz stay open', async () => {
    const metrics = createPipelineMetrics();
    const token = 'a'.repeat(24) + 'token';
    const guarded = await startMetricsServer({ registry: metrics.registry, port: 0, host: '127.0.0.1', bearerToken: token });
    try {
      const url = `http://127.0.0.1:${guarded.port}`;
      const none = await fetch(`${url}/metrics`);
      expect([none.status, none.headers.get('www-authenticate')]).toEqual([401, 'Bearer realm="metrics"']);
      expect(await none.text()).not.toContain('crawler_');
      expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}x` } })).status).toBe(401);
      expect((await fetch(`${url}/metrics`, { headers: { authorization: `Basic ${token}` } })).status).toBe(401);
      const ok = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect([ok.status, (await ok.text()).includes('crawler_')]).toEqual([200, true]);
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
    } finally {
      await guarded.close();
    }
  });

  it('answers /healthz while the process runs, and /readyz with its checks: 200 when they pass, 503 when one fails', async () => {
    const metrics = createPipelineMetrics();
    let redis = 'ok';
    const ready = await startMetricsServer({
      registry: metrics.registry, port: 0, host: '127.0.0.1',
      readiness: async () => ({ ready: redis === 'ok', checks: { redis, postgres: 'ok' } }),
    });
    try {
      const live = await fetch(`http://127.0.0.1:${ready.port}/healthz`);
      expect([live.status, await live.json()]).toEqual([200, { status: 'ok' }]);
      const ok = await fetch(`http://127.0.0.1:${ready.port}/readyz`);
      expect([ok.status, await ok.json()]).toEqual([200, { status: 'ok', checks: { redis: 'ok', postgres: 'ok' } }]);
      redis = 'fail';
      const down = await fetch(`http://127.0.0.1:${ready.port}/readyz`);
      expect([down.status, await down.json()]).toEqual([503, { status: 'unavailable', checks: { redis, postgres: 'ok' } }]);
      // Liveness does not follow Redis: workers ride out its outage, a restart would not help.
      expect((await fetch(`http://127.0.0.1:${ready.port}/healthz`)).status).toBe(200);
    } finally {
      await ready.close();
    }
  });

  it('cuts off a scraper that never finishes its request (slow-loris) with a 408 and closes the connection', async () => {
    const metrics = createPipelineMetrics();
    const slow = await startMetricsServer({ registry: metrics.registry, port: 0, host: '127.0.0.1', headersTimeoutMs: 200, requestTimeoutMs: 400 });
    try {
      const socket = connect(slow.port, '127.0.0.1');
      let received = '';
      socket.on('data', (d) => (received += d.toString('latin1')));
      socket.on('error', () => undefined);
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      const head = `GET /metrics HTTP/1.1\r\nHost: worker\r\nX-Slow: ${'a'.repeat(100_000)}`;
      let i = 0;
      const drip = setInterval(() => {
        if (socket.writable) socket.write(head[i++ % head.length]!);
      }, 20);
      await closed;
      clearInterval(drip);
      expect(received).toMatch(/^HTTP\/1\.1 408 /);
      expect(i).toBeLessThan(head.length);
    } finally {
      await slow.close();
    }
  }, 20_000);
});
