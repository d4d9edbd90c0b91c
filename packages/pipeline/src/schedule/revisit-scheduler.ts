import type { Logger } from '@crawler/core';
import type { ScheduleStore, VisitStart } from '@crawler/db';
import { ROUTE_QUEUE, type JobQueues } from '@crawler/queue';
import { Periodic } from '../periodic.js';

/** Settings of {@link RevisitScheduler}. */
export interface RevisitSchedulerSettings {
  /** Time between passes; 0: off. @defaultValue SCHEDULER_INTERVAL_MS (5000) */
  intervalMs: number;
  /** Links claimed per statement. @defaultValue SCHEDULER_BATCH_SIZE (500) */
  batchSize: number;
  /**
   * A pass claims due links only while fewer route jobs than this wait: Redis holds what is due now, bounded, and a
   * backlog of due links stays in Postgres (claimed soonest-due first when the fleet catches up).
   * @defaultValue SCHEDULER_MAX_QUEUED (10000)
   */
  maxQueued: number;
}

/** One pass's figures. */
export interface SchedulerPass {
  claimed: number;
}

/**
 * Enqueues due revisits: every `intervalMs`, claims links whose next_fetch_at has come (ScheduleStore.claimDue: a
 * guarded UPDATE over `FOR UPDATE SKIP LOCKED`, so schedulers in any number of processes take disjoint links and
 * each due link starts one visit) and adds their route jobs. Redis never holds one delayed job per scheduled link.
 * A process that dies between a claim and its route jobs leaves the links `queued`: the reconciler gives them jobs.
 */
export class RevisitScheduler {
  readonly #periodic: Periodic<SchedulerPass>;
  #failing = false;

  constructor(
    private readonly deps: {
      schedule: ScheduleStore;
      queues: JobQueues;
      logger: Logger;
      settings: RevisitSchedulerSettings;
      /** Called with each batch after its route jobs are added (tests, metrics). */
      onClaimed?: (batch: VisitStart[]) => void;
    },
  ) {
    this.#periodic = new Periodic(() => this.#pass(), deps.settings.intervalMs);
  }

  start(): void {
    this.#periodic.start();
  }

  /** One pass now, unless one is running (then that one); null once stopped. */
  runOnce(): Promise<SchedulerPass | null> {
    return this.#periodic.runOnce();
  }

  async #pass(): Promise<SchedulerPass> {
    const { schedule, queues, settings, logger } = this.deps;
    let claimed = 0;
    try {
      const counts = await queues.countJobs([ROUTE_QUEUE]);
      let room = settings.maxQueued - (counts.waiting + counts.prioritized);
      while (room > 0) {
        const batch = await schedule.claimDue(Math.min(settings.batchSize, room));
        if (batch.length > 0) await queues.enqueueRoutes(batch);
        this.deps.onClaimed?.(batch);
        claimed += batch.length;
        room -= batch.length;
        if (batch.length < settings.batchSize) break;
      }
      if (claimed > 0) logger.debug({ claimed }, 'due revisits enqueued');
      this.#failing = false;
    } catch (err) {
      if (!this.#failing) logger.warn({ err, claimed }, 'revisit scheduler pass failed; will try again');
      this.#failing = true;
    }
    return { claimed };
  }

  /** Stop the timer and wait for a running pass. Idempotent. */
  stop(): Promise<void> {
    return this.#periodic.stop();
  }
}
