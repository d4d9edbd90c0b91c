-- A refused certificate (error_type 'tls_error': expired, another host's, an unknown CA) is refused to every tool, the
-- browsers included: like a rate limit it says nothing about which fetcher suits the site. Its attempts stay in the
-- log (the link's attempt, analytics) but leave the rollups and findBestFetcher's exact scan, so a site whose
-- certificate lapsed for a day does not drag plain HTTP's score down for weeks after it is renewed.
-- The functions below are their latest versions with 'tls_error' beside 'rate_limited'.

-- The keys of one attempt that count in rollups; NULL for an attempt that is no evidence, as for one without keys.
CREATE OR REPLACE FUNCTION "rollup_keys_of"("attempt_id" BIGINT) RETURNS TEXT[]
LANGUAGE sql STABLE AS $$
  SELECT array_agg(DISTINCT ah."heuristic_type" || chr(31) || ah."heuristic_value" COLLATE "C" ORDER BY ah."heuristic_type" || chr(31) || ah."heuristic_value" COLLATE "C")
  FROM "attempt_heuristics" AS ah
  JOIN "heuristic_rollup_types" AS rt ON rt."heuristic_type" = ah."heuristic_type"
  WHERE ah."attempt" = "attempt_id" AND strpos(ah."heuristic_type" || ah."heuristic_value", chr(30)) = 0
    AND strpos(ah."heuristic_type" || ah."heuristic_value", chr(31)) = 0
    AND NOT EXISTS (SELECT 1 FROM "fetcher_attempts" AS fa WHERE fa."id" = "attempt_id" AND fa."error_type" IN ('rate_limited', 'tls_error'))
$$;

-- As before; an attempt whose error type moves in or out of the no-evidence codes is refreshed.
CREATE OR REPLACE FUNCTION rollup_on_attempts_update()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
  "changes" JSONB;
  "retyped" BIGINT[];
BEGIN
  SELECT jsonb_agg(x) INTO "changes" FROM (
    SELECT o."id", o."rollup_keys" AS "keys", "attempt_arm"(o."fetcher", o."exit_tier") AS "fetcher", o."success", o."attempted_at", -1 AS "sign"
    FROM "old_rows" AS o JOIN "new_rows" AS n ON n."id" = o."id"
    WHERE o."rollup_keys" IS NOT NULL AND n."rollup_keys" IS NOT DISTINCT FROM o."rollup_keys"
      AND ("attempt_arm"(o."fetcher", o."exit_tier"), o."success", o."attempted_at") IS DISTINCT FROM ("attempt_arm"(n."fetcher", n."exit_tier"), n."success", n."attempted_at")
    UNION ALL
    SELECT n."id", n."rollup_keys", "attempt_arm"(n."fetcher", n."exit_tier"), n."success", n."attempted_at", 1
    FROM "old_rows" AS o JOIN "new_rows" AS n ON n."id" = o."id"
    WHERE o."rollup_keys" IS NOT NULL AND n."rollup_keys" IS NOT DISTINCT FROM o."rollup_keys"
      AND ("attempt_arm"(o."fetcher", o."exit_tier"), o."success", o."attempted_at") IS DISTINCT FROM ("attempt_arm"(n."fetcher", n."exit_tier"), n."success", n."attempted_at")
  ) AS x;
  IF "changes" IS NOT NULL THEN
    PERFORM "rollup_apply"("changes");
  END IF;
  -- Only when there is something to move: the refresh updates fetcher_attempts, and a statement trigger fires even
  -- for an update of no rows, so an unconditional call would recurse.
  "retyped" := ARRAY(
    SELECT n."id" FROM "old_rows" AS o JOIN "new_rows" AS n ON n."id" = o."id"
    WHERE coalesce(o."error_type" IN ('rate_limited', 'tls_error'), false) IS DISTINCT FROM coalesce(n."error_type" IN ('rate_limited', 'tls_error'), false));
  IF cardinality("retyped") > 0 THEN
    PERFORM "rollup_refresh_attempts"("retyped");
  END IF;
  RETURN NULL;
END $function$;

-- As before, without the no-evidence attempts.
CREATE OR REPLACE FUNCTION rollup_rebuild()
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  UPDATE "fetcher_attempts" AS fa SET "rollup_keys" = k."keys"
  FROM (
    SELECT ah."attempt", array_agg(DISTINCT ah."heuristic_type" || chr(31) || ah."heuristic_value" COLLATE "C" ORDER BY ah."heuristic_type" || chr(31) || ah."heuristic_value" COLLATE "C") AS "keys"
    FROM "attempt_heuristics" AS ah JOIN "heuristic_rollup_types" AS rt ON rt."heuristic_type" = ah."heuristic_type"
    WHERE strpos(ah."heuristic_type" || ah."heuristic_value", chr(30)) = 0 AND strpos(ah."heuristic_type" || ah."heuristic_value", chr(31)) = 0
    GROUP BY ah."attempt"
  ) AS k
  WHERE fa."id" = k."attempt" AND coalesce(fa."error_type" NOT IN ('rate_limited', 'tls_error'), true) AND fa."rollup_keys" IS DISTINCT FROM k."keys";
  UPDATE "fetcher_attempts" SET "rollup_keys" = NULL WHERE "error_type" IN ('rate_limited', 'tls_error') AND "rollup_keys" IS NOT NULL;
  TRUNCATE "heuristic_rollups";
  INSERT INTO "heuristic_rollups" ("subset_key", "fetcher", "shard", "attempts", "success_weight", "max_attempted_at")
  SELECT s."subset_key", "attempt_arm"(fa."fetcher", fa."exit_tier"), (fa."id" % 16)::smallint, count(*), sum("rollup_weight"(fa."success", fa."attempted_at")), max(fa."attempted_at")
  FROM "fetcher_attempts" AS fa
  CROSS JOIN LATERAL "rollup_subsets"(fa."rollup_keys") AS s("subset_key")
  WHERE cardinality(fa."rollup_keys") BETWEEN 1 AND 16
  GROUP BY s."subset_key", "attempt_arm"(fa."fetcher", fa."exit_tier"), (fa."id" % 16)::smallint;
END $function$;

-- The exact scan's anti-join reads the no-evidence attempts from a partial index holding exactly them.
DROP INDEX IF EXISTS "idx_attempts_rate_limited";
CREATE INDEX "idx_attempts_not_evidence" ON "fetcher_attempts"("id") WHERE "error_type" IN ('rate_limited', 'tls_error');

-- Refused-certificate attempts already rolled up leave the rollups.
SELECT "rollup_refresh_attempts"(ARRAY(SELECT "id" FROM "fetcher_attempts" WHERE "error_type" = 'tls_error' AND "rollup_keys" IS NOT NULL));
