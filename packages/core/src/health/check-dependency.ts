import { withTimeout } from '../concurrency/bounded-wait.js';

/** What a dependency check logs through: warnings and the recovery line, and repeats at debug. */
export interface DependencyCheckLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface DependencyCheckOptions {
  /** How long the probe may take before the dependency counts as failed. */
  timeoutMs: number;
  logger: DependencyCheckLogger;
}

/**
 * One dependency of a readiness check (a Redis write, a Postgres SELECT), called once per probe: `ok` when it answers
 * within `timeoutMs`, else `fail`. The answer is meant for an unauthenticated endpoint, so it never carries the
 * driver's words (they name hosts, databases and users): those go to the log, once per outage — a warning with the
 * error when the dependency starts failing and a line when it answers again; the probes in between (a kubelet's
 * every few seconds) at debug.
 */
export function dependencyCheck(name: string, probe: () => Promise<unknown>, options: DependencyCheckOptions): () => Promise<'ok' | 'fail'> {
  const { timeoutMs, logger } = options;
  let failedChecks = 0;
  return async () => {
    try {
      await withTimeout(probe(), timeoutMs);
      if (failedChecks > 0) logger.info({ dependency: name, failedChecks }, `health check: ${name} answers again after ${failedChecks} failed checks`);
      failedChecks = 0;
      return 'ok';
    } catch (err) {
      failedChecks += 1;
      if (failedChecks === 1) logger.warn({ err, dependency: name }, `health check failed: ${name} does not answer (logged again when it does)`);
      else logger.debug({ err, dependency: name, failedChecks }, `health check failed: ${name}`);
      return 'fail';
    }
  };
}
