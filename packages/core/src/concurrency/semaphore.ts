interface Waiter {
  resolve: () => void;
  reject: (e: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

/**
 * A counting semaphore whose waiters can be aborted (a job cancelled while waiting for a page slot). Waiters are served
 * in arrival order; {@link tryAcquire} never queues.
 */
export class Semaphore {
  #free: number;
  readonly #waiters: Waiter[] = [];

  constructor(readonly capacity: number) {
    this.#free = capacity;
  }

  get inUse(): number {
    return this.capacity - this.#free;
  }

  /** Take a slot only when one is free right now (nobody waiting): true when taken. */
  tryAcquire(): boolean {
    if (this.#free > 0 && this.#waiters.length === 0) {
      this.#free--;
      return true;
    }
    return false;
  }

  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal };
      if (signal) {
        waiter.onAbort = () => {
          const i = this.#waiters.indexOf(waiter);
          if (i !== -1) this.#waiters.splice(i, 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.#waiters.push(waiter);
    });
  }

  release(): void {
    const next = this.#waiters.shift();
    if (next) {
      if (next.onAbort) next.signal?.removeEventListener('abort', next.onAbort);
      next.resolve();
    } else {
      this.#free++;
    }
  }
}
