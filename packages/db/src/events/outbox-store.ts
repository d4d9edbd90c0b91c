import { systemClock, type Clock } from '@crawler/core';
import type { PrismaClient } from '../client.js';
import { withDbErrors } from '../errors.js';
import { sqlOf, type SqlClient } from '../sql.js';

/** The event a link's final state produces: what webhooks POST and the Redis stream carries. */
export interface LinkEvent {
  /** Stable across re-deliveries: receivers drop an id they have already accepted. */
  id: string;
  type: 'link.done' | 'link.failed' | 'link.changed' | 'link.unchanged';
  linkId: string;
  url: string;
  status: 'done' | 'failed';
  fetcher: string | null;
  errorType: string | null;
  /** link.failed: why, in words (the link's last_error). Absent on other events. */
  error?: string | null;
  occurredAt: string;
  /** Outbox sequence: increasing in insertion order (not a gap-free or commit-ordered counter). */
  seq: string;
  /** link.changed: the previous version's sha256; link.unchanged: the confirmed version's. Absent on other events. */
  oldSha256?: string;
  /** link.changed: the new version's sha256; link.unchanged: the confirmed version's (the same). */
  newSha256?: string;
  /** link.changed / link.unchanged: the link's current version number. */
  version?: number;
}

/** An event claimed for webhook delivery, with its delivery state. */
export interface ClaimedEvent {
  event: LinkEvent;
  /** Deliveries tried before this one. */
  attempts: number;
  /** Start of the retry window (the event's time, or its last replay). */
  retryingSince: Date;
}

/** What `replayDead` re-sends. */
export interface ReplayFilter {
  /** Only dead letters of events that occurred at or after this. */
  since?: Date | null;
  /** Only these event ids. */
  ids?: string[] | null;
}

/** Counts per delivery state. */
export interface OutboxStats {
  pending: number;
  delivered: number;
  dead: number;
  unstreamed: number;
}

const EVENT_COLUMNS = `id::text AS id, type, link::text AS "linkId", url, status, fetcher, error_type AS "errorType", link_error AS "error",
  occurred_at AS "occurredAt", seq::text AS seq, old_sha256 AS "oldSha256", new_sha256 AS "newSha256", version`;

// SKIP LOCKED: dispatchers in other processes pass over the rows this one is claiming instead of waiting on them; the
// lease then keeps them off those rows until it expires (a dispatcher that dies mid-delivery frees its events).
const CLAIM_WEBHOOK_SQL = `
UPDATE link_events SET lease_until = $1::timestamptz + $2::int * interval '1 millisecond'
WHERE seq IN (
  SELECT seq FROM link_events
  WHERE delivered_at IS NULL AND dead_at IS NULL AND next_attempt_at <= $1::timestamptz
    AND (lease_until IS NULL OR lease_until <= $1::timestamptz)
  ORDER BY next_attempt_at, seq
  LIMIT $3::int
  FOR UPDATE SKIP LOCKED
)
RETURNING ${EVENT_COLUMNS}, webhook_attempts AS attempts, retrying_since AS "retryingSince"`;

const CLAIM_STREAM_SQL = `
UPDATE link_events SET stream_lease_until = $1::timestamptz + $2::int * interval '1 millisecond'
WHERE seq IN (
  SELECT seq FROM link_events
  WHERE streamed_at IS NULL AND (stream_lease_until IS NULL OR stream_lease_until <= $1::timestamptz)
  ORDER BY seq
  LIMIT $3::int
  FOR UPDATE SKIP LOCKED
)
RETURNING ${EVENT_COLUMNS}`;

type EventRow = Omit<LinkEvent, 'occurredAt' | 'oldSha256' | 'newSha256' | 'version' | 'error'> & {
  occurredAt: Date; oldSha256: string | null; newSha256: string | null; version: number | null; error: string | null;
};

function toEvent(row: EventRow): LinkEvent {
  return {
    id: row.id, type: row.type, linkId: row.linkId, url: row.url, status: row.status, fetcher: row.fetcher,
    errorType: row.errorType, ...(row.status === 'failed' ? { error: row.error } : {}), occurredAt: row.occurredAt.toISOString(), seq: row.seq,
    // Only change events carry versions: done/failed payloads stay as they were.
    ...(row.newSha256 !== null && row.newSha256 !== undefined ? { oldSha256: row.oldSha256 ?? undefined, newSha256: row.newSha256, version: row.version ?? undefined } : {}),
  };
}

/**
 * The events outbox (link_events). Rows are written by a trigger in the transaction that moves a link to done or
 * failed; this store is the dispatchers' side: claim with a lease, record the outcome, dead-letter, replay.
 */
export class OutboxStore {
  readonly #prisma: PrismaClient;
  readonly #sql: SqlClient;
  readonly #clock: Clock;

  constructor(deps: { prisma: PrismaClient; clock?: Clock }) {
    this.#prisma = deps.prisma;
    this.#sql = sqlOf(deps.prisma);
    this.#clock = deps.clock ?? systemClock;
  }

  /** Up to `limit` events due for webhook delivery, leased to the caller for `leaseMs`. */
  async claimForWebhook(limit: number, leaseMs: number): Promise<ClaimedEvent[]> {
    const rows = await withDbErrors('claim events', () =>
      this.#sql.query<EventRow & { attempts: number; retryingSince: Date }>(CLAIM_WEBHOOK_SQL, [this.#clock.now(), leaseMs, limit]),
    );
    return rows.sort((a, b) => Number(BigInt(a.seq) - BigInt(b.seq))).map((r) => ({ event: toEvent(r), attempts: r.attempts, retryingSince: r.retryingSince }));
  }

  /** The receiver accepted the event. */
  async markDelivered(id: string): Promise<void> {
    await withDbErrors('mark event delivered', () =>
      this.#sql.query(
        'UPDATE link_events SET delivered_at = $2, webhook_attempts = webhook_attempts + 1, lease_until = NULL, last_error = NULL WHERE id = $1::uuid',
        [id, this.#clock.now()],
      ),
    );
  }

  /** A delivery failed: try again at `nextAttemptAt`, or keep it as a dead letter when `dead`. */
  async markFailed(id: string, error: string, outcome: { nextAttemptAt: Date } | { dead: true }): Promise<void> {
    const now = this.#clock.now();
    await withDbErrors('mark event failed', () =>
      'dead' in outcome
        ? this.#sql.query(
            'UPDATE link_events SET dead_at = $2, webhook_attempts = webhook_attempts + 1, lease_until = NULL, last_error = $3 WHERE id = $1::uuid AND delivered_at IS NULL',
            [id, now, error.slice(0, 2_000)],
          )
        : this.#sql.query(
            'UPDATE link_events SET next_attempt_at = $2, webhook_attempts = webhook_attempts + 1, lease_until = NULL, last_error = $3 WHERE id = $1::uuid AND delivered_at IS NULL',
            [id, outcome.nextAttemptAt, error.slice(0, 2_000)],
          ),
    );
  }

  /** Dead letters back into delivery, due now, with a fresh retry window. Returns how many. */
  async replayDead(filter: ReplayFilter = {}): Promise<number> {
    const now = this.#clock.now();
    const rows = await withDbErrors('replay dead events', () =>
      this.#sql.query(
        `UPDATE link_events SET dead_at = NULL, next_attempt_at = $1, retrying_since = $1, lease_until = NULL
         WHERE dead_at IS NOT NULL AND delivered_at IS NULL
           AND ($2::timestamptz IS NULL OR occurred_at >= $2::timestamptz)
           AND ($3::uuid[] IS NULL OR id = ANY($3::uuid[]))
         RETURNING 1`,
        [now, filter.since ?? null, filter.ids ?? null],
      ),
    );
    return rows.length;
  }

  /** Up to `limit` events not yet added to the Redis stream, leased for `leaseMs`, in sequence order. */
  async claimForStream(limit: number, leaseMs: number): Promise<LinkEvent[]> {
    const rows = await withDbErrors('claim events for stream', () => this.#sql.query<EventRow>(CLAIM_STREAM_SQL, [this.#clock.now(), leaseMs, limit]));
    return rows.sort((a, b) => Number(BigInt(a.seq) - BigInt(b.seq))).map(toEvent);
  }

  /** These events are in the Redis stream. */
  async markStreamed(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await withDbErrors('mark events streamed', () =>
      this.#sql.query('UPDATE link_events SET streamed_at = $2, stream_lease_until = NULL WHERE id = ANY($1::uuid[])', [ids, this.#clock.now()]),
    );
  }

  /** Events by delivery state. */
  async stats(): Promise<OutboxStats> {
    const [row] = await withDbErrors('event stats', () =>
      this.#sql.query<OutboxStats>(
        `SELECT count(*) FILTER (WHERE delivered_at IS NULL AND dead_at IS NULL)::int AS pending,
                count(*) FILTER (WHERE delivered_at IS NOT NULL)::int AS delivered,
                count(*) FILTER (WHERE dead_at IS NOT NULL)::int AS dead,
                count(*) FILTER (WHERE streamed_at IS NULL)::int AS unstreamed
         FROM link_events`,
      ),
    );
    return row ?? { pending: 0, delivered: 0, dead: 0, unstreamed: 0 };
  }

  /**
   * Delete events that occurred before `before` and that every channel in use is done with: delivered or dead for
   * the webhook, added for the stream. A channel not in use has nothing to wait for. In batches of `batchSize`, so a
   * large outbox is never locked at once. Returns how many were deleted.
   */
  async prune(options: { before: Date; webhook: boolean; stream: boolean; batchSize?: number }): Promise<number> {
    const batchSize = options.batchSize ?? 10_000;
    let total = 0;
    for (;;) {
      const rows = await withDbErrors('prune events', () =>
        this.#sql.query<{ n: number }>(
          `WITH doomed AS (
             SELECT seq FROM link_events
             WHERE occurred_at < $1::timestamptz
               AND (NOT $2::boolean OR delivered_at IS NOT NULL OR dead_at IS NOT NULL)
               AND (NOT $3::boolean OR streamed_at IS NOT NULL)
             ORDER BY seq LIMIT $4
           ), gone AS (DELETE FROM link_events WHERE seq IN (SELECT seq FROM doomed) RETURNING 1)
           SELECT count(*)::int AS n FROM gone`,
          [options.before, options.webhook, options.stream, batchSize],
        ),
      );
      const n = rows[0]?.n ?? 0;
      total += n;
      if (n < batchSize) return total;
    }
  }

  /** Every event of a link, oldest first. */
  async forLink(linkId: string): Promise<LinkEvent[]> {
    const rows = await withDbErrors('events of link', () =>
      this.#sql.query<EventRow>(`SELECT ${EVENT_COLUMNS} FROM link_events WHERE link = $1::uuid ORDER BY seq`, [linkId]),
    );
    return rows.map(toEvent);
  }
}
