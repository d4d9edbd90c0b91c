import { z } from 'zod';
import { ConfigError, intVar, loadConfig, type CrawlerConfig } from '@crawler/pipeline';

/** A worker process's configuration: the crawler's (see loadConfig) plus what the process itself needs. */
export interface WorkerEnv {
  crawler: CrawlerConfig;
  /** Port of the Prometheus /metrics endpoint; 0 picks a free one, null turns it off. @defaultValue 9464 */
  metricsPort: number | null;
  /** Interface /metrics binds; containers need every interface. @defaultValue '0.0.0.0' */
  metricsHost: string;
  /** How often a health line (queue depths, jobs done, memory) is logged. @defaultValue 30000 */
  healthLogIntervalMs: number;
  /** How long SIGTERM waits for in-flight jobs before aborting their fetches. @defaultValue 30000 */
  drainTimeoutMs: number;
  /**
   * Per-domain politeness over DOMAIN_MAX_CONCURRENCY / DOMAIN_MIN_DELAY_MS, from
   * `DOMAIN_LIMITS=shop.example=1:2000,news.example=4` (concurrency, optionally `:minDelayMs`). Every process of the
   * fleet must get the same value: the limits travel with each request to the shared Redis gate. @defaultValue {}
   */
  domainLimits: Record<string, DomainLimits>;
}

/** Per-domain limits (see DOMAIN_LIMITS). */
export interface DomainLimits {
  maxConcurrency: number;
  minDelayMs?: number;
}

const LIMIT_ITEM = /^([a-z0-9.-]+)=(\d+)(?::(\d+))?$/;

/** Parse `domain=concurrency[:minDelayMs],...`; throws with the offending entry. */
export function parseDomainLimits(value: string): Record<string, DomainLimits> {
  const out: Record<string, DomainLimits> = {};
  for (const raw of value.split(',')) {
    const item = raw.trim().toLowerCase();
    if (item === '') continue;
    const m = LIMIT_ITEM.exec(item);
    if (!m || Number(m[2]) < 1) throw new Error(`bad entry '${raw.trim()}' (expected domain=concurrency or domain=concurrency:minDelayMs, concurrency >= 1)`);
    const domain = m[1]!.replace(/^www\./, '');
    out[domain] = m[3] === undefined ? { maxConcurrency: Number(m[2]) } : { maxConcurrency: Number(m[2]), minDelayMs: Number(m[3]) };
  }
  return out;
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
  METRICS_HOST: z.string().trim().min(1).default('0.0.0.0'),
  HEALTH_LOG_INTERVAL_MS: intVar(30_000, 100),
  SHUTDOWN_DRAIN_TIMEOUT_MS: intVar(30_000, 0),
  DOMAIN_LIMITS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      try {
        return parseDomainLimits(v ?? '');
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),
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
    domainLimits: own.data.DOMAIN_LIMITS,
  };
}
