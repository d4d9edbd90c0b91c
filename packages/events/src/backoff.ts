/** How webhook deliveries are retried. */
export interface RetryPolicy {
  /** Delay after the first failure; doubles with each further one. @defaultValue 5_000 */
  baseDelayMs: number;
  /** Longest delay between two tries. @defaultValue 3_600_000 (1 h) */
  maxDelayMs: number;
  /** How long an event is retried before it becomes a dead letter. @defaultValue 86_400_000 (24 h) */
  retryWindowMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { baseDelayMs: 5_000, maxDelayMs: 3_600_000, retryWindowMs: 86_400_000 };

/**
 * What follows a failed delivery: the next try (exponential backoff with ±20% jitter, so a receiver coming back is not
 * hit by every event at once), or a dead letter once the retry window since `retryingSince` has passed. `attempts`
 * counts the failed tries including this one.
 */
export function nextDelivery(attempts: number, retryingSince: Date, now: Date, policy: RetryPolicy, random: () => number = Math.random): { nextAttemptAt: Date } | { dead: true } {
  if (now.getTime() - retryingSince.getTime() >= policy.retryWindowMs) return { dead: true };
  const exp = policy.baseDelayMs * 2 ** Math.min(Math.max(attempts - 1, 0), 30);
  const delay = Math.min(policy.maxDelayMs, exp) * (0.8 + 0.4 * random());
  return { nextAttemptAt: new Date(now.getTime() + Math.round(delay)) };
}
