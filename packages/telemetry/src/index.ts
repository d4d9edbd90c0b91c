export { createLogger, jobLogger, REDACT_PATHS, type CreateLoggerOptions, type JobLike } from './logging/create-logger.js';
export { createPipelineMetrics, metricsHandler, type PipelineMetricsOptions, type PrometheusPipelineMetrics, type QueueDepths } from './metrics/pipeline-metrics.js';
export { DomainLabeler, OTHER_DOMAIN, type DomainLabelerOptions } from './metrics/domain-labels.js';
export { Registry } from 'prom-client';
export { startMetricsServer, type MetricsServer, type MetricsServerOptions, type Readiness } from './metrics/metrics-server.js';
