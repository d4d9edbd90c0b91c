import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createPipelineMetrics } from './pipeline-metrics.js';

// The Grafana dashboard lives in deploy/ but queries these metrics by name: keep the two from drifting apart.
const dashboard = JSON.parse(readFileSync(new URL('../../../../deploy/grafana/crawler-dashboard.json', import.meta.url), 'utf8')) as {
  __inputs: Array<{ name: string; pluginId: string }>;
  panels: Array<{ type: string; targets?: Array<{ expr: string; datasource: { uid: string } }> }>;
};

describe('deploy/grafana/crawler-dashboard.json', () => {
  const exprs = dashboard.panels.flatMap((p) => p.targets ?? []);

  it('queries only metrics this package registers', async () => {
    const metrics = createPipelineMetrics();
    const registered = new Set((await metrics.registry.getMetricsAsJSON()).map((m) => m.name));
    const queried = new Set(exprs.flatMap((t) => t.expr.match(/crawler_[a-z_]+/g) ?? []).map((n) => n.replace(/_(bucket|count|sum)$/, '')));
    expect(queried.size).toBeGreaterThanOrEqual(7);
    for (const name of queried) expect(registered, name).toContain(name);
  });

  it('is importable with a Prometheus datasource input', () => {
    expect(dashboard.__inputs).toEqual([expect.objectContaining({ name: 'DS_PROMETHEUS', pluginId: 'prometheus' })]);
    for (const t of exprs) expect(t.datasource.uid).toBe('${DS_PROMETHEUS}');
  });
});
