import { withTimeout } from '@crawler/core';
import type { RouteJobInput } from '@crawler/queue';
import { isInfraError } from '../runtime/infra-errors.js';

/** How long a producer's call waits for Redis to take its links' route jobs, by default. */
export const ENQUEUE_WAIT_MS = 3_000;

const TIMED_OUT = Symbol('timed out');

/**
 * Adds route jobs for links a producer just stored, 1,000 per round trip. Once Redis fails one add as unavailable (down,
 * full, read-only) or does not answer within the wait, that part and every later one of the call are deferred to the
 * reconciler instead: their links are stored `queued`, which is all it needs. An add still under way when the wait ends
 * may land later; that job is then simply there (the same job id either way).
 */
export class RouteJobAdder {
  /** Link ids whose job was left to the reconciler. */
  readonly deferred = new Set<string>();
  /** Why, once something was deferred. */
  deferredReason: string | undefined;

  constructor(
    private readonly enqueueRoutes: (inputs: RouteJobInput[]) => Promise<unknown>,
    private readonly waitMs: number = ENQUEUE_WAIT_MS,
  ) {}

  async add(jobs: readonly RouteJobInput[]): Promise<void> {
    for (let i = 0; i < jobs.length; i += 1_000) {
      const part = jobs.slice(i, i + 1_000);
      if (this.deferredReason === undefined) {
        try {
          const adding = this.enqueueRoutes(part);
          // Settled even when nobody waits for it any more.
          adding.catch(() => undefined);
          if ((await withTimeout(adding, this.waitMs, () => TIMED_OUT)) !== TIMED_OUT) continue;
          this.deferredReason = `Redis did not take the route jobs within ${this.waitMs} ms`;
        } catch (err) {
          if (!isInfraError(err)) throw err;
          this.deferredReason = err instanceof Error ? err.message : String(err);
        }
      }
      for (const job of part) this.deferred.add(job.linkId);
    }
  }
}
