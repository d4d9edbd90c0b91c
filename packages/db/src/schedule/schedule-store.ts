import { systemClock, type Clock, type RevisitPolicy, type ScheduledVisit } from '@crawler/core';
import type { PrismaClient } from '../client.js';
import { withDbErrors } from '../errors.js';
import { sqlOf, type SqlClient } from '../sql.js';
import { FINISHED_SQL_LIST } from '../sql-lists.js';
import { LINK_STATUSES } from '@crawler/core';

/** A finished link that starts a new visit: route it with this generation. */
export interface VisitStart {
  linkId: string;
  url: string;
  generation: number;
  /**
   * The link's stored BullMQ priority (the one it was posted with, or a refresh gave it), so its visit keeps its place
   * behind everyday work; absent: none.
   */
  priority?: number;
}

/** What {@link ScheduleStore.refresh} did with each link it was asked about. */
export interface RefreshResult {
  /** Finished, and last visited longer ago than its max age: a new visit started (route them). */
  refreshed: VisitStart[];
  /** Finished and visited recently enough: left alone. */
  fresh: string[];
  /** Not finished (queued, routing, fetching, paused) or gone: its current visit stands. */
  busy: string[];
}

/** Due links by when they are due. */
export interface ScheduleSummary {
  scheduled: number;
  /** Due now or earlier (claimed at the scheduler's next tick). */
  dueNow: number;
  dueWithinHour: number;
  dueWithinDay: number;
  later: number;
  /** The soonest due links, soonest first. */
  next: Array<{ id: string; url: string; nextFetchAt: Date; mode: string | null; intervalSeconds: number | null; lastVisitChanged: boolean | null }>;
}

/**
 * One new visit of a finished link: a new generation (jobs of the old one are stale and skipped), a fresh attempt
 * budget (attempt_count counts the attempts of the current visit), no pause, error or router decision left over, so
 * it goes through the router like a new link. Its stored pages and attempts are kept. The revisit trigger brings the
 * adaptive interval chosen by the last visit into force and clears next_fetch_at.
 */
const START_VISIT = `status = '${LINK_STATUSES.queued}', generation = links.generation + 1, attempt_count = 0, rescues = 0, paused_until = NULL,
  last_error_type = NULL, last_error = NULL, fetcher = NULL, selection_source = NULL, updated_at = now()`;

// $1 ids, $2 max ages (seconds), $3 now, $4 priorities (null: keep the link's). Row locks in id order so concurrent
// refreshes of overlapping sets wait instead of deadlocking; the status guard re-checked under the lock makes a link
// refresh once however many ask. A refresh's priority is stored like a new link's, so a job the reconciler rebuilds
// for this visit (Redis lost it) and the link's scheduled revisits keep the place the producer asked for.
const REFRESH_SQL = `
WITH asked AS (SELECT * FROM unnest($1::uuid[], $2::float8[], $4::int[]) AS t(id, max_age_s, priority)),
stale AS (
  SELECT l.id, a.priority FROM links l JOIN asked a ON a.id = l.id
  WHERE l.status IN (${FINISHED_SQL_LIST}) AND (l.last_attempt_at IS NULL OR l.last_attempt_at <= $3::timestamptz - a.max_age_s * interval '1 second')
  ORDER BY l.id FOR UPDATE OF l
)
UPDATE links SET ${START_VISIT}, priority = COALESCE(stale.priority, links.priority)
FROM stale WHERE links.id = stale.id AND links.status IN (${FINISHED_SQL_LIST})
RETURNING links.id::text AS "linkId", links.url, links.generation, links.priority`;

// $1 now, $2 batch size. SKIP LOCKED: schedulers in several processes take disjoint batches; the status guard means
// a link claimed once is not claimed again for the same due time (the trigger has cleared its next_fetch_at).
const CLAIM_DUE_SQL = `
WITH due AS (
  SELECT id FROM links WHERE next_fetch_at IS NOT NULL AND next_fetch_at <= $1::timestamptz
  ORDER BY next_fetch_at LIMIT $2::int FOR UPDATE SKIP LOCKED
)
UPDATE links SET ${START_VISIT}
FROM due WHERE links.id = due.id AND links.status IN (${FINISHED_SQL_LIST})
RETURNING links.id::text AS "linkId", links.url, links.generation, links.priority`;

/**
 * The revisit schedule in Postgres: revisit policies on links, refresh on demand, and the scheduler's claim of due
 * links. When a visit ends, the migration's trigger `links_revisit_schedule` computes the link's next_fetch_at in
 * the same transaction as the outcome.
 */
export class ScheduleStore {
  readonly #sql: SqlClient;
  readonly #clock: Clock;

  constructor(deps: { prisma: PrismaClient; clock?: Clock }) {
    this.#sql = sqlOf(deps.prisma);
    this.#clock = deps.clock ?? systemClock;
  }

  /**
   * Start a new visit of each finished link last visited more than its max age ago (0: now). Links still in progress
   * are not touched (their current visit is the refresh); fresh ones are left alone. A refreshed link takes the
   * item's `priority` (BullMQ's, 1 first) as its stored one; without one it keeps its own. Route each refreshed link
   * with the returned priority.
   */
  async refresh(items: ReadonlyArray<{ linkId: string; maxAgeSeconds: number; priority?: number | null }>): Promise<RefreshResult> {
    if (items.length === 0) return { refreshed: [], fresh: [], busy: [] };
    const rows = await withDbErrors('refresh links', () =>
      this.#sql.query<Omit<VisitStart, 'priority'> & { priority: number | null }>(REFRESH_SQL, [
        items.map((i) => i.linkId), items.map((i) => i.maxAgeSeconds), this.#clock.now(), items.map((i) => i.priority ?? null),
      ]),
    );
    const refreshed = rows.map(({ priority, ...start }) => (priority === null ? start : { ...start, priority }));
    const started = new Set(refreshed.map((r) => r.linkId));
    const rest = items.map((i) => i.linkId).filter((id) => !started.has(id));
    const finished = rest.length === 0 ? [] : await this.#sql.query<{ id: string }>(`SELECT id::text FROM links WHERE id = ANY($1::uuid[]) AND status IN (${FINISHED_SQL_LIST})`, [rest]);
    const fresh = new Set(finished.map((r) => r.id));
    return { refreshed, fresh: rest.filter((id) => fresh.has(id)), busy: rest.filter((id) => !fresh.has(id)) };
  }

  /**
   * Give links a revisit policy (null: none, unscheduled). A finished link is scheduled at once from its last visit;
   * an unfinished one when its visit ends.
   */
  async setPolicy(linkIds: readonly string[], policy: RevisitPolicy | null): Promise<void> {
    if (linkIds.length === 0) return;
    const p = policy ?? null;
    await withDbErrors('set revisit policy', () =>
      this.#sql.query(
        `UPDATE links SET revisit_mode = $2, revisit_interval_s = $3::float8, revisit_min_s = $4::float8, revisit_max_s = $5::float8, updated_at = now()
         WHERE id = ANY($1::uuid[])`,
        [linkIds, p?.mode ?? null, p?.intervalSeconds ?? null, p?.mode === 'adaptive' ? p.minSeconds : null, p?.mode === 'adaptive' ? p.maxSeconds : null],
      ),
    );
  }

  /** Claim up to `limit` links due at `now` (soonest first) and start their new visit; route the returned ones. */
  async claimDue(limit: number, now: Date = this.#clock.now()): Promise<VisitStart[]> {
    if (limit <= 0) return [];
    const rows = await withDbErrors('claim due links', () => this.#sql.query<Omit<VisitStart, 'priority'> & { priority: number | null }>(CLAIM_DUE_SQL, [now, limit]));
    return rows.map(({ priority, ...start }) => (priority === null ? start : { ...start, priority }));
  }

  /**
   * Running crawls whose sitemaps are read and whose links carry a revisit policy: the crawls whose sitemaps are read
   * again on a schedule (see SitemapRecheck).
   */
  async sitemapCrawls(): Promise<Array<{ id: string; seeds: string[]; trackingParams: string[] | null }>> {
    return withDbErrors('list sitemap crawls', () => this.#sql.query<{ id: string; seeds: string[]; trackingParams: string[] | null }>(
      `SELECT id::text, seeds, tracking_params AS "trackingParams" FROM crawls
       WHERE status = 'running' AND sitemaps AND revisit_mode IS NOT NULL ORDER BY created_at`,
      [],
    ));
  }

  /** The crawl's links among these URLs, with their last visit and next due time. */
  async scheduledVisits(crawlId: string, urls: readonly string[]): Promise<ScheduledVisit[]> {
    if (urls.length === 0) return [];
    return withDbErrors('read scheduled visits', () => this.#sql.query<ScheduledVisit>(
      `SELECT id::text AS "linkId", url, last_attempt_at AS "lastAttemptAt", next_fetch_at AS "nextFetchAt"
       FROM links WHERE url = ANY($1::text[]) AND crawl = $2::uuid AND next_fetch_at IS NOT NULL`,
      [urls, crawlId],
    ));
  }

  /**
   * Make these scheduled links due at `now` (the scheduler claims them at its next pass, through the politeness gate
   * as any revisit). A link already due, or no longer scheduled (a visit started meanwhile), is left as it is; its
   * interval is not touched, so the visit's own outcome still decides the one after. Returns the ids moved.
   */
  async pullForward(linkIds: readonly string[], now: Date = this.#clock.now()): Promise<string[]> {
    if (linkIds.length === 0) return [];
    const rows = await withDbErrors('pull revisits forward', () => this.#sql.query<{ id: string }>(
      `UPDATE links SET next_fetch_at = $2::timestamptz
       WHERE id = ANY($1::uuid[]) AND status IN (${FINISHED_SQL_LIST}) AND next_fetch_at > $2::timestamptz
       RETURNING id::text`,
      [linkIds, now],
    ));
    return rows.map((r) => r.id);
  }

  /** What is due when (`crawl schedule`). */
  async summary(opts: { now?: Date; limit?: number } = {}): Promise<ScheduleSummary> {
    const now = opts.now ?? this.#clock.now();
    const [c] = await this.#sql.query<Record<'scheduled' | 'dueNow' | 'dueWithinHour' | 'dueWithinDay' | 'later', string>>(
      `SELECT count(*)::text AS scheduled,
         count(*) FILTER (WHERE next_fetch_at <= $1)::text AS "dueNow",
         count(*) FILTER (WHERE next_fetch_at > $1 AND next_fetch_at <= $1::timestamptz + interval '1 hour')::text AS "dueWithinHour",
         count(*) FILTER (WHERE next_fetch_at > $1::timestamptz + interval '1 hour' AND next_fetch_at <= $1::timestamptz + interval '1 day')::text AS "dueWithinDay",
         count(*) FILTER (WHERE next_fetch_at > $1::timestamptz + interval '1 day')::text AS later
       FROM links WHERE next_fetch_at IS NOT NULL`,
      [now],
    );
    const next = await this.#sql.query<ScheduleSummary['next'][number]>(
      `SELECT id::text, url, next_fetch_at AS "nextFetchAt", revisit_mode AS mode, revisit_next_s AS "intervalSeconds", last_visit_changed AS "lastVisitChanged"
       FROM links WHERE next_fetch_at IS NOT NULL ORDER BY next_fetch_at LIMIT $1::int`,
      [opts.limit ?? 20],
    );
    return {
      scheduled: Number(c?.scheduled ?? 0), dueNow: Number(c?.dueNow ?? 0), dueWithinHour: Number(c?.dueWithinHour ?? 0),
      dueWithinDay: Number(c?.dueWithinDay ?? 0), later: Number(c?.later ?? 0), next,
    };
  }
}
