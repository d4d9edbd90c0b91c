import { revisitValidators, systemClock, type Clock, type ValidatorSource } from '@crawler/core';
import type { PrismaClient } from '../client.js';
import { withDbErrors } from '../errors.js';
import { sqlOf } from '../sql.js';
import type { StoreDeps } from '../attempts/types.js';
import { FINISHED_SQL_LIST } from '../sql-lists.js';
import { LINK_STATUSES } from '@crawler/core';

/** One stored version of a link's page (no body). */
export interface PageVersion {
  /** 1, 2, … in fetch order. */
  version: number;
  /** The fetched_content row. */
  contentId: bigint;
  fetchedAt: Date;
  httpStatus: number;
  sha256: string;
  sizeBytes: number;
  fetcher: string;
  /** Visits that found this version unchanged since it was stored (304s and identical bodies). */
  unchangedVisits: number;
  /** The latest of those visits, or null. */
  lastSeenAt: Date | null;
}

/** What a revisit can send to ask "has it changed?": the latest version's validators. */
export interface RevisitValidators {
  contentId: bigint;
  version: number;
  /** The fetcher that stored the latest version (a conditional request only makes sense for plain HTTP's). */
  fetcher: string;
  sha256: string;
  /**
   * The `ETag` to ask with: the newest one the server sent for this version (on storing it, or on a later 304 or
   * identical visit), or null.
   */
  etag: string | null;
  /** The `Last-Modified` to ask with, as {@link revisitValidators} picks it (never one from the future), or null. */
  lastModified: string | null;
}

/** Retention of old versions: a version is kept while it is among the link's last `keepVersions` OR younger than `keepDays`. */
export interface VersionRetention {
  /** Versions kept per link whatever their age (the latest is always kept). @defaultValue 10 */
  keepVersions?: number;
  /** Versions younger than this are kept whatever their number. @defaultValue 30 */
  keepDays?: number;
  /** Rows deleted per statement, so a big prune never holds one long transaction. @defaultValue 5000 */
  batchSize?: number;
}

/** A link reopened for another visit. */
export interface ReopenedLink {
  id: string;
  url: string;
  /** The new generation: route jobs of older ones are ignored. */
  generation: number;
}

export const DEFAULT_KEEP_VERSIONS = 10;
export const DEFAULT_KEEP_VERSIONS_DAYS = 30;

const LIST_SQL = `
SELECT c.version, c.id::text AS "contentId", c.fetched_at AS "fetchedAt", c.http_status AS "httpStatus", c.sha256,
  c.size_bytes AS "sizeBytes", c.fetcher,
  (SELECT count(*)::int FROM page_visits v WHERE v.content = c.id AND v.kind <> 'new') AS "unchangedVisits",
  (SELECT max(v.visited_at) FROM page_visits v WHERE v.content = c.id AND v.kind <> 'new') AS "lastSeenAt"
FROM fetched_content c WHERE c.link = $1::uuid ORDER BY c.version`;

// The latest version and the responses that carried it: the version's own, and the newest later visit by the same
// fetcher (a 304 or the same body) whose response had a validator. Newest first.
const VALIDATORS_SQL = `
WITH c AS (SELECT id, version, fetcher, sha256, fetched_at, response_headers FROM fetched_content WHERE link = $1::uuid ORDER BY version DESC LIMIT 1)
SELECT c.id::text AS "contentId", c.version, c.fetcher, c.sha256, r.etag, r.last_modified AS "lastModified", r.date, r.at AS "receivedAt"
FROM c CROSS JOIN LATERAL (
  (SELECT 0 AS ord, v.visited_at AS at, v.response_headers->>'etag' AS etag, v.response_headers->>'last-modified' AS last_modified,
     v.response_headers->>'date' AS date
   FROM page_visits v
   WHERE v.content = c.id AND v.kind <> 'new' AND v.fetcher = c.fetcher AND (v.response_headers ? 'etag' OR v.response_headers ? 'last-modified')
   ORDER BY v.id DESC LIMIT 1)
  UNION ALL
  SELECT 1, c.fetched_at, c.response_headers->>'etag', c.response_headers->>'last-modified', c.response_headers->>'date'
) r
ORDER BY r.ord`;

// The condition of retention: not among the link's last K (by version) and older than the cut-off.
const PRUNE_SQL = `
WITH doomed AS (
  SELECT c.id FROM fetched_content c
  WHERE c.fetched_at < $1::timestamptz
    AND (SELECT count(*) FROM fetched_content n WHERE n.link = c.link AND n.version > c.version) >= $2::int
  LIMIT $3::int
)
DELETE FROM fetched_content c USING doomed WHERE c.id = doomed.id
RETURNING c.id`;

// Done or failed links go back to queued with a new generation and a fresh attempt budget; unfinished ones are left
// alone (they are on their way already). The attempt log keeps every attempt: only the link's counter restarts.
const REOPEN_SQL = `
UPDATE links SET status = '${LINK_STATUSES.queued}', generation = generation + 1, attempt_count = 0, rescues = 0, paused_until = NULL,
  last_error_type = NULL, last_error = NULL, updated_at = now()
WHERE id = ANY($1::uuid[]) AND status IN (${FINISHED_SQL_LIST})
RETURNING id::text AS id, url, generation`;

/** A link's page versions and visits (fetched_content numbered per link, page_visits). */
export class VersionStore {
  readonly #prisma: PrismaClient;
  readonly #clock: Clock;

  constructor(deps: StoreDeps) {
    this.#prisma = deps.prisma;
    this.#clock = deps.clock ?? systemClock;
  }

  /** Every stored version of a link, oldest first; empty when it has none (or does not exist). */
  async list(linkId: string): Promise<PageVersion[]> {
    const rows = await withDbErrors('list versions', () =>
      sqlOf(this.#prisma).query<Omit<PageVersion, 'contentId'> & { contentId: string }>(LIST_SQL, [linkId]),
    );
    return rows.map((r) => ({ ...r, contentId: BigInt(r.contentId) }));
  }

  /** The link a version list belongs to: its URL and whether its latest visit changed the page; null when unknown. */
  async linkOf(linkId: string): Promise<{ id: string; url: string; lastVisitChanged: boolean | null } | null> {
    return withDbErrors('version link', () => this.#prisma.link.findUnique({ where: { id: linkId }, select: { id: true, url: true, lastVisitChanged: true } }));
  }

  /**
   * The latest version's validators of the link stored under a normalized URL, when that link was attempted before
   * (a revisit); null otherwise.
   */
  async validatorsByUrl(url: string): Promise<RevisitValidators | null> {
    const link = await withDbErrors('revisit link', () => this.#prisma.link.findUnique({ where: { url }, select: { id: true, lastAttemptAt: true } }));
    return link?.lastAttemptAt ? this.validators(link.id) : null;
  }

  /**
   * The latest version's validators as the server describes that page now, or null when the link has no stored page.
   * One read by the link's and the version's indexes.
   */
  async validators(linkId: string): Promise<RevisitValidators | null> {
    const rows = await withDbErrors('revisit validators', () =>
      sqlOf(this.#prisma).query<Omit<RevisitValidators, 'contentId'> & ValidatorSource & { contentId: string }>(VALIDATORS_SQL, [linkId]),
    );
    const row = rows[0];
    if (!row) return null;
    const usable = revisitValidators(rows.map((r) => ({ etag: r.etag, lastModified: r.lastModified, date: r.date, receivedAt: new Date(r.receivedAt) })));
    return { contentId: BigInt(row.contentId), version: row.version, fetcher: row.fetcher, sha256: row.sha256, ...usable };
  }

  /**
   * Apply retention: delete versions that are neither among their link's last `keepVersions` nor younger than
   * `keepDays` (the visits that confirmed them go with them). The latest version of a link is never deleted.
   */
  async prune(retention: VersionRetention = {}): Promise<{ deletedVersions: number }> {
    const keep = Math.max(1, retention.keepVersions ?? DEFAULT_KEEP_VERSIONS);
    const days = retention.keepDays ?? DEFAULT_KEEP_VERSIONS_DAYS;
    const cutoff = new Date(this.#clock.now().getTime() - days * 86_400_000);
    const batch = retention.batchSize ?? 5_000;
    let deleted = 0;
    for (;;) {
      const rows = await withDbErrors('prune versions', () => sqlOf(this.#prisma).query(PRUNE_SQL, [cutoff.toISOString(), keep, batch]));
      const n = rows.length;
      deleted += n;
      if (n < batch) return { deletedVersions: deleted };
    }
  }

  /**
   * Reopen finished links for another visit: status `queued`, generation + 1 (jobs of the old generation are
   * ignored), attempt budget reset. Links still unfinished are not touched and not returned. The caller gives each
   * returned link a route job of its generation (JobQueues.addRoute), or leaves that to the reconciler.
   */
  async reopenForRevisit(linkIds: readonly string[]): Promise<ReopenedLink[]> {
    if (linkIds.length === 0) return [];
    return withDbErrors('reopen links for revisit', () => sqlOf(this.#prisma).query<ReopenedLink>(REOPEN_SQL, [linkIds]));
  }
}

/** {@link VersionStore.reopenForRevisit} without building a store. */
export function reopenForRevisit(prisma: PrismaClient, linkIds: readonly string[]): Promise<ReopenedLink[]> {
  return new VersionStore({ prisma }).reopenForRevisit(linkIds);
}
