import { z } from 'zod';

/** Where and how link events are delivered (the dispatchers' settings). */
export interface EventsConfig {
  /** Signed webhooks; null when WEBHOOK_URL is unset (events then wait in the outbox). */
  webhook: { url: string; secret: string; timeoutMs: number } | null;
  retry: {
    /** First retry delay; doubles per failure. @defaultValue 5000 */
    baseDelayMs: number;
    /** Longest gap between retries. @defaultValue 3_600_000 */
    maxDelayMs: number;
    /** How long an event is retried before it becomes a dead letter. @defaultValue 86_400_000 (24 h) */
    retryWindowMs: number;
  };
  /** The Redis stream events are added to (XADD) for pull consumers; null when EVENTS_STREAM=off. */
  stream: { key: string; maxLen: number } | null;
  /** Whether router processes run an event dispatcher. @defaultValue true */
  dispatcherEnabled: boolean;
}

const optionalInt = (def: number, min: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return def;
      const n = Number(v.trim());
      if (!Number.isInteger(n) || n < min) {
        ctx.addIssue({ code: 'custom', message: `expected an integer >= ${min}` });
        return z.NEVER;
      }
      return n;
    });

/** The events variables, merged into the crawler's schema. */
export const EVENTS_ENV = {
  WEBHOOK_URL: z
    .string()
    .trim()
    .optional()
    .refine((v) => {
      if (v === undefined || v === '') return true;
      try {
        return ['http:', 'https:'].includes(new URL(v).protocol);
      } catch {
        return false;
      }
    }, 'expected an http or https URL'),
  WEBHOOK_SECRET: z.string().optional(),
  WEBHOOK_TIMEOUT_MS: optionalInt(10_000, 100),
  WEBHOOK_RETRY_BASE_MS: optionalInt(5_000, 1),
  WEBHOOK_RETRY_MAX_MS: optionalInt(3_600_000, 1),
  WEBHOOK_RETRY_WINDOW_MS: optionalInt(86_400_000, 1),
  EVENTS_STREAM: z.string().trim().optional(),
  EVENTS_STREAM_MAX_LEN: optionalInt(100_000, 1),
  EVENTS_DISPATCHER: z.string().trim().toLowerCase().optional().refine((v) => v === undefined || v === '' || ['true', 'false', '1', '0', 'on', 'off', 'yes', 'no'].includes(v), 'expected true or false'),
};

const EventsObject = z.object(EVENTS_ENV);
type EventsEnv = z.output<typeof EventsObject>;

/** A webhook secret shorter than this is refused: it signs every event, a guessable one signs nothing. */
export const MIN_WEBHOOK_SECRET_LENGTH = 16;

/** Cross-field rules, as issues on the variable to fix. */
export function checkEventsEnv(e: EventsEnv, ctx: z.RefinementCtx): void {
  if (e.WEBHOOK_URL && !e.WEBHOOK_SECRET) ctx.addIssue({ code: 'custom', path: ['WEBHOOK_SECRET'], message: 'required when WEBHOOK_URL is set' });
  if (e.WEBHOOK_SECRET && e.WEBHOOK_SECRET.length < MIN_WEBHOOK_SECRET_LENGTH) {
    ctx.addIssue({ code: 'custom', path: ['WEBHOOK_SECRET'], message: `must be at least ${MIN_WEBHOOK_SECRET_LENGTH} characters` });
  }
}

/** The events settings from the parsed variables. The stream key defaults to `<QUEUE_PREFIX>:events`. */
export function eventsConfigOf(e: EventsEnv, queuePrefix: string): EventsConfig {
  const streamKey = e.EVENTS_STREAM === undefined || e.EVENTS_STREAM === '' ? `${queuePrefix}:events` : e.EVENTS_STREAM;
  return {
    webhook: e.WEBHOOK_URL ? { url: e.WEBHOOK_URL, secret: e.WEBHOOK_SECRET!, timeoutMs: e.WEBHOOK_TIMEOUT_MS } : null,
    retry: { baseDelayMs: e.WEBHOOK_RETRY_BASE_MS, maxDelayMs: e.WEBHOOK_RETRY_MAX_MS, retryWindowMs: e.WEBHOOK_RETRY_WINDOW_MS },
    stream: streamKey.toLowerCase() === 'off' ? null : { key: streamKey, maxLen: e.EVENTS_STREAM_MAX_LEN },
    dispatcherEnabled: !['false', '0', 'off', 'no'].includes(e.EVENTS_DISPATCHER ?? ''),
  };
}
