-- A rate-limited attempt (error_type 'rate_limited': a 429, or a 503 with Retry-After) says the site wants fewer
-- requests, not that the fetcher is the wrong tool: any fetcher would have been told the same. It stays in
-- fetcher_attempts and attempt_heuristics (is_banned, ban rate, the domain's state, analytics) but is no evidence in
-- findBestFetcher: the rollups leave it out (its rollup_keys are NULL) and the exact scan skips it through a partial
-- index that holds only such attempts (small: a hashed anti-join, no probe per matched row).

-- CreateIndex
CREATE INDEX "idx_attempts_rate_limited" ON "fetcher_attempts"("id") WHERE "error_type" = 'rate_limited';

-- The keys of one attempt that count in rollups; NULL for a rate-limited attempt, as for one without keys.
CREATE OR REPLACE FUNCTION "rollup_keys_of"("attempt_id" BIGINT) RETURNS TEXT[]
LANGUAGE sql STABLE AS $$
  SELECT array_agg(DISTINCT ah."heuristic_type" || chr(31) || ah."heuristic_value" COLLATE "C" ORDER BY ah."heuristic_type" || chr(31) || ah."heuristic_value" COLLATE "C")
  FROM "attempt_heuristics" AS ah
  JOIN "heuristic_rollup_types" AS rt ON rt."heuristic_type" = ah."heuristic_type"
  WHERE ah."attempt" = "attempt_id" AND strpos(ah."heuristic_type" || ah."heuristic_value", chr(30)) = 0
    AND strpos(ah."heuristic_type" || ah."heuristic_value", chr(31)) = 0
    AND NOT EXISTS (SELECT 1 FROM "fetcher_attempts" AS fa WHERE fa."id" = "attempt_id" AND fa."error_type" = 'rate_limited')
$$;

-- As before, plus: an attempt whose error_type changes is refreshed, so it leaves (or joins) the rollups when it
-- becomes (or stops being) rate-limited.
CREATE OR REPLACE FUNCTION "rollup_on_attempts_update"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  "changes" JSONB;
  "retyped" BIGINT[];
BEGIN
  SELECT jsonb_agg(x) INTO "changes" FROM (
    SELECT o."rollup_keys" AS "keys", o."fetcher", o."success", o."attempted_at", -1 AS "sign"
    FROM "old_rows" AS o JOIN "new_rows" AS n ON n."id" = o."id"
    WHERE o."rollup_keys" IS NOT NULL AND n."rollup_keys" IS NOT DISTINCT FROM o."rollup_keys"
      AND (o."fetcher", o."success", o."attempted_at") IS DISTINCT FROM (n."fetcher", n."success", n."attempted_at")
    UNION ALL
    SELECT n."rollup_keys", n."fetcher", n."success", n."attempted_at", 1
    FROM "old_rows" AS o JOIN "new_rows" AS n ON n."id" = o."id"
    WHERE o."rollup_keys" IS NOT NULL AND n."rollup_keys" IS NOT DISTINCT FROM o."rollup_keys"
      AND (o."fetcher", o."success", o."attempted_at") IS DISTINCT FROM (n."fetcher", n."success", n."attempted_at")
  ) AS x;
  IF "changes" IS NOT NULL THEN
    PERFORM "rollup_apply"("changes");
  END IF;
  -- Only when there is something to move: the refresh updates fetcher_attempts, and a statement trigger fires even
  -- for an update of no rows, so an unconditional call would recurse.
  "retyped" := ARRAY(
    SELECT n."id" FROM "old_rows" AS o JOIN "new_rows" AS n ON n."id" = o."id"
    WHERE (o."error_type" = 'rate_limited') IS DISTINCT FROM (n."error_type" = 'rate_limited'));
  IF cardinality("retyped") > 0 THEN
    PERFORM "rollup_refresh_attempts"("retyped");
  END IF;
  RETURN NULL;
END $$;

-- As before, without rate-limited attempts.
CREATE OR REPLACE FUNCTION "rollup_rebuild"() RETURNS VOID LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "fetcher_attempts" AS fa SET "rollup_keys" = k."keys"
  FROM (
    SELECT ah."attempt", array_agg(DISTINCT ah."heuristic_type" || chr(31) || ah."heuristic_value" COLLATE "C" ORDER BY ah."heuristic_type" || chr(31) || ah."heuristic_value" COLLATE "C") AS "keys"
    FROM "attempt_heuristics" AS ah JOIN "heuristic_rollup_types" AS rt ON rt."heuristic_type" = ah."heuristic_type"
    WHERE strpos(ah."heuristic_type" || ah."heuristic_value", chr(30)) = 0 AND strpos(ah."heuristic_type" || ah."heuristic_value", chr(31)) = 0
    GROUP BY ah."attempt"
  ) AS k
  WHERE fa."id" = k."attempt" AND fa."error_type" IS DISTINCT FROM 'rate_limited' AND fa."rollup_keys" IS DISTINCT FROM k."keys";
  UPDATE "fetcher_attempts" SET "rollup_keys" = NULL WHERE "error_type" = 'rate_limited' AND "rollup_keys" IS NOT NULL;
  TRUNCATE "heuristic_rollups";
  INSERT INTO "heuristic_rollups" ("subset_key", "fetcher", "attempts", "success_weight", "max_attempted_at")
  SELECT s."subset_key", fa."fetcher", count(*), sum("rollup_weight"(fa."success", fa."attempted_at")), max(fa."attempted_at")
  FROM "fetcher_attempts" AS fa
  CROSS JOIN LATERAL (
    SELECT string_agg(u."k", chr(30) ORDER BY u."i") AS "subset_key"
    FROM generate_series(1, (1 << cardinality(fa."rollup_keys")) - 1) AS m("mask")
    JOIN unnest(fa."rollup_keys") WITH ORDINALITY AS u("k", "i") ON (m."mask" >> (u."i"::int - 1)) & 1 = 1
    GROUP BY m."mask"
  ) AS s
  WHERE cardinality(fa."rollup_keys") BETWEEN 1 AND 16
  GROUP BY s."subset_key", fa."fetcher";
END $$;

-- Attempts already recorded as rate-limited leave the rollups.
SELECT "rollup_refresh_attempts"(ARRAY(SELECT "id" FROM "fetcher_attempts" WHERE "error_type" = 'rate_limited'));
