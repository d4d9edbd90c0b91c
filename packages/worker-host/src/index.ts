/**
 * What a standalone worker process needs around the pipeline runtime: its environment (parsed once), /metrics,
 * health lines, and one ordered shutdown on signals. apps/router and apps/fetcher are thin mains over it.
 */
export { parseWorkerEnv, parseDomainLimits, DEFAULT_METRICS_PORT, type MetricsPort, type WorkerEnv, type DomainLimits } from './env.js';
export { exitOnSignals } from '@crawler/pipeline';
export { startWorkerProcess, MetricsPortInUseError, runWorkerMain, type WorkerProcess, type HealthSnapshot, type StartWorkerProcessOptions } from './worker-process.js';
