/**
 * A background task a worker process runs every `intervalMs` (the timer does not keep the process alive), one run at
 * a time: a call while one runs gets that run. After stop() nothing new starts; stop() waits for a running one.
 */
export class Periodic<T> {
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<T | null> | null = null;
  #stopped = false;

  constructor(
    private readonly task: () => Promise<T>,
    private readonly intervalMs: number,
  ) {}

  /** Schedule the runs (none when `intervalMs` is 0); `now` also runs one at once. */
  start(opts: { now?: boolean } = {}): void {
    if (opts.now) void this.runOnce();
    if (this.#timer || this.#stopped || !(this.intervalMs > 0)) return;
    this.#timer = setInterval(() => void this.runOnce(), this.intervalMs);
    this.#timer.unref();
  }

  /** One run, unless one is running (then that one); null once stopped. */
  runOnce(): Promise<T | null> {
    if (this.#stopped) return Promise.resolve(null);
    this.#running ??= this.task().finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  /** Stop scheduling and wait for a running run. Idempotent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#running;
  }
}
