import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import { sharedWhilePending, siteOf, withTimeout, type PipelineMetrics } from '@crawler/core';
import { DomainLabeler, type DomainLabelerOptions } from './domain-labels.js';

/** The registrable domain of a host; the host itself when it has none (an IP address, `localhost`). */
function siteOrHost(host: string): string {
  try {
    return siteOf(host);
  } catch {
    return host;
  }
}

export interface PipelineMetricsOptions {
  /** Registry to register on; a process usually has one, served at /metrics. @defaultValue a new Registry */
  registry?: Registry;
  /**
   * Bounds on the `domain` label of pauses and bans. The label is the registrable domain (`shop.example` for
   * `www.shop.example`, by the Public Suffix List): what an operator acts on, and fewer series than host names. A pause
   * is rare per site (one per block episode), so a site gets its own series from its first pause; the first
   * `maxDomains` sites keep theirs for the life of the process and later ones count as `other`: at most
   * maxDomains × error types series (100 × 4). @defaultValue { maxDomains: 100, promoteAfter: 1 }
   */
  domains?: DomainLabelerOptions;
  /** Also export Node process metrics (event loop lag, heap, GC). @defaultValue false */
  defaultMetrics?: boolean;
  /** Histogram buckets for fetch duration, in seconds: plain HTTP lands low, browsers in the seconds. */
  fetchDurationBucketsSeconds?: number[];
  /**
   * How long a scrape waits for the gauges read from Redis (queue depths, workers) before it answers without them
   * and counts an error. A worker's Redis client queues commands while Redis is away rather than failing them, so
   * without a bound a scrape during an outage never answers: Prometheus marks the process down and every other
   * metric is lost with it. Under Prometheus' default 10 s scrape timeout. @defaultValue 2000
   */
  scrapeReadTimeoutMs?: number;
}

/** Queue → state (waiting, active, delayed, failed, ...) → job count, as BullMQ's `getJobCounts` returns per queue. */
export type QueueDepths = Record<string, Record<string, number>>;

/** The pipeline's metrics over prom-client, plus the registry to serve and the queue-depth gauge. */
export interface PrometheusPipelineMetrics extends PipelineMetrics {
  readonly registry: Registry;
  /** Read queue depths on each scrape (not on a timer), so the gauge is as fresh as the scrape and costs nothing between them. */
  collectQueueDepths(getCounts: () => Promise<QueueDepths>): void;
  /**
   * Read the workers connected to each queue on each scrape (crawler_queue_workers): 0 beside waiting jobs is a queue
   * no process serves, the alert an operator wants.
   */
  collectQueueWorkers(getWorkers: () => Promise<Record<string, number>>): void;
}

const DEFAULT_BUCKETS_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60];
const withDefaultMetrics = new WeakSet<Registry>();

/** Register `create()` unless the registry already has a metric of that name (two pipelines in one process share it). */
function once<M extends Metric<string>>(registry: Registry, name: string, create: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? create();
}

/**
 * Build the crawler's Prometheus metrics: crawler_jobs_total, crawler_fetch_duration_seconds,
 * crawler_decisions_total, crawler_probe_total, crawler_pauses_total, crawler_bans_total, crawler_queue_jobs, the exit
 * tiers' counters and crawler_analysis_thread_events_total.
 */
export function createPipelineMetrics(registryOrOptions?: Registry | PipelineMetricsOptions): PrometheusPipelineMetrics {
  const options: PipelineMetricsOptions = registryOrOptions instanceof Registry ? { registry: registryOrOptions } : (registryOrOptions ?? {});
  const registry = options.registry ?? new Registry();
  const registers = [registry];
  const domains = new DomainLabeler({ maxDomains: 100, promoteAfter: 1, ...options.domains });
  const siteLabel = (domain: string) => domains.label(siteOrHost(domain));

  if (options.defaultMetrics && !withDefaultMetrics.has(registry)) {
    withDefaultMetrics.add(registry);
    collectDefaultMetrics({ register: registry });
  }

  const jobs = once(registry, 'crawler_jobs_total', () => new Counter({ name: 'crawler_jobs_total', help: 'Jobs finished, by queue and outcome.', labelNames: ['queue', 'outcome'], registers }));
  const fetchDuration = once(
    registry,
    'crawler_fetch_duration_seconds',
    () =>
      new Histogram({
        name: 'crawler_fetch_duration_seconds',
        help: 'Time one fetch took, by fetcher and outcome (success or the error type).',
        labelNames: ['fetcher', 'outcome'],
        buckets: options.fetchDurationBucketsSeconds ?? DEFAULT_BUCKETS_SECONDS,
        registers,
      }),
  );
  const decisions = once(registry, 'crawler_decisions_total', () => new Counter({ name: 'crawler_decisions_total', help: 'Router decisions, by selection source and chosen fetcher.', labelNames: ['source', 'fetcher'], registers }));
  const probes = once(registry, 'crawler_probe_total', () => new Counter({ name: 'crawler_probe_total', help: 'Probe outcomes: body reused, discarded for another fetcher, or probe failed.', labelNames: ['outcome'], registers }));
  const pauses = once(registry, 'crawler_pauses_total', () => new Counter({ name: 'crawler_pauses_total', help: 'Domain or link pauses after a block, by domain (bounded) and error type.', labelNames: ['domain', 'error_type'], registers }));
  const bans = once(registry, 'crawler_bans_total', () => new Counter({ name: 'crawler_bans_total', help: 'Attempts marked banned, by domain (bounded).', labelNames: ['domain'], registers }));

  // Exit tiers: tier names come from configuration (a bounded set); a proxy is labelled host:port only, credentials
  // masked by core maskProxyUrl before it gets here.
  const exitRequests = once(registry, 'crawler_exit_requests_total', () => new Counter({ name: 'crawler_exit_requests_total', help: 'Requests that left through each exit tier.', labelNames: ['tier'], registers }));
  const exitBytes = once(registry, 'crawler_exit_bytes_total', () => new Counter({ name: 'crawler_exit_bytes_total', help: 'Response body bytes received through each exit tier.', labelNames: ['tier'], registers }));
  const exitBlocks = once(registry, 'crawler_exit_blocks_total', () => new Counter({ name: 'crawler_exit_blocks_total', help: 'Requests a site blocked (challenge, 403), by exit tier.', labelNames: ['tier'], registers }));
  const exitCost = once(registry, 'crawler_exit_cost_units_total', () => new Counter({ name: 'crawler_exit_cost_units_total', help: 'Cost units spent on each exit tier (PROXY_TIERS cost per request).', labelNames: ['tier'], registers }));
  const proxyFailures = once(registry, 'crawler_exit_proxy_failures_total', () => new Counter({ name: 'crawler_exit_proxy_failures_total', help: 'Proxies that refused, answered 407 or timed out, by tier and proxy (host:port).', labelNames: ['tier', 'proxy'], registers }));
  const proxyRequests = once(registry, 'crawler_exit_proxy_requests_total', () => new Counter({ name: 'crawler_exit_proxy_requests_total', help: 'Requests through each proxy (host:port, credentials masked), by tier.', labelNames: ['tier', 'proxy'], registers }));
  const proxyBytes = once(registry, 'crawler_exit_proxy_bytes_total', () => new Counter({ name: 'crawler_exit_proxy_bytes_total', help: 'Response body bytes through each proxy, by tier.', labelNames: ['tier', 'proxy'], registers }));
  const proxyBlocks = once(registry, 'crawler_exit_proxy_blocks_total', () => new Counter({ name: 'crawler_exit_proxy_blocks_total', help: 'Requests a site blocked, by tier and proxy.', labelNames: ['tier', 'proxy'], registers }));
  const exitUnavailable = once(registry, 'crawler_exit_unavailable_total', () => new Counter({ name: 'crawler_exit_unavailable_total', help: 'Jobs that found every proxy of their tier down and waited.', labelNames: ['tier'], registers }));

  const stalled = once(registry, 'crawler_jobs_stalled_total', () => new Counter({ name: 'crawler_jobs_stalled_total', help: 'Jobs whose worker stopped renewing their lock (process died or event loop blocked), put back to run again, by queue; counted by the worker that found them.', labelNames: ['queue'], registers }));
  const analysisThreads = once(registry, 'crawler_analysis_thread_events_total', () => new Counter({ name: 'crawler_analysis_thread_events_total', help: 'Response analysis threads that died, or were stopped because a response took longer than its deadline.', labelNames: ['event'], registers }));

  const scrapeReadTimeoutMs = options.scrapeReadTimeoutMs ?? 2_000;
  const scrapeErrors = once(registry, 'crawler_queue_depth_errors_total', () => new Counter({ name: 'crawler_queue_depth_errors_total', help: 'Scrapes where queue depths or workers could not be read.', registers }));
  /**
   * A gauge read from Redis at scrape time. A scrape must not fail because Redis hiccuped, and stale values would
   * mislead: a failed read, or one that does not answer within scrapeReadTimeoutMs, reports none and counts the
   * error. A read still waiting (Redis away) is joined by the next scrape rather than started again, so an outage
   * piles up one read's commands in the client, not one per scrape.
   */
  function readAtScrape<L extends string, T>(name: string, help: string, labelNames: L[], write: (gauge: Gauge<L>, value: T) => void): { read?: () => Promise<T> } {
    const source: { read?: () => Promise<T> } = {};
    const readShared = sharedWhilePending(() => source.read!());
    once(registry, name, () =>
      new Gauge<L>({
        name, help, labelNames, registers,
        async collect() {
          if (!source.read) return;
          let value: T;
          try {
            value = await withTimeout(readShared(), scrapeReadTimeoutMs);
          } catch {
            scrapeErrors.inc();
            this.reset();
            return;
          }
          this.reset();
          write(this, value);
        },
      }),
    );
    return source;
  }
  const depthSource = readAtScrape<'queue' | 'state', QueueDepths>('crawler_queue_jobs', 'Jobs in each queue by state, read at scrape time.', ['queue', 'state'], (g, depths) => {
    for (const [queue, states] of Object.entries(depths)) for (const [state, count] of Object.entries(states)) g.set({ queue, state }, count);
  });
  const workerSource = readAtScrape<'queue', Record<string, number>>(
    'crawler_queue_workers',
    'Workers connected to each queue, fleet-wide, read at scrape time (0 with jobs waiting: nobody serves the queue).',
    ['queue'],
    (g, workers) => {
      for (const [queue, n] of Object.entries(workers)) g.set({ queue }, n);
    },
  );

  return {
    registry,
    collectQueueDepths: (fn) => {
      depthSource.read = fn;
    },
    collectQueueWorkers: (fn) => {
      workerSource.read = fn;
    },
    jobFinished: (queue, outcome) => jobs.inc({ queue, outcome }),
    fetchObserved: (fetcher, durationMs, outcome) => fetchDuration.observe({ fetcher, outcome }, durationMs / 1000),
    decision: (source, fetcher) => decisions.inc({ source, fetcher }),
    probe: (outcome) => probes.inc({ outcome }),
    pause: (domain, errorType) => pauses.inc({ domain: siteLabel(domain), error_type: errorType }),
    ban: (domain) => bans.inc({ domain: siteLabel(domain) }),
    analysisThreadEvent: (event) => analysisThreads.inc({ event }),
    jobStalled: (queue) => stalled.inc({ queue }),
    exitObserved: (tier, e) => {
      if (e.proxyFailed) proxyFailures.inc({ tier, proxy: e.proxy ?? 'unknown' });
      else if (e.unavailable) exitUnavailable.inc({ tier });
      else {
        exitRequests.inc({ tier });
        if (e.bytes) exitBytes.inc({ tier }, e.bytes);
        if (e.blocked) exitBlocks.inc({ tier });
        if (e.cost) exitCost.inc({ tier }, e.cost);
        if (e.proxy) {
          proxyRequests.inc({ tier, proxy: e.proxy });
          if (e.bytes) proxyBytes.inc({ tier, proxy: e.proxy }, e.bytes);
          if (e.blocked) proxyBlocks.inc({ tier, proxy: e.proxy });
        }
      }
    },
  };
}

/** Serve a registry: call the returned function per /metrics request and send `body` with `contentType`. */
export function metricsHandler(registry: Registry): () => Promise<{ contentType: string; body: string }> {
  return async () => ({ contentType: registry.contentType, body: await registry.metrics() });
}
