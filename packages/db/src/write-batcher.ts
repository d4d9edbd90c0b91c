/** Options for {@link WriteBatcher}. */
export interface WriteBatcherOptions {
  /** Writes per batch at most; 1 turns batching off (every write on its own). @defaultValue 32 */
  maxBatch?: number;
  /** How long the first write of a batch waits for company when no batch is being written. @defaultValue 5 */
  maxWaitMs?: number;
  /** Batches written at the same time at most; writes that arrive meanwhile form the next one. @defaultValue 2 */
  maxInFlight?: number;
}

/** How a {@link WriteBatcher} writes: one write alone, or many at once with a result per write. */
export interface BatchWriter<I, R> {
  one(item: I): Promise<R>;
  many(items: readonly I[]): Promise<PromiseSettledResult<R>[]>;
  /** Writes with the same key never share a batch (the earlier goes first). */
  key(item: I): string;
}

interface Pending<I, R> {
  item: I;
  resolve: (r: R) => void;
  reject: (err: unknown) => void;
}

/**
 * Write-behind with group commit: writes that arrive close together are handed to `many` as one batch, written when
 * it is full (`maxBatch`), when its first write has waited `maxWaitMs`, or, while `maxInFlight` batches are being
 * written, as soon as one of them is done (the slower the database, the bigger the batches).
 *
 * Nothing is acknowledged early: `write` resolves only with its own result, once its batch has committed, so a
 * caller that awaits it (a job processor) completes after its write is in the database and a crash loses nothing
 * it reported done.
 */
export class WriteBatcher<I, R> {
  readonly #writer: BatchWriter<I, R>;
  readonly #maxBatch: number;
  readonly #maxWaitMs: number;
  readonly #maxInFlight: number;
  #pending: Pending<I, R>[] = [];
  #keys = new Set<string>();
  #timer: NodeJS.Timeout | null = null;
  #inFlight = 0;
  #idle: (() => void)[] = [];

  constructor(writer: BatchWriter<I, R>, opts: WriteBatcherOptions = {}) {
    this.#writer = writer;
    this.#maxBatch = Math.max(1, Math.floor(opts.maxBatch ?? 32));
    this.#maxWaitMs = Math.max(0, opts.maxWaitMs ?? 5);
    this.#maxInFlight = Math.max(1, Math.floor(opts.maxInFlight ?? 2));
  }

  /** Write `item` with the next batch; resolves with its result once that batch has committed. */
  write(item: I): Promise<R> {
    if (this.#maxBatch <= 1) return this.#writer.one(item);
    const key = this.#writer.key(item);
    if (this.#keys.has(key)) this.#flush();
    const done = new Promise<R>((resolve, reject) => this.#pending.push({ item, resolve, reject }));
    this.#keys.add(key);
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
    this.#keys = new Set();
    this.#inFlight++;
    const items = batch.map((p) => p.item);
    const written = batch.length === 1
      ? this.#writer.one(items[0]!).then(
        (value): PromiseSettledResult<R>[] => [{ status: 'fulfilled', value }],
        (reason: unknown): PromiseSettledResult<R>[] => [{ status: 'rejected', reason }],
      )
      : this.#writer.many(items);
    void written
      .then(
        (results) => {
          for (const [i, p] of batch.entries()) {
            const r = results[i];
            if (r?.status === 'fulfilled') p.resolve(r.value);
            else p.reject(r ? r.reason : new Error('a batch write returned no result for an item'));
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
