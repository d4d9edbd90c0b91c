-- The router's domain-state read (a domain's newest attempts) as a function with its own planner settings.
--
-- Since the attempt log is partitioned (20261128000100), the read as a prepared statement regressed 2–4×: after five
-- custom plans (7–12 ms of planning each over both tables' partitions) Postgres settles on a generic plan, which
-- prices `heuristic_value = $1` at the average domain's few rows per partition and so prefers Append + top-N sort over
-- Merge Append + Limit — reading and sorting every index entry the domain has (a hot domain: all of its attempts).
-- On one table the ordered index scan cost nothing extra, so the question never came up.
--
-- Here the statement is planned (and its plan cached per session, as for a prepared statement) with sorts and bitmap
-- scans priced out: the only way left to produce the domain's entries newest first is the Merge Append of every
-- partition's ordered index scan, which stops after `p_limit` entries (plus one per partition). The final 200-row
-- ORDER BY still sorts (every plan has that sort, so pricing it out changes nothing there). The probe stays a LATERAL
-- subquery with OFFSET 0 on the primary key (id, attempted_at): one partition's index per row, never a hash join.
-- The fetcher it returns is the attempt's arm (attempt_arm, 20261129000100): `fetcher` direct, `fetcher@tier` proxied.
CREATE FUNCTION "domain_recent_attempts"("p_domain" TEXT, "p_limit" INTEGER)
RETURNS TABLE("fetcher" TEXT, "success" BOOLEAN, "is_banned" BOOLEAN, "error_type" TEXT, "selection_source" TEXT, "attempted_at" TIMESTAMPTZ)
LANGUAGE plpgsql STABLE
SET "enable_sort" = off
SET "enable_bitmapscan" = off
AS $fn$
BEGIN
  RETURN QUERY
  SELECT fa."fetcher", fa."success", fa."is_banned", fa."error_type", fa."selection_source", fa."attempted_at"::timestamptz
  FROM (
    SELECT ah."attempt", ah."attempted_at" FROM "attempt_heuristics" AS ah
    WHERE ah."heuristic_type" = 'domain' AND ah."heuristic_value" = "p_domain"
    ORDER BY ah."attempt" DESC
    LIMIT "p_limit"
  ) AS recent
  CROSS JOIN LATERAL (
    SELECT f."id", attempt_arm(f."fetcher", f."exit_tier") AS "fetcher", f."success", f."is_banned", f."error_type", f."selection_source", f."attempted_at"
    FROM "fetcher_attempts" AS f WHERE f."id" = recent."attempt" AND f."attempted_at" = recent."attempted_at"
    OFFSET 0
  ) AS fa
  WHERE fa."selection_source" IS DISTINCT FROM 'prior'
  ORDER BY fa."attempted_at" DESC, fa."id" DESC;
END
$fn$;

-- The reconciler's keyset pages walk links by (status, updated_at, id) within a status, but the index it reads held
-- (status, updated_at) only: links sharing an updated_at (one bulk INSERT of a million links, one statement's batch)
-- could not be paged by the index, so every page read every tied link and sorted them for the next 500 (0.5 s per page
-- at 500k queued links sharing one timestamp, a pass quadratic in them). With id in the index each page is an index
-- range. Plain CREATE INDEX: it blocks writes to links while it builds (seconds per million links).
DROP INDEX IF EXISTS "idx_links_unfinished_updated";
CREATE INDEX "idx_links_unfinished_updated" ON "links"("status", "updated_at", "id") WHERE "status" IN ('queued', 'routing', 'fetching', 'paused');
