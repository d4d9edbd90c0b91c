/**
 * `promise`'s outcome, or, once `ms` have passed, `onTimeout()`'s value (without it, a rejection with "no answer within
 * `ms` ms"); the timer ends with the race. For reads from a dependency that may not answer at all: an ioredis client
 * queues commands while Redis is away instead of failing them, so a health check or a scrape that awaits one
 * unbounded never answers.
 */
export function withTimeout<T, F = never>(promise: Promise<T>, ms: number, onTimeout?: () => F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<F>((resolve, reject) => {
    timer = setTimeout(() => (onTimeout ? resolve(onTimeout()) : reject(new Error(`no answer within ${ms} ms`))), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * `read`, its pending call shared by every caller until it settles: a dependency that does not answer piles up one
 * call (one set of queued commands), not one per periodic caller.
 */
export function sharedWhilePending<T>(read: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () =>
    (pending ??= read().finally(() => {
      pending = undefined;
    }));
}
