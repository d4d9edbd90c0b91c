-- Routers of the code before 20261206000100 read `url` from domain_recent_attempts (SELECT …, url FROM
-- domain_recent_attempts(…)); that migration replaced the column with `section`, so during a rolling upgrade every
-- routing decision of a router still running the earlier code failed with "column url does not exist" until it was
-- replaced, and its links went through BullMQ's retries and the reconciler's rescues (failing `job_lost` past
-- RECONCILE_MAX_RESCUES). The function returns both again: `section` for today's routers, `url` (on the attempt row
-- the lateral join already reads) for earlier ones. Columns are read by name, so either code reads what it knows.
-- A later migration may drop `url` once no deployment runs a router older than 20261206000100.
DROP FUNCTION IF EXISTS "domain_recent_attempts"(TEXT, INTEGER);
CREATE FUNCTION "domain_recent_attempts"("p_domain" TEXT, "p_limit" INTEGER)
RETURNS TABLE("fetcher" TEXT, "success" BOOLEAN, "is_banned" BOOLEAN, "error_type" TEXT, "selection_source" TEXT, "attempted_at" TIMESTAMPTZ, "section" TEXT, "url" TEXT)
LANGUAGE plpgsql STABLE
SET "enable_sort" = off
SET "enable_bitmapscan" = off
AS $fn$
BEGIN
  RETURN QUERY
  SELECT fa."fetcher", fa."success", fa."is_banned", fa."error_type", fa."selection_source", fa."attempted_at"::timestamptz,
    (SELECT s."heuristic_value" FROM "attempt_heuristics" AS s
     WHERE s."heuristic_type" = 'section' AND s."attempt" = fa."id" AND s."attempted_at" = fa."attempted_at"
     LIMIT 1) AS "section",
    fa."url"
  FROM (
    SELECT ah."attempt", ah."attempted_at" FROM "attempt_heuristics" AS ah
    WHERE ah."heuristic_type" = 'domain' AND ah."heuristic_value" = "p_domain"
    ORDER BY ah."attempt" DESC
    LIMIT "p_limit"
  ) AS recent
  CROSS JOIN LATERAL (
    SELECT f."id", attempt_arm(f."fetcher", f."exit_tier") AS "fetcher", f."success", f."is_banned", f."error_type", f."selection_source", f."attempted_at", f."url"
    FROM "fetcher_attempts" AS f WHERE f."id" = recent."attempt" AND f."attempted_at" = recent."attempted_at"
    OFFSET 0
  ) AS fa
  WHERE fa."selection_source" IS DISTINCT FROM 'prior'
  ORDER BY fa."attempted_at" DESC, fa."id" DESC;
END
$fn$;
