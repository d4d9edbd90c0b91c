import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import type { PipelineMetrics } from '@crawler/core';
import { createPipelineMetrics, metricsHandler } from './pipeline-metrics.js';
import { DomainLabeler } from './domain-labels.js';

describe('createPipelineMetrics', () => {
  it('implements the PipelineMetrics contract with the documented metric names and labels', async () => {
    const metrics = createPipelineMetrics();
    const contract: PipelineMetrics = metrics;
    contract.jobFinished('route', 'done');
    contract.jobFinished('route', 'done');
    contract.jobFinished('fetch-simple_http', 'failed');
    contract.decision('learned', 'simple_http');
    contract.probe('reused');
    contract.probe('reused');
    contract.probe('discarded');
    const text = await metrics.registry.metrics();
    expect(text).toContain('crawler_jobs_total{queue="route",outcome="done"} 2');
    expect(text).toContain('crawler_jobs_total{queue="fetch-simple_http",outcome="failed"} 1');
    expect(text).toContain('crawler_decisions_total{source="learned",fetcher="simple_http"} 1');
    expect(text).toContain('crawler_probe_total{outcome="reused"} 2');
    expect(text).toContain('crawler_probe_total{outcome="discarded"} 1');
  });

  it('counts analysis threads that died or were stopped past their deadline', async () => {
    const metrics = createPipelineMetrics();
    metrics.analysisThreadEvent('died');
    metrics.analysisThreadEvent('timed_out');
    metrics.analysisThreadEvent('timed_out');
    const text = await metrics.registry.metrics();
    expect(text).toContain('crawler_analysis_thread_events_total{event="died"} 1');
    expect(text).toContain('crawler_analysis_thread_events_total{event="timed_out"} 2');
  });

  it('records fetch durations in seconds into histogram buckets', async () => {
    const metrics = createPipelineMetrics({ fetchDurationBucketsSeconds: [0.1, 1, 10] });
    metrics.fetchObserved('simple_http', 80, 'success');
    metrics.fetchObserved('simple_http', 400, 'success');
    metrics.fetchObserved('playwright', 4000, 'timeout');
    const text = await metrics.registry.metrics();
    expect(text).toContain('crawler_fetch_duration_seconds_bucket{le="0.1",fetcher="simple_http",outcome="success"} 1');
    expect(text).toContain('crawler_fetch_duration_seconds_bucket{le="1",fetcher="simple_http",outcome="success"} 2');
    expect(text).toContain('crawler_fetch_duration_seconds_sum{fetcher="simple_http",outcome="success"} 0.48');
    expect(text).toContain('crawler_fetch_duration_seconds_count{fetcher="playwright",outcome="timeout"} 1');
    expect(text).toContain('crawler_fetch_duration_seconds_bucket{le="1",fetcher="playwright",outcome="timeout"} 0');
  });

  it('bounds the domain label of pauses and bans', async () => {
    const metrics = createPipelineMetrics({ domains: { maxDomains: 1, promoteAfter: 1 } });
    metrics.pause('big.test', 'blocked_403');
    metrics.pause('small.test', 'blocked_captcha');
    metrics.ban('big.test');
    metrics.ban('third.test');
    const text = await metrics.registry.metrics();
    expect(text).toContain('crawler_pauses_total{domain="big.test",error_type="blocked_403"} 1');
    expect(text).toContain('crawler_pauses_total{domain="other",error_type="blocked_captcha"} 1');
    expect(text).toContain('crawler_bans_total{domain="big.test"} 1');
    expect(text).toContain('crawler_bans_total{domain="other"} 1');
    expect(text).not.toContain('small.test');
  });

  it('labels a pause with its site from the first pause on, by default', async () => {
    const metrics = createPipelineMetrics();
    // One pause per site is the common case: it must not land under "other".
    metrics.pause('www.shop.co.uk', 'rate_limited');
    metrics.pause('api.shop.co.uk', 'rate_limited');
    metrics.pause('127.0.0.5', 'site_unreachable');
    const text = await metrics.registry.metrics();
    expect(text).toContain('crawler_pauses_total{domain="shop.co.uk",error_type="rate_limited"} 2');
    expect(text).toContain('crawler_pauses_total{domain="127.0.0.5",error_type="site_unreachable"} 1');
    expect(text).not.toContain('domain="other"');
  });

  it('reads queue depths at scrape time and survives a failing reader', async () => {
    const metrics = createPipelineMetrics();
    let waiting = 5;
    let fail = false;
    metrics.collectQueueDepths(async () => {
      if (fail) throw new Error('redis down');
      return { route: { waiting, active: 1 }, 'fetch-playwright': { delayed: 3 } };
    });
    expect(await metrics.registry.metrics()).toContain('crawler_queue_jobs{queue="route",state="waiting"} 5');
    waiting = 7;
    const second = await metrics.registry.metrics();
    expect(second).toContain('crawler_queue_jobs{queue="route",state="waiting"} 7');
    expect(second).toContain('crawler_queue_jobs{queue="fetch-playwright",state="delayed"} 3');
    fail = true;
    const third = await metrics.registry.metrics();
    expect(third).not.toContain('crawler_queue_jobs{');
    // The error counter is serialised in the same scrape, before the gauge's async read fails: it shows next time.
    expect(await metrics.registry.metrics()).toContain('crawler_queue_depth_errors_total 1');
  });

  it('answers a scrape without the Redis gauges when their read never answers (Redis away), and reads once, not per scrape', async () => {
    const metrics = createPipelineMetrics({ scrapeReadTimeoutMs: 50 });
    let reads = 0;
    let answer: ((depths: Record<string, Record<string, number>>) => void) | undefined;
    // A worker's client queues commands while Redis is away: the read neither answers nor fails.
    metrics.collectQueueDepths(() => {
      reads++;
      return new Promise((resolve) => (answer = resolve));
    });
    metrics.jobFinished('route', 'done');
    const first = await metrics.registry.metrics();
    expect(first).toContain('crawler_jobs_total{queue="route",outcome="done"} 1');
    expect(first).not.toContain('crawler_queue_jobs{');
    const second = await metrics.registry.metrics();
    expect(second).toContain('crawler_queue_depth_errors_total 1');
    expect(reads).toBe(1);
    // Redis is back: the waiting read answers, and the next scrape reads afresh.
    answer!({ route: { waiting: 2 } });
    await new Promise((r) => setImmediate(r));
    metrics.collectQueueDepths(async () => ({ route: { waiting: 4 } }));
    expect(await metrics.registry.metrics()).toContain('crawler_queue_jobs{queue="route",state="waiting"} 4');
  });

  it('reads the workers of each queue at scrape time', async () => {
    const metrics = createPipelineMetrics();
    let browsers = 0;
    metrics.collectQueueWorkers(async () => ({ route: 2, 'fetch-simple_http': 4, 'fetch-playwright': browsers }));
    const text = await metrics.registry.metrics();
    expect(text).toContain('crawler_queue_workers{queue="route"} 2');
    expect(text).toContain('crawler_queue_workers{queue="fetch-playwright"} 0');
    browsers = 1;
    expect(await metrics.registry.metrics()).toContain('crawler_queue_workers{queue="fetch-playwright"} 1');
  });

  it('shares metrics when two pipelines register on one registry, and can add Node process metrics', async () => {
    const registry = new Registry();
    const a = createPipelineMetrics({ registry, defaultMetrics: true });
    const b = createPipelineMetrics(registry);
    a.ban('x.test');
    b.jobFinished('route', 'done');
    const text = await registry.metrics();
    expect(text).toContain('crawler_jobs_total{queue="route",outcome="done"} 1');
    expect(text).toContain('process_cpu_user_seconds_total');
  });
});

describe('metricsHandler', () => {
  it('answers with the Prometheus text format and the metrics', async () => {
    const metrics = createPipelineMetrics();
    metrics.jobFinished('route', 'done');
    const { contentType, body } = await metricsHandler(metrics.registry)();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(body).toContain('# TYPE crawler_jobs_total counter');
  });
});

describe('DomainLabeler', () => {
  it('promotes frequent domains only, up to the limit, and always tracks configured ones', () => {
    const labels = new DomainLabeler({ maxDomains: 2, promoteAfter: 3, alwaysTrack: ['VIP.test'] });
    expect(labels.label('vip.test')).toBe('vip.test');
    expect(['a.test', 'a.test', 'a.test'].map((d) => labels.label(d))).toEqual(['other', 'other', 'a.test']);
    expect(labels.label('once.test')).toBe('other');
    labels.label('b.test');
    labels.label('b.test');
    expect(labels.label('B.test')).toBe('b.test');
    ['c.test', 'c.test', 'c.test', 'c.test'].forEach((d) => expect(labels.label(d)).toBe('other'));
    expect(labels.label('a.test')).toBe('a.test');
  });
});

describe('stalled jobs', () => {
  it('counts them per queue as crawler_jobs_stalled_total, a counter', async () => {
    const m = createPipelineMetrics();
    m.jobStalled!('route');
    m.jobStalled!('route');
    m.jobStalled!('fetch-playwright');
    const text = await m.registry.metrics();
    expect(text).toContain('# TYPE crawler_jobs_stalled_total counter');
    expect(text).toContain('crawler_jobs_stalled_total{queue="route"} 2');
    expect(text).toContain('crawler_jobs_stalled_total{queue="fetch-playwright"} 1');
  });
});
