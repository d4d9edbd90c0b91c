import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import type pinoPrettyModule from 'pino-pretty';

// pino-pretty (and its 30 modules) only loads for a terminal: a CLI on a pipe or a worker logging JSON never needs it.
const requirePinoPretty = (): typeof pinoPrettyModule => createRequire(import.meta.url)('pino-pretty') as typeof pinoPrettyModule;

/**
 * Where secrets travel in what we log: request/response headers (cookies, auth), proxy credentials. Each `*`
 * matches exactly one level, so the common nestings are listed explicitly.
 */
export const REDACT_PATHS: readonly string[] = [
  'headers.cookie',
  'headers.authorization',
  'headers["set-cookie"]',
  'headers["proxy-authorization"]',
  '*.headers.cookie',
  '*.headers.authorization',
  '*.headers["set-cookie"]',
  '*.headers["proxy-authorization"]',
  '*.*.headers.cookie',
  '*.*.headers.authorization',
  '*.*.headers["set-cookie"]',
  '*.*.headers["proxy-authorization"]',
  'cookies',
  '*.cookies',
  'proxyAuthorization',
  '*.proxyAuthorization',
  'password',
  '*.password',
];

export interface CreateLoggerOptions {
  /** Component or app name, logged as `name`. */
  name: string;
  /** Minimum level: trace, debug, info, warn, error, fatal or silent. @defaultValue 'info' */
  level?: string;
  /** Human-readable lines (pino-pretty) or JSON; 'auto' means pretty only when the output is a terminal. @defaultValue 'auto' */
  pretty?: boolean | 'auto';
  /** Where lines go (tests capture them here). @defaultValue stdout */
  destination?: DestinationStream;
  /** Fields on every line (e.g. `{ service, instance }`). */
  base?: Record<string, unknown>;
}

/**
 * The one place the crawler creates a logger: apps call it once and hand child loggers down. JSON on a pipe or
 * file (what log shippers expect), pino-pretty on a terminal; cookies and authorization are redacted; errors go
 * under `err` with their cause chain and the crawler's `code`.
 */
export function createLogger(options: CreateLoggerOptions): PinoLogger {
  const pretty = options.pretty === 'auto' || options.pretty === undefined ? process.stdout.isTTY === true : options.pretty;
  // pino-pretty as an in-process stream rather than a transport: no worker thread, and lines are not lost on exit.
  const stream = pretty ? requirePinoPretty()({ colorize: options.destination === undefined, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', destination: options.destination ?? 1 }) : options.destination;
  return pino(
    {
      name: options.name,
      level: options.level ?? 'info',
      base: { pid: process.pid, ...options.base },
      redact: { paths: [...REDACT_PATHS], censor: '[redacted]' },
      serializers: { err: pino.stdSerializers.errWithCause, error: pino.stdSerializers.errWithCause },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    stream,
  );
}

/** Just enough of a BullMQ Job to label a log line: its id, queue and the ids in its payload. */
export interface JobLike {
  id?: string | null;
  queueName?: string;
  data?: unknown;
}

/**
 * A child logger for one job, bound to `{ jobId, queue, linkId, url, fetcher }` (each only when known), so every
 * line about the job can be found by any of them.
 */
export function jobLogger<L extends { child(bindings: Record<string, unknown>): unknown }>(
  base: L,
  job: JobLike,
  extra: Record<string, unknown> = {},
): ReturnType<L['child']> {
  const data = (typeof job.data === 'object' && job.data !== null ? job.data : {}) as Record<string, unknown>;
  const bindings: Record<string, unknown> = {};
  if (job.id != null) bindings.jobId = job.id;
  if (job.queueName) bindings.queue = job.queueName;
  for (const field of ['linkId', 'url', 'fetcher'] as const) {
    const value = data[field];
    if (typeof value === 'string' || typeof value === 'number') bindings[field] = value;
  }
  return base.child({ ...bindings, ...extra }) as ReturnType<L['child']>;
}
