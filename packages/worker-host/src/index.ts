/**
 * What a standalone worker process needs around the pipeline runtime: its environment (parsed once), /metrics,
 * health lines, and one ordered shutdown on signals. apps/router and apps/fetcher are thin mains over it; `crawl run`
 * serves the same /metrics through serveWorkerMetrics.
 */
export { parseWorkerEnv, parseDomainLimits, DEFAULT_METRICS_PORT, METRICS_ENV, METRICS_ENV_SCHEMA, type MetricsPort, type MetricsSettings, type WorkerEnv, type DomainLimits } from './env.js';
export { exitOnSignals } from '@crawler/pipeline';
export { startWorkerProcess, serveWorkerMetrics, createWorkerMetrics, countingMetrics, MetricsPortInUseError, runWorkerMain, type ServeWorkerMetricsOptions, type WorkerProcess, type HealthSnapshot, type StartWorkerProcessOptions } from './worker-process.js';
