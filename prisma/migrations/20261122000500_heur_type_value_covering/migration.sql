-- idx_heur_type_value, the documents' (heuristic_type, heuristic_value) index, becomes the covering index the store
-- reads (type, value, attempt, fetcher, success, attempted_at), and idx_heur_match, which it would now duplicate,
-- goes. Every heuristic row (about ten per attempt) was written into both; the crawl bench's attempt log is the
-- largest Postgres cost per page after the page itself. Every query that used either index can use this one: lookups
-- by (type, value), the domain's latest attempts in attempt order (migration 000400), and findBestFetcher's
-- index-only exact scan.
DROP INDEX "idx_heur_match";

DROP INDEX "idx_heur_type_value";

CREATE INDEX "idx_heur_type_value" ON "attempt_heuristics"("heuristic_type", "heuristic_value", "attempt", "fetcher", "success", "attempted_at");
