-- Exact pre-aggregation for findBestFetcher (document 001 semantics kept: DISTINCT attempts matching ANY pair).
-- For every attempt, let K(a) be its keys 'type=value' whose type is listed in heuristic_rollup_types (the URL
-- heuristics the router queries with). heuristic_rollups holds, for every non-empty subset S of K(a) and the
-- attempt's fetcher, the number of attempts containing S and Σ success·2^((attempted_at − 2020-01-01)/30 days).
-- A query Q (all types listed) is then answered by inclusion–exclusion over the 2^|Q|−1 subsets of Q:
--   |∪ P_q| = Σ_{∅≠S⊆Q} (−1)^{|S|+1} |∩_{q∈S} P_q|
-- and the decay factorises: 0.5^((now−t)/30d) = 2^((t−E)/30d) · 2^(−(now−E)/30d). Cost: 2^|Q|−1 index probes,
-- whatever the number of matching attempts. Triggers keep it exact for every writer, insert, update and delete.

-- CreateTable
CREATE TABLE "heuristic_rollup_types" (
    "heuristic_type" TEXT NOT NULL,

    CONSTRAINT "heuristic_rollup_types_pkey" PRIMARY KEY ("heuristic_type")
);

-- CreateTable
CREATE TABLE "heuristic_rollups" (
    "subset_key" TEXT NOT NULL,
    "fetcher" TEXT NOT NULL,
    "attempts" BIGINT NOT NULL DEFAULT 0,
    "success_weight" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "max_attempted_at" TIMESTAMPTZ(3),

    CONSTRAINT "heuristic_rollups_pkey" PRIMARY KEY ("subset_key","fetcher")
);

-- AlterTable
ALTER TABLE "fetcher_attempts" ADD COLUMN     "rollup_keys" TEXT[];

-- core's URL heuristics (packages/core/src/url/url-heuristics.ts). A new URL heuristic type works without this
-- row (queries that contain it take the exact scan); inserting a row for it is data, not a migration.
INSERT INTO "heuristic_rollup_types" ("heuristic_type") VALUES
    ('domain'), ('suffix'), ('path_depth'), ('contains_cdn'), ('contains_static'), ('contains_assets'),
    ('contains_api'), ('deep_path'), ('complex_query'), ('video_platform');

-- 2^((t − 2020-01-01) / 30 days); stays finite in float8 until about 2100.
CREATE FUNCTION "rollup_weight"("success" BOOLEAN, "attempted_at" TIMESTAMPTZ) RETURNS DOUBLE PRECISION
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN "success" THEN exp((date_part('epoch', "attempted_at") - 1577836800) * (ln(2::float8) / 2592000)) ELSE 0 END
$$;

-- The keys (byte order) of one attempt that count in rollups ('type' || U+001F || 'value'), NULL when none.
CREATE FUNCTION "rollup_keys_of"("attempt_id" BIGINT) RETURNS TEXT[]
LANGUAGE sql STABLE AS $$
  SELECT array_agg(DISTINCT ah."heuristic_type" || chr(31) || ah."heuristic_value" COLLATE "C" ORDER BY ah."heuristic_type" || chr(31) || ah."heuristic_value" COLLATE "C")
  FROM "attempt_heuristics" AS ah
  JOIN "heuristic_rollup_types" AS rt ON rt."heuristic_type" = ah."heuristic_type"
  WHERE ah."attempt" = "attempt_id" AND strpos(ah."heuristic_type" || ah."heuristic_value", chr(30)) = 0
    AND strpos(ah."heuristic_type" || ah."heuristic_value", chr(31)) = 0
$$;

-- Add (sign = 1) or remove (sign = −1) contributions: rows of (keys, fetcher, success, attempted_at, sign).
CREATE FUNCTION "rollup_apply"("changes" JSONB) RETURNS VOID
LANGUAGE sql AS $$
  INSERT INTO "heuristic_rollups" AS r ("subset_key", "fetcher", "attempts", "success_weight", "max_attempted_at")
  SELECT s."subset_key", c."fetcher", sum(c."sign"), sum(c."sign" * "rollup_weight"(c."success", c."attempted_at")),
         max(c."attempted_at") FILTER (WHERE c."sign" > 0)
  FROM jsonb_to_recordset("changes") AS c("keys" TEXT[], "fetcher" TEXT, "success" BOOLEAN, "attempted_at" TIMESTAMPTZ, "sign" INT)
  CROSS JOIN LATERAL (
    SELECT string_agg(u."k", chr(30) ORDER BY u."i") AS "subset_key"
    FROM generate_series(1, (1 << cardinality(c."keys")) - 1) AS m("mask")
    JOIN unnest(c."keys") WITH ORDINALITY AS u("k", "i") ON (m."mask" >> (u."i"::int - 1)) & 1 = 1
    GROUP BY m."mask"
  ) AS s
  WHERE cardinality(c."keys") BETWEEN 1 AND 16
  GROUP BY s."subset_key", c."fetcher"
  -- A fixed order, so concurrent writers lock shared rollup rows in the same order and never deadlock.
  ORDER BY s."subset_key", c."fetcher"
  ON CONFLICT ("subset_key", "fetcher") DO UPDATE SET
    "attempts" = r."attempts" + EXCLUDED."attempts",
    "success_weight" = CASE WHEN r."attempts" + EXCLUDED."attempts" = 0 THEN 0 ELSE r."success_weight" + EXCLUDED."success_weight" END,
    "max_attempted_at" = greatest(r."max_attempted_at", EXCLUDED."max_attempted_at")
$$;

-- Recompute K(a) for the given attempts and move their contributions from the old key set to the new one.
CREATE FUNCTION "rollup_refresh_attempts"("ids" BIGINT[]) RETURNS VOID
LANGUAGE plpgsql AS $$
DECLARE
  "changes" JSONB;
BEGIN
  WITH "cur" AS (
    SELECT fa."id", fa."fetcher", fa."success", fa."attempted_at", fa."rollup_keys" AS "old_keys", "rollup_keys_of"(fa."id") AS "new_keys"
    FROM "fetcher_attempts" AS fa
    WHERE fa."id" = ANY("ids")
    FOR UPDATE
  ), "moved" AS (
    SELECT * FROM "cur" WHERE "old_keys" IS DISTINCT FROM "new_keys"
  ), "upd" AS (
    UPDATE "fetcher_attempts" AS fa SET "rollup_keys" = m."new_keys" FROM "moved" AS m WHERE fa."id" = m."id"
  )
  SELECT jsonb_agg(x) INTO "changes" FROM (
    SELECT "old_keys" AS "keys", "fetcher", "success", "attempted_at", -1 AS "sign" FROM "moved" WHERE "old_keys" IS NOT NULL
    UNION ALL
    SELECT "new_keys", "fetcher", "success", "attempted_at", 1 FROM "moved" WHERE "new_keys" IS NOT NULL
  ) AS x;
  IF "changes" IS NOT NULL THEN
    PERFORM "rollup_apply"("changes");
  END IF;
END $$;

CREATE FUNCTION "rollup_on_heuristics_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "rollup_refresh_attempts"(ARRAY(
    SELECT DISTINCT n."attempt" FROM "new_rows" AS n JOIN "heuristic_rollup_types" AS rt ON rt."heuristic_type" = n."heuristic_type"));
  RETURN NULL;
END $$;

CREATE FUNCTION "rollup_on_heuristics_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "rollup_refresh_attempts"(ARRAY(
    SELECT DISTINCT o."attempt" FROM "old_rows" AS o JOIN "heuristic_rollup_types" AS rt ON rt."heuristic_type" = o."heuristic_type"));
  RETURN NULL;
END $$;

CREATE FUNCTION "rollup_on_heuristics_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "rollup_refresh_attempts"(ARRAY(
    SELECT o."attempt" FROM "old_rows" AS o UNION SELECT n."attempt" FROM "new_rows" AS n));
  RETURN NULL;
END $$;

CREATE FUNCTION "rollup_on_attempts_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  "changes" JSONB;
BEGIN
  SELECT jsonb_agg(jsonb_build_object('keys', o."rollup_keys", 'fetcher', o."fetcher", 'success', o."success", 'attempted_at', o."attempted_at", 'sign', -1))
  INTO "changes" FROM "old_rows" AS o WHERE o."rollup_keys" IS NOT NULL;
  IF "changes" IS NOT NULL THEN
    PERFORM "rollup_apply"("changes");
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION "rollup_on_attempts_update"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  "changes" JSONB;
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
  RETURN NULL;
END $$;

CREATE TRIGGER "rollup_heuristics_insert" AFTER INSERT ON "attempt_heuristics"
REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "rollup_on_heuristics_insert"();
CREATE TRIGGER "rollup_heuristics_delete" AFTER DELETE ON "attempt_heuristics"
REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "rollup_on_heuristics_delete"();
CREATE TRIGGER "rollup_heuristics_update" AFTER UPDATE ON "attempt_heuristics"
REFERENCING OLD TABLE AS "old_rows" NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "rollup_on_heuristics_update"();
CREATE TRIGGER "rollup_attempts_delete" AFTER DELETE ON "fetcher_attempts"
REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "rollup_on_attempts_delete"();
CREATE TRIGGER "rollup_attempts_update" AFTER UPDATE ON "fetcher_attempts"
REFERENCING OLD TABLE AS "old_rows" NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "rollup_on_attempts_update"();

-- Backfill what exists (the seed priors), and give bulk loaders a way to rebuild after loading with triggers off.
CREATE FUNCTION "rollup_rebuild"() RETURNS VOID LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "fetcher_attempts" AS fa SET "rollup_keys" = k."keys"
  FROM (
    SELECT ah."attempt", array_agg(DISTINCT ah."heuristic_type" || chr(31) || ah."heuristic_value" COLLATE "C" ORDER BY ah."heuristic_type" || chr(31) || ah."heuristic_value" COLLATE "C") AS "keys"
    FROM "attempt_heuristics" AS ah JOIN "heuristic_rollup_types" AS rt ON rt."heuristic_type" = ah."heuristic_type"
    WHERE strpos(ah."heuristic_type" || ah."heuristic_value", chr(30)) = 0 AND strpos(ah."heuristic_type" || ah."heuristic_value", chr(31)) = 0
    GROUP BY ah."attempt"
  ) AS k
  WHERE fa."id" = k."attempt" AND fa."rollup_keys" IS DISTINCT FROM k."keys";
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

SELECT "rollup_rebuild"();
