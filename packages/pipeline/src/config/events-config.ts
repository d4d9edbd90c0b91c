import { z } from 'zod';
import { MAX_DURATION_MS, MAX_TIMER_MS, boolVar, intVar, type EnvConfig, type EnvValuesOf } from '@crawler/core';

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

/** The events variables, part of the crawler's (CRAWLER_ENV); `eventsConfigOf` shapes them for the dispatchers. */
export const EVENTS_ENV = {
  /** Where signed link events are POSTed; unset: events wait in the outbox. */
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
  /** Key of the events' HMAC signature; required with WEBHOOK_URL. */
  WEBHOOK_SECRET: z.string().optional(),
  /** @defaultValue 10000 */
  WEBHOOK_TIMEOUT_MS: intVar(10_000, 100, MAX_TIMER_MS),
  /** @defaultValue 5000 */
  WEBHOOK_RETRY_BASE_MS: intVar(5_000, 1, MAX_TIMER_MS),
  /** @defaultValue 3600000 */
  WEBHOOK_RETRY_MAX_MS: intVar(3_600_000, 1, MAX_TIMER_MS),
  /** @defaultValue 86400000 */
  WEBHOOK_RETRY_WINDOW_MS: intVar(86_400_000, 1, MAX_DURATION_MS),
  /** The Redis stream key, or `off`. @defaultValue `<QUEUE_PREFIX>:events` */
  EVENTS_STREAM: z.string().trim().optional(),
  /** @defaultValue 100000 */
  EVENTS_STREAM_MAX_LEN: intVar(100_000, 1),
  /** Whether router processes run an event dispatcher. @defaultValue true */
  EVENTS_DISPATCHER: boolVar(true),
};

/** A webhook secret shorter than this is refused: it signs every event, a guessable one signs nothing. */
export const MIN_WEBHOOK_SECRET_LENGTH = 16;

/** Cross-field rules, as issues on the variable to fix. */
export function checkEventsEnv(e: Pick<EnvValuesOf<typeof EVENTS_ENV>, 'WEBHOOK_URL' | 'WEBHOOK_SECRET'>, ctx: z.RefinementCtx): void {
  if (e.WEBHOOK_URL && !e.WEBHOOK_SECRET) ctx.addIssue({ code: 'custom', path: ['WEBHOOK_SECRET'], message: 'required when WEBHOOK_URL is set' });
  if (e.WEBHOOK_SECRET && e.WEBHOOK_SECRET.length < MIN_WEBHOOK_SECRET_LENGTH) {
    ctx.addIssue({ code: 'custom', path: ['WEBHOOK_SECRET'], message: `must be at least ${MIN_WEBHOOK_SECRET_LENGTH} characters` });
  }
}

/** The events settings from the parsed variables. The stream key defaults to `<QUEUE_PREFIX>:events`. */
export function eventsConfigOf(e: EnvConfig<typeof EVENTS_ENV>, queuePrefix: string): EventsConfig {
  const streamKey = e.eventsStream === undefined || e.eventsStream === '' ? `${queuePrefix}:events` : e.eventsStream;
  return {
    webhook: e.webhookUrl ? { url: e.webhookUrl, secret: e.webhookSecret!, timeoutMs: e.webhookTimeoutMs } : null,
    retry: { baseDelayMs: e.webhookRetryBaseMs, maxDelayMs: e.webhookRetryMaxMs, retryWindowMs: e.webhookRetryWindowMs },
    stream: streamKey.toLowerCase() === 'off' ? null : { key: streamKey, maxLen: e.eventsStreamMaxLen },
    dispatcherEnabled: e.eventsDispatcher,
  };
}
