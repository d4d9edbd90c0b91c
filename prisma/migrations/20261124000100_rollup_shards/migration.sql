-- Rollup rows split into shards, and no empty refresh.
--
-- Every outcome write is its own statement, so every page updates the rollup rows of its attempt's key subsets
-- (heuristic_rollups) and holds their row locks until it commits. Subsets shared by every page of a crawl
-- ('path_depth=2', 'suffix=.html', a domain's own rows) made concurrent fetch workers queue behind each other's
-- commits: sampled on 32 workers over 50 hosts, as many backends waited on those row locks (Lock:transactionid) as
-- ran on the CPU. An attempt's contribution now goes to shard (id % 16) of each of its subset rows, so concurrent
-- writers of different attempts rarely share a row. Readers sum over the shards, as they already sum over rows
-- (findBestFetcher GROUP BY fetcher), so answers are unchanged. Add and remove of one attempt hit the same shard,
-- so a shard row's count is still the number of its attempts and the zero-count reset of its weight stays exact.
--
-- rollup_refresh_attempts plans its statements on every call (plan_cache_mode = force_custom_plan): PL/pgSQL keeps a
-- generic plan per connection, and a pooled connection that first ran it while fetcher_attempts was small kept a
-- sequential scan of the whole table for `id = ANY(ids)` (seen in auto_explain: 24 ms for one attempt at 3 000 rows;
-- at a fleet's millions of attempts, seconds per page). Postgres run without autovacuum, as here, never re-plans it.
-- It also no longer runs an UPDATE when no attempt's keys moved: an UPDATE of no rows still fired
-- the statement trigger on fetcher_attempts, once per page for nothing.
--
-- Writers that insert new attempts with their rollup keys already computed and added to the rollups (the attempt
-- log and the outcome statement, @crawler/db ATTEMPT_CTES) name those attempts in the transaction-local setting
-- crawler.rollup_keyed; the next heuristics-insert trigger (their own statement's) leaves them out of its refresh
-- and clears the setting. Any other attempt, and any later insert, is refreshed as before.

ALTER TABLE "heuristic_rollups" ADD COLUMN "shard" SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE "heuristic_rollups" DROP CONSTRAINT "heuristic_rollups_pkey";
ALTER TABLE "heuristic_rollups" ADD CONSTRAINT "heuristic_rollups_pkey" PRIMARY KEY ("subset_key", "fetcher", "shard");

-- Rows of (id, keys, fetcher, success, attempted_at, sign); shard = id % 16.
CREATE OR REPLACE FUNCTION "rollup_apply"("changes" JSONB) RETURNS VOID
LANGUAGE sql AS $$
  INSERT INTO "heuristic_rollups" AS r ("subset_key", "fetcher", "shard", "attempts", "success_weight", "max_attempted_at")
  SELECT s."subset_key", c."fetcher", (c."id" % 16)::smallint, sum(c."sign"), sum(c."sign" * "rollup_weight"(c."success", c."attempted_at")),
         max(c."attempted_at") FILTER (WHERE c."sign" > 0)
  FROM jsonb_to_recordset("changes") AS c("id" BIGINT, "keys" TEXT[], "fetcher" TEXT, "success" BOOLEAN, "attempted_at" TIMESTAMPTZ, "sign" INT)
  CROSS JOIN LATERAL (
    SELECT string_agg(u."k", chr(30) ORDER BY u."i") AS "subset_key"
    FROM generate_series(1, (1 << cardinality(c."keys")) - 1) AS m("mask")
    JOIN unnest(c."keys") WITH ORDINALITY AS u("k", "i") ON (m."mask" >> (u."i"::int - 1)) & 1 = 1
    GROUP BY m."mask"
  ) AS s
  WHERE cardinality(c."keys") BETWEEN 1 AND 16
  GROUP BY s."subset_key", c."fetcher", (c."id" % 16)::smallint
  -- A fixed order, so concurrent writers lock shared rollup rows in the same order and never deadlock.
  ORDER BY s."subset_key", c."fetcher", (c."id" % 16)::smallint
  ON CONFLICT ("subset_key", "fetcher", "shard") DO UPDATE SET
    "attempts" = r."attempts" + EXCLUDED."attempts",
    "success_weight" = CASE WHEN r."attempts" + EXCLUDED."attempts" = 0 THEN 0 ELSE r."success_weight" + EXCLUDED."success_weight" END,
    "max_attempted_at" = greatest(r."max_attempted_at", EXCLUDED."max_attempted_at")
$$;

-- Recompute K(a) for the given attempts and move their contributions from the old key set to the new one; nothing
-- is written when no attempt's keys moved.
CREATE OR REPLACE FUNCTION "rollup_refresh_attempts"("ids" BIGINT[]) RETURNS VOID
LANGUAGE plpgsql SET "plan_cache_mode" = 'force_custom_plan' AS $$
DECLARE
  "changes" JSONB;
  "moved_ids" BIGINT[];
BEGIN
  WITH "cur" AS (
    SELECT fa."id", fa."fetcher", fa."success", fa."attempted_at", fa."rollup_keys" AS "old_keys", "rollup_keys_of"(fa."id") AS "new_keys"
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
END $$;

CREATE OR REPLACE FUNCTION "rollup_on_attempts_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  "changes" JSONB;
BEGIN
  SELECT jsonb_agg(jsonb_build_object('id', o."id", 'keys', o."rollup_keys", 'fetcher', o."fetcher", 'success', o."success", 'attempted_at', o."attempted_at", 'sign', -1))
  INTO "changes" FROM "old_rows" AS o WHERE o."rollup_keys" IS NOT NULL;
  IF "changes" IS NOT NULL THEN
    PERFORM "rollup_apply"("changes");
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION "rollup_on_attempts_update"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  "changes" JSONB;
  "retyped" BIGINT[];
BEGIN
  SELECT jsonb_agg(x) INTO "changes" FROM (
    SELECT o."id", o."rollup_keys" AS "keys", o."fetcher", o."success", o."attempted_at", -1 AS "sign"
    FROM "old_rows" AS o JOIN "new_rows" AS n ON n."id" = o."id"
    WHERE o."rollup_keys" IS NOT NULL AND n."rollup_keys" IS NOT DISTINCT FROM o."rollup_keys"
      AND (o."fetcher", o."success", o."attempted_at") IS DISTINCT FROM (n."fetcher", n."success", n."attempted_at")
    UNION ALL
    SELECT n."id", n."rollup_keys", n."fetcher", n."success", n."attempted_at", 1
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

-- As before, per shard.
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
  INSERT INTO "heuristic_rollups" ("subset_key", "fetcher", "shard", "attempts", "success_weight", "max_attempted_at")
  SELECT s."subset_key", fa."fetcher", (fa."id" % 16)::smallint, count(*), sum("rollup_weight"(fa."success", fa."attempted_at")), max(fa."attempted_at")
  FROM "fetcher_attempts" AS fa
  CROSS JOIN LATERAL (
    SELECT string_agg(u."k", chr(30) ORDER BY u."i") AS "subset_key"
    FROM generate_series(1, (1 << cardinality(fa."rollup_keys")) - 1) AS m("mask")
    JOIN unnest(fa."rollup_keys") WITH ORDINALITY AS u("k", "i") ON (m."mask" >> (u."i"::int - 1)) & 1 = 1
    GROUP BY m."mask"
  ) AS s
  WHERE cardinality(fa."rollup_keys") BETWEEN 1 AND 16
  GROUP BY s."subset_key", fa."fetcher", (fa."id" % 16)::smallint;
END $$;

CREATE OR REPLACE FUNCTION "rollup_on_heuristics_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  "keyed" BIGINT[] := string_to_array(nullif(current_setting('crawler.rollup_keyed', true), ''), ',')::BIGINT[];
  "ids" BIGINT[];
BEGIN
  IF "keyed" IS NOT NULL THEN
    PERFORM set_config('crawler.rollup_keyed', '', true);
  END IF;
  "ids" := ARRAY(
    SELECT DISTINCT n."attempt" FROM "new_rows" AS n JOIN "heuristic_rollup_types" AS rt ON rt."heuristic_type" = n."heuristic_type"
    WHERE "keyed" IS NULL OR n."attempt" <> ALL("keyed"));
  IF cardinality("ids") > 0 THEN
    PERFORM "rollup_refresh_attempts"("ids");
  END IF;
  RETURN NULL;
END $$;

-- The copy of the attempt's fetcher/success/attempted_at onto its heuristic rows (migration 20261122000200) ran a
-- PL/pgSQL call per heuristic row even when the writer had filled them, as the attempt log does: the conditions move
-- into WHEN clauses, which Postgres evaluates without calling the function.
DROP TRIGGER "attempt_heuristics_copy_attempt" ON "attempt_heuristics";
CREATE TRIGGER "attempt_heuristics_copy_attempt"
BEFORE INSERT ON "attempt_heuristics"
FOR EACH ROW WHEN (NEW."fetcher" IS NULL OR NEW."success" IS NULL OR NEW."attempted_at" IS NULL)
EXECUTE FUNCTION "attempt_heuristics_copy_attempt"();
CREATE TRIGGER "attempt_heuristics_copy_attempt_update"
BEFORE UPDATE ON "attempt_heuristics"
FOR EACH ROW WHEN (NEW."fetcher" IS NULL OR NEW."success" IS NULL OR NEW."attempted_at" IS NULL OR NEW."attempt" IS DISTINCT FROM OLD."attempt")
EXECUTE FUNCTION "attempt_heuristics_copy_attempt"();

-- Existing rows all sit in shard 0; later removals go to their attempt's shard, so rebuild by shard now.
SELECT "rollup_rebuild"();
