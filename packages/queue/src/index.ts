export * from './catalog/queue-names.js';
export { Queue, Worker, DelayedError, UnrecoverableError } from './bullmq.js';
export * from './catalog/payloads.js';
export * from './catalog/job-options.js';
export * from './connection.js';
export * from './parse-job.js';
export * from './job-queues.js';
export * from './redis-prefix.js';
export * from './shards/queue-shards.js';
