-- Every attempt records the exit it left from: `direct` (the worker's own address) or a proxied tier of PROXY_TIERS.
-- The learned selection scores (fetcher, tier) arms: the rollups and the heuristics' copy of the fetcher carry the
-- arm key, attempt_arm(fetcher, exit_tier): the fetcher alone for `direct` (so every attempt logged before tiers
-- existed is evidence for its direct arm, and nothing is rebuilt), `fetcher@tier` otherwise. fetcher_attempts.fetcher
-- stays the fetcher. fetcher_attempts is partitioned by range: a column added to the parent reaches every partition,
-- and the partitions attempt_log_ensure_partitions creates later (LIKE the parent) have it too.
ALTER TABLE "fetcher_attempts" ADD COLUMN "exit_tier" TEXT NOT NULL DEFAULT 'direct';

CREATE FUNCTION "attempt_arm"("fetcher" TEXT, "exit_tier" TEXT) RETURNS TEXT
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN "exit_tier" IS NULL OR "exit_tier" = 'direct' THEN "fetcher" ELSE "fetcher" || '@' || "exit_tier" END
$$;

-- The functions that read an attempt's fetcher for the rollups or the heuristics' copy now read its arm; their bodies
-- are otherwise as migrations 20261124000100 and 20261128000100 left them.
CREATE OR REPLACE FUNCTION rollup_refresh_attempts(ids bigint[])
 RETURNS void
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_custom_plan'
AS $function$
DECLARE
  "changes" JSONB;
  "moved_ids" BIGINT[];
BEGIN
  WITH "cur" AS (
    SELECT fa."id", "attempt_arm"(fa."fetcher", fa."exit_tier") AS "fetcher", fa."success", fa."attempted_at", fa."rollup_keys" AS "old_keys", "rollup_keys_of"(fa."id") AS "new_keys"
    FROM "fetcher_attempts" AS fa
    WHERE fa."id" = ANY("ids")
    FOR UPDATE
  ), "moved" AS (
    SELECT * FROM "cur" WHERE "old_keys" IS DISTINCT FROM "new_keys"
  )
  SELECT (SELECT array_agg("id") FROM "moved"),
         (SELECT jsonb_agg(x) FROM (
            SELECT "id", "old_keys" AS "keys", "fetcher", "success", "attempted_at", -1 AS "sign" FROM "moved" WHERE "old_keys" IS NOT NULL
            UNION ALL
            SELECT "id", "new_keys", "fetcher", "success", "attempted_at", 1 FROM "moved" WHERE "new_keys" IS NOT NULL
          ) AS x)
  INTO "moved_ids", "changes";
  IF "moved_ids" IS NULL THEN
    RETURN;
  END IF;
  -- The rows are locked above, so their keys are the ones just computed.
  UPDATE "fetcher_attempts" AS fa SET "rollup_keys" = "rollup_keys_of"(fa."id") WHERE fa."id" = ANY("moved_ids");
  IF "changes" IS NOT NULL THEN
    PERFORM "rollup_apply"("changes");
  END IF;
END $function$;

CREATE OR REPLACE FUNCTION rollup_on_attempts_delete()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
  "changes" JSONB;
BEGIN
  SELECT jsonb_agg(jsonb_build_object('id', o."id", 'keys', o."rollup_keys", 'fetcher', "attempt_arm"(o."fetcher", o."exit_tier"), 'success', o."success", 'attempted_at', o."attempted_at", 'sign', -1))
  INTO "changes" FROM "old_rows" AS o WHERE o."rollup_keys" IS NOT NULL;
  IF "changes" IS NOT NULL THEN
    PERFORM "rollup_apply"("changes");
  END IF;
  RETURN NULL;
END $function$;

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
    WHERE (o."error_type" = 'rate_limited') IS DISTINCT FROM (n."error_type" = 'rate_limited'));
  IF cardinality("retyped") > 0 THEN
    PERFORM "rollup_refresh_attempts"("retyped");
  END IF;
  RETURN NULL;
END $function$;

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
  WHERE fa."id" = k."attempt" AND fa."error_type" IS DISTINCT FROM 'rate_limited' AND fa."rollup_keys" IS DISTINCT FROM k."keys";
  UPDATE "fetcher_attempts" SET "rollup_keys" = NULL WHERE "error_type" = 'rate_limited' AND "rollup_keys" IS NOT NULL;
  TRUNCATE "heuristic_rollups";
  INSERT INTO "heuristic_rollups" ("subset_key", "fetcher", "shard", "attempts", "success_weight", "max_attempted_at")
  SELECT s."subset_key", "attempt_arm"(fa."fetcher", fa."exit_tier"), (fa."id" % 16)::smallint, count(*), sum("rollup_weight"(fa."success", fa."attempted_at")), max(fa."attempted_at")
  FROM "fetcher_attempts" AS fa
  CROSS JOIN LATERAL (
    SELECT string_agg(u."k", chr(30) ORDER BY u."i") AS "subset_key"
    FROM generate_series(1, (1 << cardinality(fa."rollup_keys")) - 1) AS m("mask")
    JOIN unnest(fa."rollup_keys") WITH ORDINALITY AS u("k", "i") ON (m."mask" >> (u."i"::int - 1)) & 1 = 1
    GROUP BY m."mask"
  ) AS s
  WHERE cardinality(fa."rollup_keys") BETWEEN 1 AND 16
  GROUP BY s."subset_key", "attempt_arm"(fa."fetcher", fa."exit_tier"), (fa."id" % 16)::smallint;
END $function$;

CREATE OR REPLACE FUNCTION attempt_log_drop_partition(p_partition text, OUT attempts bigint, OUT heuristics bigint)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
DECLARE
  "lo" TIMESTAMPTZ;
  "hi" TIMESTAMPTZ;
  "heur" TEXT;
BEGIN
  SELECT p."range_from", p."range_to" INTO "lo", "hi" FROM "attempt_log_partitions" AS p
  WHERE p."parent" = 'fetcher_attempts' AND p."partition" = "p_partition" AND p."range_from" IS NOT NULL;
  IF "lo" IS NULL THEN
    RAISE EXCEPTION 'attempt_log_drop_partition: % is not a ranged partition of fetcher_attempts', "p_partition";
  END IF;
  SELECT p."partition" INTO "heur" FROM "attempt_log_partitions" AS p
  WHERE p."parent" = 'attempt_heuristics' AND p."range_from" = "lo" AND p."range_to" = "hi";
  -- No writes to the partition while its rows leave the rollups (readers may go on: SHARE conflicts with writers only, so
  -- a reader holding the parent never waits on this lock while this waits on the parent for DETACH).
  EXECUTE format('LOCK TABLE %I IN SHARE MODE', "p_partition");
  IF "heur" IS NOT NULL THEN
    EXECUTE format('LOCK TABLE %I IN SHARE MODE', "heur");
  END IF;
  EXECUTE format($q$
    INSERT INTO "heuristic_rollups" AS r ("subset_key", "fetcher", "shard", "attempts", "success_weight", "max_attempted_at")
    SELECT s."subset_key", "attempt_arm"(fa."fetcher", fa."exit_tier"), (fa."id" %% 16)::smallint, -count(*), -sum("rollup_weight"(fa."success", fa."attempted_at")), NULL
    FROM %I AS fa
    CROSS JOIN LATERAL (
      SELECT string_agg(u."k", chr(30) ORDER BY u."i") AS "subset_key"
      FROM generate_series(1, (1 << cardinality(fa."rollup_keys")) - 1) AS m("mask")
      JOIN unnest(fa."rollup_keys") WITH ORDINALITY AS u("k", "i") ON (m."mask" >> (u."i"::int - 1)) & 1 = 1
      GROUP BY m."mask"
    ) AS s
    WHERE cardinality(fa."rollup_keys") BETWEEN 1 AND 16
    GROUP BY 1, 2, 3
    ORDER BY 1, 2, 3
    ON CONFLICT ("subset_key", "fetcher", "shard") DO UPDATE SET
      "attempts" = r."attempts" + EXCLUDED."attempts",
      "success_weight" = CASE WHEN r."attempts" + EXCLUDED."attempts" = 0 THEN 0 ELSE r."success_weight" + EXCLUDED."success_weight" END$q$, "p_partition");
  EXECUTE format('SELECT count(*) FROM %I', "p_partition") INTO "attempts";
  "heuristics" := 0;
  IF "heur" IS NOT NULL THEN
    EXECUTE format('SELECT count(*) FROM %I', "heur") INTO "heuristics";
    EXECUTE format('ALTER TABLE "attempt_heuristics" DETACH PARTITION %I', "heur");
    EXECUTE format('DROP TABLE %I', "heur");
  END IF;
  EXECUTE format('ALTER TABLE "fetcher_attempts" DETACH PARTITION %I', "p_partition");
  EXECUTE format('DROP TABLE %I', "p_partition");
END $function$;

CREATE OR REPLACE FUNCTION attempt_heuristics_copy_attempt()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  SELECT "attempt_arm"(fa."fetcher", fa."exit_tier"), fa."success"
    INTO NEW."fetcher", NEW."success"
    FROM "fetcher_attempts" AS fa WHERE fa."id" = NEW."attempt" AND fa."attempted_at" = NEW."attempted_at";
  RETURN NEW;
END $function$;

CREATE OR REPLACE FUNCTION fetcher_attempts_propagate()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  UPDATE "attempt_heuristics" AS ah
  SET "fetcher" = "attempt_arm"(n."fetcher", n."exit_tier"), "success" = n."success"
  FROM "new_rows" AS n
  WHERE ah."attempt" = n."id" AND ah."attempted_at" = n."attempted_at"
    AND (ah."fetcher", ah."success") IS DISTINCT FROM ("attempt_arm"(n."fetcher", n."exit_tier"), n."success");
  RETURN NULL;
END $function$;
