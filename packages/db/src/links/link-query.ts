import { LINK_STATUSES } from '@crawler/core';
import type { PrismaClient } from '../client.js';
import { sqlOf } from '../sql.js';

/** Paused links of one domain, as Postgres has them. */
export interface PausedDomainLinks {
  domain: string;
  /** Links of the domain paused now (status `paused` with a pause still running). */
  links: number;
  /** The latest end among their pauses. */
  until: Date;
  /** The most common `last_error_type` among them (null when none says). */
  reason: string | null;
}

/** A link resumed by {@link resumePausedLinks}, in the new generation its route job must carry. */
export interface ResumedLink {
  id: string;
  url: string;
  generation: number;
  /** The link's stored BullMQ priority (null: none), for its route job. */
  priority?: number | null;
}

const PAUSED_BY_DOMAIN_SQL = `
SELECT domain, count(*)::int AS links, max(paused_until) AS until,
       mode() WITHIN GROUP (ORDER BY last_error_type) AS reason
FROM links
WHERE status = '${LINK_STATUSES.paused}' AND paused_until > $1
GROUP BY domain
ORDER BY count(*) DESC, domain
LIMIT $2`;

// A new generation makes the delayed jobs that still carry these links stale (they skip), and the caller enqueues
// fresh route jobs of that generation: the links run now, not when their old delayed jobs fire.
const RESUME_SQL = `
UPDATE links SET status = '${LINK_STATUSES.queued}', paused_until = NULL, generation = generation + 1, updated_at = now()
WHERE domain = $1 AND status NOT IN ('${LINK_STATUSES.done}', '${LINK_STATUSES.failed}')
  AND (status = '${LINK_STATUSES.paused}' OR paused_until > $2)
RETURNING id, url, generation`;

/**
 * Paused links grouped by domain, most links first: what the fleet's Redis pauses alone cannot show (a link's own
 * pause outlives or precedes its domain's). At most `limit` domains.
 */
export async function pausedLinksByDomain(prisma: PrismaClient, now: Date, limit = 500): Promise<PausedDomainLinks[]> {
  return sqlOf(prisma).query<PausedDomainLinks>(PAUSED_BY_DOMAIN_SQL, [now, limit]);
}

/** End the pause of every unfinished link of `domain` (lifting a domain's pause); returns them to be routed again. */
export async function resumePausedLinks(prisma: PrismaClient, domain: string, now: Date): Promise<ResumedLink[]> {
  return sqlOf(prisma).query<ResumedLink>(RESUME_SQL, [domain, now]);
}

// Only links still failed with one of the given codes: a concurrent revival or a newer outcome is left alone.
const REVIVE_SQL = `
UPDATE links SET status = '${LINK_STATUSES.queued}', paused_until = NULL, risk_level = 0, generation = generation + 1,
       attempt_count = 0, rescues = 0, last_error_type = NULL, last_error = NULL, priority = COALESCE($3::int, priority), updated_at = now()
WHERE id = ANY($1::uuid[]) AND status = '${LINK_STATUSES.failed}' AND last_error_type = ANY($2::text[])
RETURNING id, url, generation, priority`;

/**
 * Give failed links another go when their failure said nothing about the page (a site that was down, a cancelled
 * crawl): back to `queued` in a new generation with a clean risk level and a fresh attempt budget, as a refresh starts
 * a visit (the attempts of the failed visit must not use up the new one's); the caller enqueues their route jobs
 * with the returned priority (`priority`, when given, is stored as the link's, as a new link's is). Returns those
 * revived.
 */
export async function reviveFailedLinks(prisma: PrismaClient, ids: readonly string[], errorTypes: readonly string[], priority?: number | null): Promise<ResumedLink[]> {
  if (ids.length === 0) return [];
  return sqlOf(prisma).query<ResumedLink>(REVIVE_SQL, [ids, errorTypes, priority ?? null]);
}

/** One link as GET /links lists it. */
export interface LinkListItem {
  id: string;
  url: string;
  domain: string;
  status: string;
  fetcher: string | null;
  pausedUntil: Date | null;
  attemptCount: number;
  lastErrorType: string | null;
  lastError: string | null;
  crawlId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Filters and page of {@link listLinks}; every filter is optional and they combine with AND. */
export interface ListLinksQuery {
  status?: string;
  /** The link's host, exactly (as stored, lower case). */
  domain?: string;
  /** The normalized URL, exactly, or any of several spellings of one page: a lookup. */
  url?: string | readonly string[];
  /** Page size. */
  limit: number;
  /** Where the previous page ended (its `nextCursor`). */
  after?: { createdAt: Date; id: string };
}

const LIST_COLUMNS = `id, url, domain, status, fetcher, paused_until AS "pausedUntil", attempt_count AS "attemptCount",
  last_error_type AS "lastErrorType", last_error AS "lastError", crawl AS "crawlId", created_at AS "createdAt", updated_at AS "updatedAt"`;

// Newest first, by (created_at, id): a keyset walk, so page N costs what page 1 does and a link added meanwhile
// neither repeats nor shifts a page. NULL parameters switch their filter off.
export const LIST_SQL = `
SELECT ${LIST_COLUMNS} FROM links
WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR domain = $2) AND ($3::text[] IS NULL OR url = ANY($3::text[]))
  AND ($4::timestamptz IS NULL OR (created_at, id) < ($4::timestamptz, $5::uuid))
ORDER BY created_at DESC, id DESC
LIMIT $6`;

/** A page of links, newest first, and whether another page follows. */
export async function listLinks(prisma: PrismaClient, q: ListLinksQuery): Promise<{ links: LinkListItem[]; more: boolean }> {
  const rows = await sqlOf(prisma).query<LinkListItem>(LIST_SQL, [q.status ?? null, q.domain ?? null, q.url === undefined ? null : [q.url].flat(), q.after?.createdAt ?? null, q.after?.id ?? null, q.limit + 1]);
  return { links: rows.slice(0, q.limit), more: rows.length > q.limit };
}
