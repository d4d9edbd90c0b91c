import type { AppliedOutcome, OutcomeWrite } from './outcome-store.js';

/** What the batcher writes through: {@link OutcomeStore}. */
export interface BatchOutcomeWriter {
  apply(write: OutcomeWrite): Promise<AppliedOutcome>;
  applyMany(writes: readonly OutcomeWrite[]): Promise<PromiseSettledResult<AppliedOutcome>[]>;
}

/** Options for {@link OutcomeBatcher}. */
export interface OutcomeBatcherOptions {
  /** Writes per statement at most; 1 turns batching off (every write its own statement). @defaultValue 32 */
  maxBatch?: number;
  /** How long the first write of a batch waits for company when no batch is being written. @defaultValue 5 */
  maxWaitMs?: number;
  /** Batches written at the same time at most; writes that arrive meanwhile form the next one. @defaultValue 2 */
  maxInFlight?: number;
}

interface Pending {
  write: OutcomeWrite;
  resolve: (applied: AppliedOutcome) => void;
  reject: (err: unknown) => void;
}

/**
 * Write-behind for fetch outcomes: writes that arrive close together go to Postgres as one statement
 * ({@link OutcomeStore.applyMany}: one multi-row insert or update per table, one commit), which costs Postgres far
 * less per page than one statement and one commit each. A batch is written when it is full (`maxBatch`), when its
 * first write has waited `maxWaitMs`, or, while `maxInFlight` batches are being written, as soon as one of them is
 * done (group commit: the slower the database, the bigger the batches).
 *
 * Nothing is acknowledged early: `apply` resolves only once the write has committed, so the fetch job that awaits it
 * completes after its outcome is in Postgres and a crash loses nothing a job reported done. A write that fails fails
 * alone (the store retries a failed batch write by write).
 */
export class OutcomeBatcher {
  readonly #store: BatchOutcomeWriter;
  readonly #maxBatch: number;
  readonly #maxWaitMs: number;
  readonly #maxInFlight: number;
  #pending: Pending[] = [];
  #links = new Set<string>();
  #timer: NodeJS.Timeout | null = null;
  #inFlight = 0;
  #idle: (() => void)[] = [];

  constructor(store: BatchOutcomeWriter, opts: OutcomeBatcherOptions = {}) {
    this.#store = store;
    this.#maxBatch = Math.max(1, Math.floor(opts.maxBatch ?? 32));
    this.#maxWaitMs = Math.max(0, opts.maxWaitMs ?? 5);
    this.#maxInFlight = Math.max(1, Math.floor(opts.maxInFlight ?? 2));
  }

  /** Write `write` with the next batch; resolves when it has committed, as {@link OutcomeStore.apply} would. */
  apply(write: OutcomeWrite): Promise<AppliedOutcome> {
    if (this.#maxBatch <= 1) return this.#store.apply(write);
    // Two writes of one link never share a statement: the earlier one goes first.
    if (this.#links.has(write.linkId)) this.#flush();
    const done = new Promise<AppliedOutcome>((resolve, reject) => this.#pending.push({ write, resolve, reject }));
    this.#links.add(write.linkId);
    if (this.#pending.length >= this.#maxBatch) this.#flush();
    else if (!this.#timer && this.#inFlight < this.#maxInFlight) {
      this.#timer = setTimeout(() => {
        this.#timer = null;
        if (this.#inFlight < this.#maxInFlight) this.#flush();
      }, this.#maxWaitMs);
    }
    return done;
  }

  /** Write what is waiting now and resolve when nothing is left to write (shutdown). */
  async flush(): Promise<void> {
    this.#flush();
    if (this.#inFlight === 0 && this.#pending.length === 0) return;
    await new Promise<void>((resolve) => this.#idle.push(resolve));
  }

  #flush(): void {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    if (this.#pending.length === 0) return;
    const batch = this.#pending;
    this.#pending = [];
    this.#links = new Set();
    this.#inFlight++;
    const writes = batch.map((p) => p.write);
    const written = batch.length === 1 ? this.#store.apply(writes[0]!).then(
      (value): PromiseSettledResult<AppliedOutcome>[] => [{ status: 'fulfilled', value }],
      (reason: unknown): PromiseSettledResult<AppliedOutcome>[] => [{ status: 'rejected', reason }],
    ) : this.#store.applyMany(writes);
    void written
      .then(
        (results) => {
          for (const [i, p] of batch.entries()) {
            const r = results[i];
            if (r?.status === 'fulfilled') p.resolve(r.value);
            else p.reject(r ? r.reason : new Error('outcome batch returned no result for a write'));
          }
        },
        (err: unknown) => {
          for (const p of batch) p.reject(err);
        },
      )
      .finally(() => {
        this.#inFlight--;
        // Group commit: what arrived while this batch was written goes now.
        if (this.#pending.length > 0 && !this.#timer) this.#flush();
        else if (this.#inFlight === 0 && this.#pending.length === 0) for (const resolve of this.#idle.splice(0)) resolve();
      });
  }
}
