import { describe, expect, it } from 'vitest';
import { createPipelineMetrics } from '@crawler/telemetry';
import { countingMetrics } from './worker-process.js';

describe('a worker process\'s metrics (the health line\'s counting wrapper)', () => {
  it('reach /metrics for every event, the optional ones included: exit tiers, analysis threads, stalled jobs', async () => {
    const inner = createPipelineMetrics();
    const counts: Record<string, number> = {};
    const m = countingMetrics(inner, counts);
    m.jobFinished('fetch-simple_http', 'done');
    m.exitObserved('direct', { bytes: 2048, blocked: true });
    m.analysisThreadEvent('timed_out');
    m.jobStalled('route');
    expect(counts).toEqual({ done: 1 });
    const text = await inner.registry.metrics();
    expect(text).toContain('crawler_jobs_total{queue="fetch-simple_http",outcome="done"} 1');
    expect(text).toContain('crawler_exit_requests_total{tier="direct"} 1');
    expect(text).toContain('crawler_exit_bytes_total{tier="direct"} 2048');
    expect(text).toContain('crawler_exit_blocks_total{tier="direct"} 1');
    expect(text).toContain('crawler_analysis_thread_events_total{event="timed_out"} 1');
    expect(text).toContain('crawler_jobs_stalled_total{queue="route"} 1');
  });
});
