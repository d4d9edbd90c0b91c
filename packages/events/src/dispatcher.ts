import type { Redis } from 'ioredis';
import { systemClock, type Clock, type Logger } from '@crawler/core';
import type { ClaimedEvent, LinkEvent, OutboxStore } from '@crawler/db';
import { DEFAULT_RETRY_POLICY, nextDelivery, type RetryPolicy } from './backoff.js';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhook } from './signature.js';

/** Where webhooks go. */
export interface WebhookTarget {
  url: string;
  secret: string;
  /** Per request. @defaultValue 10_000 */
  timeoutMs?: number;
}

/** Where the Redis stream goes. */
export interface StreamTarget {
  redis: Redis;
  /** Stream key. */
  key: string;
  /** Approximate cap on entries (XADD MAXLEN ~). @defaultValue 100_000 */
  maxLen?: number;
}

/** One HTTP POST of a webhook; resolves to the status, throws on a network error. Injectable for tests. */
export type WebhookSender = (url: string, body: string, headers: Record<string, string>, timeoutMs: number) => Promise<number>;

/** Options of {@link EventDispatcher}. */
export interface EventDispatcherOptions {
  outbox: Pick<OutboxStore, 'claimForWebhook' | 'markDelivered' | 'markFailed' | 'claimForStream' | 'markStreamed'>;
  /** Webhook delivery; null = none (events wait in the outbox). */
  webhook: WebhookTarget | null;
  /** Redis stream; null = none. */
  stream: StreamTarget | null;
  logger: Logger;
  clock?: Clock;
  retry?: Partial<RetryPolicy>;
  /** Events claimed per round. @defaultValue 50 */
  batchSize?: number;
  /** Webhooks in flight at once. @defaultValue 8 */
  concurrency?: number;
  /** How long a claim keeps other dispatchers off an event; longer than a delivery can take. @defaultValue 60_000 */
  leaseMs?: number;
  /** Wait between rounds that found nothing to do. @defaultValue 1_000 */
  idleDelayMs?: number;
  send?: WebhookSender;
}

/** What one round did. */
export interface RoundResult {
  delivered: number;
  failed: number;
  dead: number;
  streamed: number;
}

const USER_AGENT = 'fetch-router-webhooks/1';

/**
 * A URL's credentials (`https://user:token@hooks.example/crawler`, percent-encoded) as an `Authorization: Basic`
 * header, and the URL without them: fetch refuses a URL that carries credentials, with a message that repeats the
 * whole URL, password included.
 */
function splitCredentials(url: string): { url: string; authorization?: string } {
  const u = new URL(url);
  if (!u.username && !u.password) return { url };
  const userinfo = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
  u.username = '';
  u.password = '';
  return { url: u.href, authorization: `Basic ${Buffer.from(userinfo, 'utf8').toString('base64')}` };
}

/**
 * POST with the global fetch (undici), no redirects: a 3xx is a failed delivery, not a hop to somewhere else. A
 * WEBHOOK_URL with credentials sends them as basic auth, as curl does.
 */
export const fetchSender: WebhookSender = async (target, body, headers, timeoutMs) => {
  const { url, authorization } = splitCredentials(target);
  const res = await fetch(url, { method: 'POST', body, headers: authorization ? { ...headers, authorization } : headers, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
  // The body is not needed, but must be consumed or cancelled so the connection is reused.
  await res.body?.cancel().catch(() => {});
  return res.status;
};

/** The JSON a webhook carries and the stream stores: the event's public fields, in a stable order. */
export function eventBody(e: LinkEvent): string {
  const versions = e.newSha256 !== undefined ? { oldSha256: e.oldSha256 ?? null, newSha256: e.newSha256, version: e.version ?? null } : {};
  // A failure says why in words too; link.done payloads stay as they were.
  const why = e.status === 'failed' ? { error: e.error ?? null } : {};
  return JSON.stringify({ id: e.id, type: e.type, linkId: e.linkId, url: e.url, status: e.status, fetcher: e.fetcher, errorType: e.errorType, ...why, occurredAt: e.occurredAt, seq: e.seq, ...versions });
}

/**
 * Delivers the events outbox: signed webhooks with exponential backoff and dead letters, and XADD to a Redis stream.
 * At-least-once on both channels: an event is marked only after the receiver accepted it (2xx) or Redis stored it, so
 * a crash in between re-sends it with the same id. Any number of dispatchers can run against one database: a claim
 * skips rows another dispatcher is claiming (SKIP LOCKED) and leases the rest for `leaseMs`.
 */
export class EventDispatcher {
  readonly #o: EventDispatcherOptions;
  readonly #clock: Clock;
  readonly #retry: RetryPolicy;
  readonly #send: WebhookSender;
  #running: Promise<void> | null = null;
  #stopping = false;
  #wake: (() => void) | null = null;

  constructor(options: EventDispatcherOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.#retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.#send = options.send ?? fetchSender;
  }

  /** Run rounds until stop(); a failing round (database or Redis down) is logged and retried after the idle delay. */
  start(): void {
    if (this.#running) return;
    this.#stopping = false;
    this.#running = (async () => {
      while (!this.#stopping) {
        let busy = false;
        try {
          const r = await this.runOnce();
          busy = r.delivered + r.failed + r.dead + r.streamed > 0;
        } catch (err) {
          this.#o.logger.warn({ err }, 'event dispatch round failed');
        }
        if (!busy && !this.#stopping) await this.#sleep(this.#o.idleDelayMs ?? 1_000);
      }
    })();
  }

  /** Finish the current round and stop. Idempotent. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#wake?.();
    await this.#running;
    this.#running = null;
  }

  /**
   * Stop, then run rounds until one finds nothing due: what the crawl just finished goes out before the process
   * ends. A webhook waiting for its retry is not due and stays in the outbox for the next dispatcher.
   */
  async drain(maxRounds = 1_000): Promise<void> {
    await this.stop();
    for (let i = 0; i < maxRounds; i++) {
      const r = await this.runOnce();
      if (r.delivered + r.failed + r.dead + r.streamed === 0) return;
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    });
  }

  /** One round: stream what is unstreamed, then deliver the webhooks that are due. */
  async runOnce(): Promise<RoundResult> {
    const result: RoundResult = { delivered: 0, failed: 0, dead: 0, streamed: 0 };
    const batch = this.#o.batchSize ?? 50;
    const leaseMs = this.#o.leaseMs ?? 60_000;
    if (this.#o.stream) {
      const events = await this.#o.outbox.claimForStream(batch, leaseMs);
      if (events.length > 0) {
        const { redis, key, maxLen } = this.#o.stream;
        const pipe = redis.pipeline();
        for (const e of events) pipe.xadd(key, 'MAXLEN', '~', String(maxLen ?? 100_000), '*', 'id', e.id, 'type', e.type, 'event', eventBody(e));
        const replies = await pipe.exec();
        const ok = events.filter((_, i) => replies && !replies[i]?.[0]).map((e) => e.id);
        await this.#o.outbox.markStreamed(ok);
        result.streamed = ok.length;
      }
    }
    if (this.#o.webhook) {
      const claimed = await this.#o.outbox.claimForWebhook(batch, leaseMs);
      const queue = [...claimed];
      const worker = async () => {
        for (let c = queue.shift(); c; c = queue.shift()) {
          const outcome = await this.#deliver(c);
          result[outcome] += 1;
        }
      };
      await Promise.all(Array.from({ length: Math.min(this.#o.concurrency ?? 8, queue.length) }, worker));
    }
    return result;
  }

  async #deliver(c: ClaimedEvent): Promise<'delivered' | 'failed' | 'dead'> {
    const target = this.#o.webhook!;
    const body = eventBody(c.event);
    const now = this.#clock.now();
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      [SIGNATURE_HEADER]: signWebhook(target.secret, body, now.getTime() / 1000),
      [EVENT_ID_HEADER]: c.event.id,
    };
    let error: string;
    try {
      const status = await this.#send(target.url, body, headers, target.timeoutMs ?? 10_000);
      if (status >= 200 && status < 300) {
        await this.#o.outbox.markDelivered(c.event.id);
        return 'delivered';
      }
      error = `receiver answered ${status}`;
    } catch (err) {
      error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    }
    const next = nextDelivery(c.attempts + 1, c.retryingSince, this.#clock.now(), this.#retry);
    await this.#o.outbox.markFailed(c.event.id, error, next);
    const log = this.#o.logger.child({ eventId: c.event.id, linkId: c.event.linkId, attempts: c.attempts + 1 });
    if ('dead' in next) {
      log.error({ error }, 'webhook undeliverable: kept as a dead letter (crawl events replay re-sends it)');
      return 'dead';
    }
    log.warn({ error, nextAttemptAt: next.nextAttemptAt.toISOString() }, 'webhook delivery failed, will retry');
    return 'failed';
  }
}
