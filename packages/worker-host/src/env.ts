import { z } from 'zod';
import { CRAWLER, MAX_TIMER_MS } from '@crawler/pipeline';
import { composeEnv, envSchema, intVar, parseEnv, type EnvSource } from '@crawler/core';

export { parseDomainLimits, type DomainLimits } from '@crawler/pipeline';

/** The port /metrics tries first when METRICS_PORT is unset (the Prometheus exporter convention's default). */
export const DEFAULT_METRICS_PORT = 9464;

/** Where /metrics listens: `port`, and whether a taken port may fall back to a free one (METRICS_PORT unset). */
export interface MetricsPort {
  port: number;
  fallback: boolean;
}

/**
 * Where a process that runs crawler workers serves /metrics, /healthz and /readyz: the router and fetcher apps, and
 * `crawl run`. It appears as `metricsPort`, `metricsHost`, `metricsToken`.
 */
export const METRICS_ENV = {
  /**
   * Port of the Prometheus /metrics endpoint; 0 picks a free one, `off` turns it off (null). Left unset, the process
   * tries 9464 and, when another worker on the host holds it, takes a free port and says so in a warning (`fallback`);
   * a port set explicitly that is taken stops the process with a one-line message. @defaultValue 9464, with fallback
   */
  METRICS_PORT: z
    .string()
    .optional()
    .transform((v, ctx): MetricsPort | null => {
      if (v === undefined || v.trim() === '') return { port: DEFAULT_METRICS_PORT, fallback: true };
      if (v.trim().toLowerCase() === 'off') return null;
      const n = Number(v.trim());
      if (!Number.isInteger(n) || n < 0 || n > 65_535) {
        ctx.addIssue({ code: 'custom', message: 'expected a port from 0 to 65535, or "off"' });
        return z.NEVER;
      }
      return { port: n, fallback: false };
    }),
  /**
   * Interface /metrics binds. Loopback unless configured: the metrics name domains and queue depths, and carry no
   * authentication (a container that is scraped from its network sets 0.0.0.0). @defaultValue '127.0.0.1'
   */
  METRICS_HOST: z.string().trim().min(1).default('127.0.0.1'),
  /**
   * A bearer token /metrics then asks for (`Authorization: Bearer <token>`, Prometheus' `authorization.credentials`),
   * at least 24 characters (`openssl rand -hex 24`): for a METRICS_HOST reachable from a network strangers share.
   * /healthz and /readyz stay open. @defaultValue none: /metrics open to whoever reaches METRICS_HOST
   */
  METRICS_TOKEN: z
    .string()
    .optional()
    .transform((v, ctx): string | undefined => {
      const token = v?.trim() ?? '';
      if (token === '') return undefined;
      if (token.length < 24) {
        ctx.addIssue({ code: 'custom', message: 'expected at least 24 characters (openssl rand -hex 24)' });
        return z.NEVER;
      }
      return token;
    }),
};

/** The schema of {@link METRICS_ENV} alone, for a process that parses the rest of its environment its own way (`crawl run`). */
export const METRICS_ENV_SCHEMA = envSchema(METRICS_ENV);

/** The parsed {@link METRICS_ENV}. */
export type MetricsSettings = z.output<typeof METRICS_ENV_SCHEMA>;

/**
 * A worker process's own variables, beside the crawler's (CRAWLER_ENV). To add one, add it here with a TSDoc line:
 * it appears as `env.<camelCase of NAME>` (see core `config/env.ts`).
 */
export const WORKER_ENV = {
  ...METRICS_ENV,
  /** How often a health line (queue depths, jobs done, memory) is logged. @defaultValue 30000 */
  HEALTH_LOG_INTERVAL_MS: intVar(30_000, 100, MAX_TIMER_MS),
  /** How long SIGTERM waits for in-flight jobs before aborting their fetches. @defaultValue 30000 */
  SHUTDOWN_DRAIN_TIMEOUT_MS: intVar(30_000, 0, MAX_TIMER_MS),
};

const WorkerEnvSchema = composeEnv({ crawler: CRAWLER, worker: WORKER_ENV }).transform(({ crawler, worker }) => ({ crawler, ...worker }));

/** A worker process's configuration: the crawler's under `crawler`, the process's own (WORKER_ENV) beside it. */
export type WorkerEnv = z.output<typeof WorkerEnvSchema>;

/**
 * Parse a worker process's environment once, at start-up. Every bad variable is reported in one ConfigError
 * that names it and the value it got, so a misconfigured deployment fails before it takes a job.
 */
export function parseWorkerEnv(env: EnvSource): WorkerEnv {
  return parseEnv(WorkerEnvSchema, env);
}
