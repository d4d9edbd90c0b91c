import { ConfigError, dependencyCheck, sharedWhilePending, withTimeout, type EnvSource, type Logger, type PipelineMetrics } from '@crawler/core';
import { assertBrowserExecutable, createRuntime, exitOnSignals, type CrawlerRuntime, type RuntimeOverrides, type StartWorkersOptions } from '@crawler/pipeline';
import { createLogger, createPipelineMetrics, startMetricsServer, type MetricsServer, type PrometheusPipelineMetrics, type QueueDepths, type Readiness } from '@crawler/telemetry';
import { RedisDatabaseError, RedisSetupError, assertRedisDatabase, fetchQueueName, probeRedisWrite } from '@crawler/queue';
import { startEventDispatcher } from '@crawler/events';
import { parseWorkerEnv, type MetricsSettings, type WorkerEnv } from './env.js';

/** What a health line reports. */
export interface HealthSnapshot {
  /** Jobs per queue and state, over the queues this process serves; null when Redis did not answer in time. */
  queues: QueueDepths | null;
  /** Jobs this process finished since start, by outcome (done, failed, paused, delayed, ...). */
  jobs: Record<string, number>;
  rssMb: number;
  heapUsedMb: number;
}

/** A running worker process: its runtime, metrics endpoint, health logging and one ordered shutdown. */
export interface WorkerProcess {
  readonly runtime: CrawlerRuntime;
  readonly metrics: PrometheusPipelineMetrics;
  /** The port /metrics listens on, or null when it is off. */
  readonly metricsPort: number | null;
  health(): Promise<HealthSnapshot>;
  /** Drain in-flight jobs, then close browsers, Redis and Postgres (via the runtime), then /metrics. Idempotent. */
  close(): Promise<void>;
}

export interface StartWorkerProcessOptions {
  env: WorkerEnv;
  logger: Logger;
  /** Which workers this process runs. */
  workers: StartWorkersOptions;
  /** Test seams (clients, clocks); production passes none. */
  overrides?: RuntimeOverrides;
  /**
   * Aborts the start (a SIGTERM before 'workers started'): a step still waiting (Redis not up yet) stops waiting, what
   * was opened is closed, and the start rejects with StartAbortedError. Once started, aborting does nothing.
   */
  signal?: AbortSignal;
}

/** The start of a worker process was given up because its `signal` aborted (a shutdown signal during start-up). */
export class StartAbortedError extends Error {
  override name = 'StartAbortedError';
  constructor() {
    super('start-up aborted');
  }
}

/** `promise`, or a StartAbortedError as soon as `signal` aborts. */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(new StartAbortedError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new StartAbortedError());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/**
 * Count finished jobs by outcome on the way to the Prometheus metrics, for the health line. Every method is forwarded,
 * the optional ones too: typed `Required` so a method added to PipelineMetrics does not compile until it is (the exit
 * tiers' and analysis threads' counters were dropped here, and stayed empty on every router and fetcher).
 */
export function countingMetrics(inner: PipelineMetrics, counts: Record<string, number>): Required<PipelineMetrics> {
  return {
    jobFinished: (queue, outcome) => {
      counts[outcome] = (counts[outcome] ?? 0) + 1;
      inner.jobFinished(queue, outcome);
    },
    fetchObserved: (f, ms, o) => inner.fetchObserved(f, ms, o),
    decision: (s, f) => inner.decision(s, f),
    probe: (o) => inner.probe(o),
    pause: (d, e) => inner.pause(d, e),
    ban: (d) => inner.ban(d),
    exitObserved: (tier, e) => inner.exitObserved?.(tier, e),
    analysisThreadEvent: (e) => inner.analysisThreadEvent?.(e),
    jobStalled: (q) => inner.jobStalled?.(q),
  };
}

const MB = 1024 * 1024;

/**
 * Build the runtime from the environment, start the requested workers, expose /metrics (queue depths read at
 * scrape time) and log a health line every `healthLogIntervalMs`.
 */
export async function startWorkerProcess(opts: StartWorkerProcessOptions): Promise<WorkerProcess> {
  const { env, logger } = opts;
  const metrics = createWorkerMetrics();
  const jobs: Record<string, number> = {};
  if (Object.keys(env.crawler.domainLimits).length > 0) logger.info({ domainLimits: env.crawler.domainLimits }, 'per-domain politeness overrides');
  const runtime = createRuntime(env.crawler, { logger, ...opts.overrides, metrics: countingMetrics(metrics, jobs) });
  const depths = queueDepthsOf(runtime, opts.workers);

  let shuttingDown = false;
  let server: MetricsServer | null = null;
  try {
    server = await unlessAborted(serveWorkerMetrics({ runtime, metrics, workers: opts.workers, settings: env, logger, shuttingDown: () => shuttingDown }), opts.signal);
    // Before anything takes work (and after /healthz listens: it waits for a Redis that is down at start): a database
    // REDIS_URL names that the server lacks would otherwise be database 0. The PING waits for Redis with database 0
    // too (no SELECT to wait in): workers started against a Redis that is down would hold a SIGTERM until the forced exit.
    await unlessAborted(assertRedisDatabase(runtime.redis).then(() => runtime.redis.ping()), opts.signal);
    if (opts.signal?.aborted) throw new StartAbortedError();
    runtime.startWorkers(opts.workers);
  } catch (err) {
    await server?.close();
    await runtime.close({ drainTimeoutMs: 0 });
    throw err;
  }
  logger.info({ queues: servedQueues(runtime, opts.workers), fetchers: env.crawler.fetchers }, 'workers started');
  // Router processes also deliver link events from the outbox; any number of them can, claims never overlap.
  const dispatcher =
    (opts.workers.router ?? true) && env.crawler.events.dispatcherEnabled
      ? startEventDispatcher({ prisma: runtime.prisma, redis: runtime.redis, settings: env.crawler.events, logger })
      : null;

  // The health line goes on through a Redis outage (the client queues commands rather than failing them), saying
  // the depths could not be read; a read still waiting is shared, so an outage piles up one read, not one per line.
  const readDepths = sharedWhilePending(depths);
  const health = async (): Promise<HealthSnapshot> => {
    const queues = await withTimeout(readDepths(), READINESS_TIMEOUT_MS, () => null);
    const mem = process.memoryUsage();
    return { queues, jobs: { ...jobs }, rssMb: Math.round(mem.rss / MB), heapUsedMb: Math.round(mem.heapUsed / MB) };
  };
  const timer = setInterval(() => {
    health().then(
      (h) => logger.info({ health: h }, 'health'),
      (err: unknown) => logger.warn({ err }, 'health check failed'),
    );
  }, env.healthLogIntervalMs);
  timer.unref();

  let closing: Promise<void> | null = null;
  return {
    runtime,
    metrics,
    metricsPort: server?.port ?? null,
    health,
    close: () =>
      (closing ??= (async () => {
        shuttingDown = true;
        clearInterval(timer);
        logger.info({ drainTimeoutMs: env.shutdownDrainTimeoutMs }, 'shutting down: draining workers');
        await dispatcher?.stop().catch((err: unknown) => logger.warn({ err }, 'stopping the event dispatcher failed'));
        await runtime.close({ drainTimeoutMs: env.shutdownDrainTimeoutMs });
        // Last, so the final scrape can still see the drain.
        await server?.close().catch((err: unknown) => logger.warn({ err }, 'closing /metrics failed'));
        logger.info('shut down');
      })()),
  };
}

/** How long a readiness check waits for Redis or Postgres to answer before it reports them unavailable. */
const READINESS_TIMEOUT_MS = 2_000;

/** The metrics of a process that runs crawler workers: every series of the pipeline, plus Node's own (heap, event loop, GC). */
export function createWorkerMetrics(): PrometheusPipelineMetrics {
  return createPipelineMetrics({ defaultMetrics: true });
}

/** Jobs per queue and state over the queues `workers` consume, per shard this process consumes (`route@s1` with several). */
function queueDepthsOf(runtime: CrawlerRuntime, workers: StartWorkersOptions): () => Promise<QueueDepths> {
  const served = servedQueues(runtime, workers);
  return () => runtime.queues.queueDepths(served, ['waiting', 'active', 'delayed', 'prioritized', 'failed'], runtime.config.queueShardsConsumed);
}

/** What {@link serveWorkerMetrics} serves. */
export interface ServeWorkerMetricsOptions {
  /** The runtime whose workers the metrics count: it was created with `metrics` (or a wrapper of it) as its metrics. */
  runtime: CrawlerRuntime;
  metrics: PrometheusPipelineMetrics;
  /** The workers the process runs: their queues' depths and connected workers are read at each scrape. */
  workers: StartWorkersOptions;
  /** METRICS_PORT (null: off), METRICS_HOST, METRICS_TOKEN. */
  settings: MetricsSettings;
  logger: Logger;
  /** True once the process is shutting down: /readyz then answers 503. */
  shuttingDown: () => boolean;
}

/**
 * /metrics (queue depths and workers read at scrape time), /healthz and /readyz (Redis takes a write, Postgres answers
 * and takes writes, not shutting down) of a process that runs crawler workers: the router and fetcher apps and
 * `crawl run` serve the same series on the same variables. Null when METRICS_PORT is off.
 */
export async function serveWorkerMetrics(opts: ServeWorkerMetricsOptions): Promise<MetricsServer | null> {
  const { runtime, metrics, settings, logger } = opts;
  const served = servedQueues(runtime, opts.workers);
  metrics.collectQueueDepths(queueDepthsOf(runtime, opts.workers));
  metrics.collectQueueWorkers(() => runtime.queues.workerCounts(served, runtime.config.queueShardsConsumed));
  const checkOptions = { timeoutMs: READINESS_TIMEOUT_MS, logger };
  // A write, not a PING: a Redis full under maxmemory answers PONG but refuses every job this worker would add.
  const checkRedis = dependencyCheck('redis', () => probeRedisWrite(runtime.redis, runtime.queues.prefixes), checkOptions);
  const checkPostgres = dependencyCheck('postgres', () => runtime.pingPostgres(), checkOptions);
  const readiness = async (): Promise<Readiness> => {
    const [redis, postgres] = await Promise.all([checkRedis(), checkPostgres()]);
    const shuttingDown = opts.shuttingDown();
    const checks: Record<string, string> = { redis, postgres, ...(shuttingDown ? { process: 'shutting down' } : {}) };
    return { ready: !shuttingDown && redis === 'ok' && postgres === 'ok', checks };
  };
  if (settings.metricsPort === null) return null;
  const server = await listenForMetrics(metrics, settings, logger, readiness);
  logger.info({ port: server.port }, 'metrics listening on /metrics');
  return server;
}

/** Raised when the METRICS_PORT that was set explicitly is taken: a start-up error with a one-line message. */
export class MetricsPortInUseError extends Error {
  readonly code = 'invalid_config';
  constructor(readonly port: number, host: string) {
    super(`METRICS_PORT=${port}: ${host}:${port} is already in use (another worker on this host?); give each worker its own port, 0 for a free one, or leave METRICS_PORT unset to fall back to a free port`);
    this.name = 'MetricsPortInUseError';
  }
}

/**
 * Bind /metrics. Several workers on one host all default to 9464: with METRICS_PORT unset, the second one takes a
 * free port instead of crashing, and the warning names it (Prometheus needs each worker's port, or service discovery).
 */
async function listenForMetrics(metrics: PrometheusPipelineMetrics, env: MetricsSettings, logger: Logger, readiness: () => Promise<Readiness>): Promise<MetricsServer> {
  const { port, fallback } = env.metricsPort!;
  const start = (p: number) => startMetricsServer({ registry: metrics.registry, port: p, host: env.metricsHost, logger, readiness, ...(env.metricsToken ? { bearerToken: env.metricsToken } : {}) });
  try {
    return await start(port);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    if (!fallback) throw new MetricsPortInUseError(port, env.metricsHost);
    const server = await start(0);
    logger.warn({ port: server.port, wanted: port }, `METRICS_PORT ${port} is taken (another worker on this host?); /metrics listens on ${server.port} instead. Set METRICS_PORT per worker for a fixed scrape target`);
    return server;
  }
}

/** The queues the requested workers consume. */
function servedQueues(runtime: CrawlerRuntime, workers: StartWorkersOptions): string[] {
  const [route, ...fetch] = runtime.queueNames();
  const wanted = workers.fetchers ? new Set(workers.fetchers.map(fetchQueueName)) : null;
  return [...((workers.router ?? true) ? [route!] : []), ...fetch.filter((q) => !wanted || wanted.has(q))];
}

/**
 * The whole main of a worker process (the router or a fetcher): parse the environment once (a bad value: its message
 * on stderr and exit 1, before any logger exists, as the log level is part of what failed), start the workers, and
 * shut down in order on SIGTERM/SIGINT, handled from the first moment: a signal during start-up gives the start up,
 * closes what it had opened and exits 0.
 */
export function runWorkerMain(name: string, workers: StartWorkersOptions, source: EnvSource = process.env): void {
  let env: WorkerEnv;
  try {
    env = parseWorkerEnv(source);
    // As a bad value is: before any connection, so the message is not held up behind a Redis that is not up yet.
    const wanted = workers.fetchers ?? env.crawler.fetchers.map((f) => f.name);
    assertBrowserExecutable(env.crawler.chromiumPath, env.crawler.fetchers.map((f) => f.name).filter((f) => wanted.includes(f)));
  } catch (err) {
    process.stderr.write(`${name}: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
  const logger = createLogger({ name, level: env.crawler.logLevel });
  // A signal during start-up gives the start up (it may be waiting for a Redis that is not up) rather than waiting
  // for it to finish only to shut down again.
  const aborter = new AbortController();
  const app = startWorkerProcess({ env, logger, workers, signal: aborter.signal }).catch((err: unknown) => {
    if (err instanceof StartAbortedError) {
      logger.info('start-up aborted by signal');
      return null;
    }
    // A configuration problem found at start-up is the operator's to fix: one line, no stack trace.
    if (err instanceof MetricsPortInUseError) logger.error({ port: err.port }, `start-up failed: ${err.message}`);
    else if (err instanceof RedisDatabaseError) logger.error({ db: err.db }, `start-up failed: ${err.message}`);
    else if (err instanceof RedisSetupError) logger.error(`start-up failed: ${err.message}`);
    else if (err instanceof ConfigError) logger.error(`start-up failed: ${err.message}`);
    else logger.error({ err }, 'start-up failed');
    process.exit(1);
  });
  exitOnSignals(
    async () => {
      aborter.abort();
      await (await app)?.close();
    },
    logger,
    env.shutdownDrainTimeoutMs + 30_000,
  );
}
