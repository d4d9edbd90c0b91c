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
       last_error_type = NULL, last_error = NULL, updated_at = now()
WHERE id = ANY($1::uuid[]) AND status = '${LINK_STATUSES.failed}' AND last_error_type = ANY($2::text[])
RETURNING id, url, generation`;

/**
 * Give failed links another go when their failure said nothing about the page (a site that was down): back to
 * `queued` in a new generation with a clean risk level; the caller enqueues their route jobs. Returns those revived.
 */
export async function reviveFailedLinks(prisma: PrismaClient, ids: readonly string[], errorTypes: readonly string[]): Promise<ResumedLink[]> {
  if (ids.length === 0) return [];
  return sqlOf(prisma).query<ResumedLink>(REVIVE_SQL, [ids, errorTypes]);
}
