import type { Redis } from 'ioredis';
import { silentLogger, type Clock, type Logger } from '@crawler/core';

/** Milliseconds of skew below which a measurement is taken as agreement (the resolution of the two clocks' readings). */
const MEASURE_SLACK_MS = 5;

export interface FleetClockOptions {
  /** The Redis whose TIME every process of the fleet reads. Shared with the app, never closed by the clock. */
  redis: Pick<Redis, 'time'>;
  /** How often the offset to Redis TIME is measured again, in milliseconds. @defaultValue 30000 */
  resyncMs?: number;
  /** An offset larger than this is logged as a warning (once each time it crosses it), in milliseconds. @defaultValue 2000 */
  warnSkewMs?: number;
  /** This machine's clock, epoch ms. @defaultValue Date.now */
  local?: () => number;
  logger?: Logger;
}

/**
 * The fleet's one clock: this machine's clock corrected by its offset to Redis TIME, measured at start and every
 * `resyncMs`. Instants that one worker writes and another reads (a link's `paused_until`, an attempt's
 * `attempted_at` that learning windows count from, a revisit's `next_fetch_at`, a proxy's or session's expiry in
 * Redis) then agree however far a machine's clock has drifted (NTP off, a VM resumed from suspend): with each
 * worker's own clock a link a worker 5 minutes fast paused for 20 s read as paused for 10 min 20 s on one 5 minutes
 * slow. Until the first measurement answers (and while Redis does not), the last offset known stands (0 at start).
 */
export class FleetClock implements Clock {
  readonly #redis: Pick<Redis, 'time'>;
  readonly #local: () => number;
  readonly #resyncMs: number;
  readonly #warnSkewMs: number;
  readonly #logger: Logger;
  #offsetMs = 0;
  #warned = false;
  #timer: NodeJS.Timeout | null = null;
  #syncing: Promise<number> | null = null;

  constructor(o: FleetClockOptions) {
    this.#redis = o.redis;
    this.#local = o.local ?? Date.now;
    this.#resyncMs = o.resyncMs ?? 30_000;
    this.#warnSkewMs = o.warnSkewMs ?? 2_000;
    this.#logger = o.logger ?? silentLogger;
  }

  now(): Date {
    return new Date(this.#local() + this.#offsetMs);
  }

  /** Redis TIME minus this machine's clock, in milliseconds, as last measured. */
  get offsetMs(): number {
    return this.#offsetMs;
  }

  /** Measure the offset now (one TIME round trip; the reply is taken to stand at the trip's midpoint). */
  sync(): Promise<number> {
    this.#syncing ??= this.#measure().finally(() => {
      this.#syncing = null;
    });
    return this.#syncing;
  }

  async #measure(): Promise<number> {
    const sent = this.#local();
    const [s, us] = await this.#redis.time();
    const received = this.#local();
    const measured = Math.round(Number(s) * 1000 + Number(us) / 1000 - (sent + received) / 2);
    // The reply stood anywhere within the trip: a skew no larger than half of it (a few ms on a LAN; a first TIME held
    // while the connection opened counts the connect in its trip) is no skew this can tell, and this machine's clock is
    // taken as right. Otherwise a worker whose TIME waited 600 ms for its connection ran 300 ms off its neighbours.
    const offset = Math.abs(measured) <= (received - sent) / 2 + MEASURE_SLACK_MS ? 0 : measured;
    this.#offsetMs = offset;
    const skewed = Math.abs(offset) > this.#warnSkewMs;
    if (skewed && !this.#warned) {
      this.#logger.warn({ offsetMs: offset }, "this machine's clock is off from Redis TIME: the crawler keeps time by Redis, but BullMQ promotes delayed jobs by each worker's own clock (a fast worker ends every pause early, a slow one late); fix NTP");
    } else if (!skewed && this.#warned) {
      this.#logger.info({ offsetMs: offset }, "this machine's clock agrees with Redis TIME again");
    }
    this.#warned = skewed;
    return offset;
  }

  /** Measure now and every `resyncMs` until stop(); a failed measurement keeps the last offset. */
  start(): void {
    if (this.#timer) return;
    const tick = () => void this.sync().catch((err: unknown) => this.#logger.debug({ err }, 'clock offset not measured'));
    tick();
    this.#timer = setInterval(tick, this.#resyncMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}
