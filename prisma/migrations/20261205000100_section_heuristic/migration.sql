-- The `section` URL heuristic (core url-heuristics: the domain and the first path segment, "example.com/blog"). The
-- router scores a section's attempts by themselves once it has enough (core scopeLearned), through the rollups: the
-- section's singleton subset is one more primary-key probe in findBestFetcher's statement. Attempts logged before this
-- migration have no section; their sections start with no evidence of their own and are judged by the domain, as before.
INSERT INTO "heuristic_rollup_types" ("heuristic_type") VALUES ('section') ON CONFLICT DO NOTHING;

-- The router's domain-state read also returns each attempt's URL, so the router can read a section's own recent
-- attempts out of the domain's (the URL is on the row the primary-key probe already reads). Otherwise unchanged
-- (20261129200000).
DROP FUNCTION IF EXISTS "domain_recent_attempts"(TEXT, INTEGER);
CREATE FUNCTION "domain_recent_attempts"("p_domain" TEXT, "p_limit" INTEGER)
RETURNS TABLE("fetcher" TEXT, "success" BOOLEAN, "is_banned" BOOLEAN, "error_type" TEXT, "selection_source" TEXT, "attempted_at" TIMESTAMPTZ, "url" TEXT)
LANGUAGE plpgsql STABLE
SET "enable_sort" = off
SET "enable_bitmapscan" = off
AS $fn$
BEGIN
  RETURN QUERY
  SELECT fa."fetcher", fa."success", fa."is_banned", fa."error_type", fa."selection_source", fa."attempted_at"::timestamptz, fa."url"
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
