import type { SqlClient } from '../sql.js';
import type { VisitStart } from './schedule-store.js';
import { FINISHED_SQL_LIST } from '../sql-lists.js';
import { LINK_STATUSES } from '@crawler/core';

/**
 * Inside a crawl's admission transaction: which of these URLs are stored links, and whether each is stale for a
 * crawl whose max age is `maxAgeSeconds` (finished, last visited longer ago than that; null max age: never stale).
 * With `retryFailed` (a crawl's seeds) a failed link is stale whatever its age: it has no page to start from, and
 * the crawl asked for it by name. Locks nothing: {@link takeOverStaleLinks} re-checks under the row lock.
 */
export async function storedLinkStates(tx: SqlClient, urls: readonly string[], maxAgeSeconds: number | null, retryFailed = false): Promise<Map<string, { stale: boolean; finished: boolean }>> {
  if (urls.length === 0) return new Map();
  const rows = await tx.query<{ url: string; stale: boolean; finished: boolean }>(
    `SELECT url, status IN (${FINISHED_SQL_LIST}) AS finished,
       ((status IN (${FINISHED_SQL_LIST}) AND $2::float8 IS NOT NULL AND (last_attempt_at IS NULL OR last_attempt_at <= now() - $2::float8 * interval '1 second'))
         OR ($3::boolean AND status = '${LINK_STATUSES.failed}')) AS stale
     FROM links WHERE url = ANY($1::text[])`,
    [urls, maxAgeSeconds, retryFailed],
  );
  return new Map(rows.map((r) => [r.url, { stale: r.stale, finished: r.finished }]));
}

/**
 * A re-crawl takes over stale stored pages: each starts a new visit (new generation, fresh attempt budget, as
 * ScheduleStore.refresh) as a link of `crawlId`, with this crawl's depth, discoverer and revisit policy (when it has
 * one). The crawl that had it keeps counting it: its handed_over_done/failed counter moves by the status the link
 * had, so the old crawl's figures are not rewritten. Returns the links taken (a link that another writer moved on
 * meanwhile is not taken). Runs in the admission transaction; rows are locked in url order.
 */
export async function takeOverStaleLinks(
  tx: SqlClient,
  req: {
    crawlId: string;
    discoveredFrom: string | null;
    /** Finished links last visited longer ago than this are taken; null: none by age. */
    maxAgeSeconds: number | null;
    /** Failed links are taken whatever their age (a crawl's seeds). @defaultValue false */
    retryFailed?: boolean;
    rows: ReadonlyArray<{ url: string; depth: number }>;
  },
): Promise<VisitStart[]> {
  if (req.rows.length === 0) return [];
  const taken = await tx.query<VisitStart & { oldCrawl: string | null; oldStatus: string }>(
    `WITH input AS (SELECT * FROM unnest($1::text[], $2::int[]) AS t(url, depth)),
     old AS (
       SELECT l.id, l.crawl, l.status, i.depth FROM links l JOIN input i ON i.url = l.url
       WHERE (l.status IN (${FINISHED_SQL_LIST}) AND $5::float8 IS NOT NULL AND (l.last_attempt_at IS NULL OR l.last_attempt_at <= now() - $5::float8 * interval '1 second'))
         OR ($6::boolean AND l.status = '${LINK_STATUSES.failed}')
       ORDER BY l.url FOR UPDATE OF l
     ),
     c AS (SELECT revisit_mode, revisit_interval_s, revisit_min_s, revisit_max_s FROM crawls WHERE id = $3::uuid)
     UPDATE links SET status = '${LINK_STATUSES.queued}', generation = links.generation + 1, attempt_count = 0, rescues = 0, paused_until = NULL,
       last_error_type = NULL, last_error = NULL, fetcher = NULL, selection_source = NULL, updated_at = now(),
       crawl = $3::uuid, depth = old.depth, discovered_from = $4::uuid,
       revisit_mode = coalesce(c.revisit_mode, links.revisit_mode),
       revisit_interval_s = CASE WHEN c.revisit_mode IS NULL THEN links.revisit_interval_s ELSE c.revisit_interval_s END,
       revisit_min_s = CASE WHEN c.revisit_mode IS NULL THEN links.revisit_min_s ELSE c.revisit_min_s END,
       revisit_max_s = CASE WHEN c.revisit_mode IS NULL THEN links.revisit_max_s ELSE c.revisit_max_s END,
       revisit_next_s = CASE WHEN c.revisit_mode IS NULL THEN links.revisit_next_s END
     FROM old, c WHERE links.id = old.id
     RETURNING links.id::text AS "linkId", links.url, links.generation, old.crawl::text AS "oldCrawl", old.status AS "oldStatus"`,
    [req.rows.map((r) => r.url), req.rows.map((r) => r.depth), req.crawlId, req.discoveredFrom, req.maxAgeSeconds, req.retryFailed ?? false],
  );
  const handed = new Map<string, { done: number; failed: number }>();
  for (const t of taken) {
    if (!t.oldCrawl || t.oldCrawl === req.crawlId) continue;
    const h = handed.get(t.oldCrawl) ?? { done: 0, failed: 0 };
    if (t.oldStatus === 'done') h.done += 1;
    else h.failed += 1;
    handed.set(t.oldCrawl, h);
  }
  if (handed.size > 0) {
    await tx.query(
      `UPDATE crawls SET handed_over_done = handed_over_done + t.done, handed_over_failed = handed_over_failed + t.failed
       FROM unnest($1::uuid[], $2::int[], $3::int[]) AS t(id, done, failed) WHERE crawls.id = t.id`,
      [[...handed.keys()], [...handed.values()].map((h) => h.done), [...handed.values()].map((h) => h.failed)],
    );
  }
  return taken.map(({ linkId, url, generation }) => ({ linkId, url, generation }));
}
