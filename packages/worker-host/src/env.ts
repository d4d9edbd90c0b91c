import { z } from 'zod';
import { ConfigError, intVar, loadConfig, type CrawlerConfig } from '@crawler/pipeline';

export { parseDomainLimits, type DomainLimits } from '@crawler/pipeline';

/** A worker process's configuration: the crawler's (see loadConfig) plus what the process itself needs. */
export interface WorkerEnv {
  crawler: CrawlerConfig;
  /** Port of the Prometheus /metrics endpoint; 0 picks a free one, null turns it off. @defaultValue 9464 */
  metricsPort: number | null;
  /**
   * Interface /metrics binds. Loopback unless configured: the metrics name domains and queue depths, and carry no
   * authentication (a container that is scraped from its network sets 0.0.0.0). @defaultValue '127.0.0.1'
   */
  metricsHost: string;
  /** How often a health line (queue depths, jobs done, memory) is logged. @defaultValue 30000 */
  healthLogIntervalMs: number;
  /** How long SIGTERM waits for in-flight jobs before aborting their fetches. @defaultValue 30000 */
  drainTimeoutMs: number;
}

const WorkerSchema = z.object({
  METRICS_PORT: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return 9464;
      if (v.trim().toLowerCase() === 'off') return null;
      const n = Number(v.trim());
      if (!Number.isInteger(n) || n < 0 || n > 65_535) {
        ctx.addIssue({ code: 'custom', message: 'expected a port from 0 to 65535, or "off"' });
        return z.NEVER;
      }
      return n;
    }),
  METRICS_HOST: z.string().trim().min(1).default('127.0.0.1'),
  HEALTH_LOG_INTERVAL_MS: intVar(30_000, 100),
  SHUTDOWN_DRAIN_TIMEOUT_MS: intVar(30_000, 0),
});

/**
 * Parse a worker process's environment once, at start-up. Every bad variable is reported in one ConfigError
 * that names it and the value it got, so a misconfigured deployment fails before it takes a job.
 */
export function parseWorkerEnv(env: Record<string, string | undefined>): WorkerEnv {
  const problems: string[] = [];
  let crawler: CrawlerConfig | undefined;
  try {
    crawler = loadConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(err.message.replace(/^invalid configuration: /, ''));
  }
  const own = WorkerSchema.safeParse(env);
  if (!own.success) {
    for (const issue of own.error.issues) {
      const name = String(issue.path[0] ?? '?');
      const value = env[name];
      problems.push(`${name}=${value === undefined ? '(unset)' : JSON.stringify(value)}: ${issue.message}`);
    }
  }
  if (problems.length > 0 || !crawler || !own.success) throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  return {
    crawler,
    metricsPort: own.data.METRICS_PORT,
    metricsHost: own.data.METRICS_HOST,
    healthLogIntervalMs: own.data.HEALTH_LOG_INTERVAL_MS,
    drainTimeoutMs: own.data.SHUTDOWN_DRAIN_TIMEOUT_MS,
  };
}
