import { CrawlerError, type Logger } from '@crawler/core';
import { DB_ERROR_CODES } from '@crawler/db';

/** How often a closed gate asks Postgres whether it takes writes again. */
export const DATABASE_PROBE_EVERY_MS = 1_000;

/** What a {@link DatabaseGate} needs. */
export interface DatabaseGateDeps {
  /** Resolves when Postgres takes writes (pingDatabase), rejects when it does not. */
  probe(): Promise<void>;
  logger: Logger;
  /** Aborted on shutdown: jobs waiting at the gate give up (and are parked). */
  signal: AbortSignal;
  /** Between probes while closed. @defaultValue DATABASE_PROBE_EVERY_MS */
  probeEveryMs?: number;
}

/**
 * Holds a process's jobs while Postgres cannot take their writes (unreachable, restarting, read-only after a
 * failover). Without it every job ran on: it fetched its page (a read-only Postgres still answers the router's
 * reads), failed to write the outcome, was parked and fetched the page again later, so a site got its whole frontier
 * requested over and over for nothing. Closed by a job that met the outage; while closed, jobs wait in their worker's
 * slots (so the worker takes no more) and one probe per interval asks Postgres; the first that succeeds opens it.
 */
export class DatabaseGate {
  readonly #deps: DatabaseGateDeps;
  #closed = false;
  #closedAt = 0;
  #probing: Promise<void> | null = null;

  constructor(deps: DatabaseGateDeps) {
    this.#deps = deps;
  }

  get isClosed(): boolean {
    return this.#closed;
  }

  /** A job met Postgres unable to take writes: hold every job until a probe finds it writable. */
  close(err: unknown): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#closedAt = performance.now();
    this.#deps.logger.warn({ err }, 'Postgres cannot take writes: jobs wait until it does');
  }

  /** Resolves at once while open; else once a probe succeeds. Rejects (db_unavailable) if shut down meanwhile. */
  async pass(): Promise<void> {
    while (this.#closed) {
      if (this.#deps.signal.aborted) throw new CrawlerError(DB_ERROR_CODES.unavailable, 'shut down while waiting for Postgres to take writes');
      await (this.#probing ??= this.#probe().finally(() => (this.#probing = null)));
    }
  }

  async #probe(): Promise<void> {
    try {
      await sleep(this.#deps.probeEveryMs ?? DATABASE_PROBE_EVERY_MS, this.#deps.signal);
      await this.#deps.probe();
    } catch {
      return;
    }
    this.#closed = false;
    this.#deps.logger.info({ closedMs: Math.round(performance.now() - this.#closedAt) }, 'Postgres takes writes again: jobs resume');
  }
}

/** Wait `ms`, or reject as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
