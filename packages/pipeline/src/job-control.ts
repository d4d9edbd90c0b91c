import { DelayedError } from '@crawler/queue';

/** The part of a BullMQ job the processors use, so tests can hand in a stub. */
export interface JobHandle {
  id?: string;
  data: unknown;
  /** When the job was created (BullMQ's real-time ms); absent in stubs. */
  timestamp?: number;
  /** How many times a worker has started it (BullMQ counts each run, a politeness wait's too); absent in stubs. */
  attemptsStarted?: number;
  moveToDelayed(timestamp: number, token?: string): Promise<void>;
  /** Replace the job's payload (kept across a delay); absent in stubs that need not remember anything. */
  updateData?(data: unknown): Promise<void>;
}

/**
 * Park the running job for `delayMs` and end this run without counting it as a failure or a BullMQ attempt
 * (BullMQ's documented pattern: moveToDelayed, then throw DelayedError). Delays are relative to the real clock
 * because BullMQ schedules by it, whatever clock the pipeline uses for its own decisions.
 */
export async function delayJob(job: JobHandle, token: string | undefined, delayMs: number): Promise<never> {
  await job.moveToDelayed(Date.now() + Math.max(1, Math.ceil(delayMs)), token);
  throw new DelayedError();
}

export { DelayedError };
