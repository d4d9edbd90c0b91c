import { WriteBatcher, type WriteBatcherOptions } from '../write-batcher.js';
import type { AppliedOutcome, OutcomeWrite } from './outcome-store.js';

/** What the batcher writes through: {@link OutcomeStore}. */
export interface BatchOutcomeWriter {
  apply(write: OutcomeWrite): Promise<AppliedOutcome>;
  applyMany(writes: readonly OutcomeWrite[]): Promise<PromiseSettledResult<AppliedOutcome>[]>;
}

/** Options for {@link OutcomeBatcher}: {@link WriteBatcherOptions}. */
export type OutcomeBatcherOptions = WriteBatcherOptions;

/**
 * Write-behind for fetch outcomes: writes that arrive close together go to Postgres as one statement
 * ({@link OutcomeStore.applyMany}: one multi-row insert or update per table, one commit), which costs Postgres far
 * less per page than one statement and one commit each (see {@link WriteBatcher} for when a batch is written).
 *
 * Nothing is acknowledged early: `apply` resolves only once the write has committed, so the fetch job that awaits it
 * completes after its outcome is in Postgres and a crash loses nothing a job reported done. A write that fails fails
 * alone (the store retries a failed batch write by write). Two writes of one link never share a statement.
 */
export class OutcomeBatcher {
  readonly #batcher: WriteBatcher<OutcomeWrite, AppliedOutcome>;

  constructor(store: BatchOutcomeWriter, opts: OutcomeBatcherOptions = {}) {
    this.#batcher = new WriteBatcher({ one: (w) => store.apply(w), many: (ws) => store.applyMany(ws), key: (w) => w.linkId }, opts);
  }

  /** Write `write` with the next batch; resolves when it has committed, as {@link OutcomeStore.apply} would. */
  apply(write: OutcomeWrite): Promise<AppliedOutcome> {
    return this.#batcher.write(write);
  }

  /** Write what is waiting now and resolve when nothing is left to write (shutdown). */
  flush(): Promise<void> {
    return this.#batcher.flush();
  }
}
