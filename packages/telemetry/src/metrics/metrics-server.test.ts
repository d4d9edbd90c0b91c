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
});
