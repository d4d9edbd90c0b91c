/** Where time comes from. Everything that depends on time (decay, pauses, retention) takes a Clock so tests can set it. */
export interface Clock {
  /** The current instant. */
  now(): Date;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => new Date() };

/** A clock that only moves when told to: for tests and simulations where weeks pass in minutes. */
export class ManualClock implements Clock {
  #ms: number;

  constructor(start: Date | number = Date.now()) {
    this.#ms = typeof start === 'number' ? start : start.getTime();
  }

  now(): Date {
    return new Date(this.#ms);
  }

  /** Move the clock forward by `ms` milliseconds. */
  advance(ms: number): void {
    this.#ms += ms;
  }

  /** Set the clock to an absolute instant. */
  set(at: Date | number): void {
    this.#ms = typeof at === 'number' ? at : at.getTime();
  }
}

/** Milliseconds in one day, for age arithmetic. */
export const DAY_MS = 86_400_000;
