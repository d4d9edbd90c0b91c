-- The router's domain-state read returns each attempt's section (the `section` heuristic logged with it) instead of
-- its URL, so the router no longer parses up to 200 URLs per decision it does not cache (nor keeps a memo of them).
-- The section is read by attempt from a partial index holding only `section` rows (at most one per attempt, its value
-- included): one index probe per window row, in the attempt's own partition, without reading the attempt's other
-- heuristic rows. Attempts logged before 20261205000100 have no section row: they are in no section, as they already
-- were for the section's own score. Otherwise unchanged (20261205000100).
CREATE INDEX "idx_heur_section_by_attempt" ON "attempt_heuristics"("attempt", "attempted_at") INCLUDE ("heuristic_value")
WHERE "heuristic_type" = 'section';

DROP FUNCTION IF EXISTS "domain_recent_attempts"(TEXT, INTEGER);
CREATE FUNCTION "domain_recent_attempts"("p_domain" TEXT, "p_limit" INTEGER)
RETURNS TABLE("fetcher" TEXT, "success" BOOLEAN, "is_banned" BOOLEAN, "error_type" TEXT, "selection_source" TEXT, "attempted_at" TIMESTAMPTZ, "section" TEXT)
LANGUAGE plpgsql STABLE
SET "enable_sort" = off
SET "enable_bitmapscan" = off
AS $fn$
BEGIN
  RETURN QUERY
  SELECT fa."fetcher", fa."success", fa."is_banned", fa."error_type", fa."selection_source", fa."attempted_at"::timestamptz,
    (SELECT s."heuristic_value" FROM "attempt_heuristics" AS s
     WHERE s."heuristic_type" = 'section' AND s."attempt" = fa."id" AND s."attempted_at" = fa."attempted_at"
     LIMIT 1) AS "section"
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
