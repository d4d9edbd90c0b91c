-- idx_heur_type_value, the documents' (heuristic_type, heuristic_value) index, gains the attempt id as a third key.
--
-- Why: the router reads a domain's latest attempts ("WHERE heuristic_type = 'domain' AND heuristic_value = $1
-- ORDER BY attempt DESC LIMIT 200", DomainStateStore) on every decision it does not take from its cache. With
-- statistics that lag the table (a new deployment, autovacuum off or behind), the planner took the narrow two-column
-- index and sorted every attempt the domain ever had: 15k rows and 11 ms per decision after a 4k-page crawl, growing
-- with the domain. Ordered by attempt within (type, value), the index answers the query in index order whichever
-- index the planner picks, and stops after the window. Lookups by (type, value) use it as before.
DROP INDEX "idx_heur_type_value";

CREATE INDEX "idx_heur_type_value" ON "attempt_heuristics"("heuristic_type", "heuristic_value", "attempt");
