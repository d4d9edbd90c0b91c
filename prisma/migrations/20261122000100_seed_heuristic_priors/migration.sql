-- Seed priors (documents' "Seed Data"; seeds README point 2): each prior is 10 successful synthetic simple_http
-- attempts, so it clears the minimum sample of 5 and the 0.6 threshold while fresh, then decays from now() like
-- any other evidence. link is NULL: no page was fetched.
WITH "priors" ("url", "heuristic_type", "heuristic_value", "importance_score") AS (
    VALUES
        ('seed:.pdf', 'suffix', '.pdf', 0.95::DOUBLE PRECISION),
        ('seed:.mp4', 'suffix', '.mp4', 0.95::DOUBLE PRECISION),
        ('seed:/cdn/', 'contains_cdn', 'true', 0.85::DOUBLE PRECISION)
),
"inserted" AS (
    INSERT INTO "fetcher_attempts" ("link", "url", "fetcher", "success", "is_banned", "attempted_at", "selection_source")
    SELECT NULL, "priors"."url", 'simple_http', true, false, now(), 'prior'
    FROM "priors" CROSS JOIN generate_series(1, 10)
    RETURNING "id", "url"
)
INSERT INTO "attempt_heuristics" ("attempt", "heuristic_type", "heuristic_value", "importance_score", "created_at")
SELECT "inserted"."id", "priors"."heuristic_type", "priors"."heuristic_value", "priors"."importance_score", now()
FROM "inserted" JOIN "priors" ON "priors"."url" = "inserted"."url";
