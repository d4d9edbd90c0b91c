-- The attempt log partitioned by time (native range partitioning on attempted_at, one partition per UTC week by
-- default, or per day or month: attempt_log_partition_unit), so retention drops whole partitions
-- (attempt_log_drop_partition) instead of deleting rows one by one.
--
-- Partitioned tables need the partition key in every primary key and unique constraint, and a foreign key that
-- references one must name the whole key, so:
--   fetcher_attempts   PRIMARY KEY (id, attempted_at)
--   attempt_heuristics PRIMARY KEY (id, attempted_at), FOREIGN KEY (attempt, attempted_at) → fetcher_attempts
-- attempt_heuristics already carried a copy of its attempt's attempted_at (findBestFetcher's covering index): it is
-- now NOT NULL and part of the foreign key, which makes a heuristic and its attempt land in partitions of the same
-- range, so a range is dropped from both tables together without leaving a dangling reference. ids still come from
-- their sequences and stay unique in practice; Postgres no longer enforces it on its own (no unique index on id).
--
-- Existing rows are copied into the new tables (partitions created for every week that holds an attempt); nothing is
-- deleted. Rows dated outside every partition (a clock gone wrong, an import of old data) go to the DEFAULT
-- partitions and are moved into their partition when attempt_log_ensure_partitions creates it.

-- 1. Set the old tables aside, keeping their sequences.
ALTER TABLE "attempt_heuristics" DROP CONSTRAINT "attempt_heuristics_attempt_fkey";
ALTER SEQUENCE "fetcher_attempts_id_seq" OWNED BY NONE;
ALTER SEQUENCE "attempt_heuristics_id_seq" OWNED BY NONE;
ALTER TABLE "fetcher_attempts" RENAME TO "fetcher_attempts_unpartitioned";
ALTER TABLE "attempt_heuristics" RENAME TO "attempt_heuristics_unpartitioned";
ALTER TABLE "fetcher_attempts_unpartitioned" RENAME CONSTRAINT "fetcher_attempts_pkey" TO "fetcher_attempts_unpartitioned_pkey";
ALTER TABLE "fetcher_attempts_unpartitioned" RENAME CONSTRAINT "fetcher_attempts_link_fkey" TO "fetcher_attempts_unpartitioned_link_fkey";
ALTER TABLE "attempt_heuristics_unpartitioned" RENAME CONSTRAINT "attempt_heuristics_pkey" TO "attempt_heuristics_unpartitioned_pkey";
ALTER INDEX "idx_attempts_link" RENAME TO "idx_attempts_link_unpartitioned";
ALTER INDEX "idx_attempts_url" RENAME TO "idx_attempts_url_unpartitioned";
ALTER INDEX "idx_attempts_time" RENAME TO "idx_attempts_time_unpartitioned";
ALTER INDEX "idx_attempts_rate_limited" RENAME TO "idx_attempts_rate_limited_unpartitioned";
ALTER INDEX "idx_heur_type_value" RENAME TO "idx_heur_type_value_unpartitioned";
ALTER INDEX "idx_heur_attempt" RENAME TO "idx_heur_attempt_unpartitioned";

-- 2. The partitioned tables, column for column the old ones.
CREATE TABLE "fetcher_attempts" (
    "id" BIGINT NOT NULL DEFAULT nextval('fetcher_attempts_id_seq'),
    "link" UUID,
    "url" TEXT NOT NULL,
    "fetcher" TEXT NOT NULL,
    "success" BOOLEAN NOT NULL,
    "is_banned" BOOLEAN NOT NULL DEFAULT false,
    "error_type" TEXT,
    "http_status" INTEGER,
    "response_headers" JSONB,
    "duration_ms" INTEGER,
    "attempted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "selection_source" TEXT,
    "rollup_keys" TEXT[]
) PARTITION BY RANGE ("attempted_at");

CREATE TABLE "attempt_heuristics" (
    "id" BIGINT NOT NULL DEFAULT nextval('attempt_heuristics_id_seq'),
    "attempt" BIGINT NOT NULL,
    "heuristic_type" TEXT NOT NULL,
    "heuristic_value" TEXT NOT NULL,
    "importance_score" DOUBLE PRECISION,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "attempted_at" TIMESTAMPTZ(3) NOT NULL,
    "fetcher" TEXT,
    "success" BOOLEAN
) PARTITION BY RANGE ("attempted_at");

ALTER SEQUENCE "fetcher_attempts_id_seq" OWNED BY "fetcher_attempts"."id";
ALTER SEQUENCE "attempt_heuristics_id_seq" OWNED BY "attempt_heuristics"."id";

CREATE TABLE "fetcher_attempts_default" PARTITION OF "fetcher_attempts" DEFAULT;
CREATE TABLE "attempt_heuristics_default" PARTITION OF "attempt_heuristics" DEFAULT;

-- Keys, indexes and foreign keys come after the copy (step 5): built once over the copied rows instead of kept up
-- row by row, and each foreign key checked by one join per partition instead of one probe per row.

-- 3. The partitions, as data: what exists and the range each covers (NULL bounds: the default partition).
CREATE VIEW "attempt_log_partitions" AS
SELECT parent.relname::text AS "parent", child.relname::text AS "partition",
       substring(pg_get_expr(child.relpartbound, child.oid) FROM $re$FROM \('([^']*)'\)$re$)::timestamptz AS "range_from",
       substring(pg_get_expr(child.relpartbound, child.oid) FROM $re$TO \('([^']*)'\)$re$)::timestamptz AS "range_to"
FROM pg_inherits AS i
JOIN pg_class AS child ON child.oid = i.inhrelid
JOIN pg_class AS parent ON parent.oid = i.inhparent
WHERE parent.relname IN ('fetcher_attempts', 'attempt_heuristics')
  AND parent.relnamespace = current_schema()::regnamespace AND child.relnamespace = parent.relnamespace;

-- The partition length: 'day', 'week' (ISO weeks, Monday 00:00 UTC) or 'month', from the argument, else the setting
-- crawler.attempt_log_partition (ALTER DATABASE … SET crawler.attempt_log_partition = 'day'), else 'week'. Retention
-- drops whole partitions, so it is rounded up to this length; every partition is one more relation each query on the
-- log that cannot prune by date plans and opens (bench/README-store.md measures day against week and month).
CREATE FUNCTION "attempt_log_partition_unit"("p_unit" TEXT DEFAULT NULL) RETURNS TEXT
LANGUAGE plpgsql STABLE AS $$
DECLARE
  "unit" TEXT := coalesce(nullif("p_unit", ''), nullif(current_setting('crawler.attempt_log_partition', true), ''), 'week');
BEGIN
  IF "unit" NOT IN ('day', 'week', 'month') THEN
    RAISE EXCEPTION 'attempt log partition length must be day, week or month, got %', "unit";
  END IF;
  RETURN "unit";
END $$;

-- The partitions covering [p_from, p_to), created where missing, one per unit (a range that already has partitions
-- of another length is filled around them, so the length can change on a live database). A range's rows already
-- in the default partitions are moved into it first (Postgres refuses to attach a partition whose rows sit in the
-- default). New partitions are built standalone and attached, which takes a SHARE UPDATE EXCLUSIVE lock on the
-- parent instead of CREATE TABLE … PARTITION OF's ACCESS EXCLUSIVE, so writers keep writing meanwhile. Serialised
-- fleet-wide by an advisory lock (every worker process calls it). Returns the partitions created.
CREATE FUNCTION "attempt_log_ensure_partitions"("p_from" TIMESTAMPTZ, "p_to" TIMESTAMPTZ, "p_unit" TEXT DEFAULT NULL) RETURNS INTEGER
LANGUAGE plpgsql AS $$
DECLARE
  "unit" TEXT := "attempt_log_partition_unit"("p_unit");
  "step" INTERVAL;
  "cur" TIMESTAMPTZ;
  "lo" TIMESTAMPTZ;
  "hi" TIMESTAMPTZ;
  "suffix" TEXT;
  "fa" TEXT;
  "ah" TEXT;
  "created" INTEGER := 0;
BEGIN
  PERFORM pg_advisory_xact_lock(72707371);
  "step" := ('1 ' || "unit")::interval;
  "cur" := date_trunc("unit", "p_from", 'UTC');
  WHILE "cur" < "p_to" LOOP
    -- The unit [cur, cur + step), less whatever existing partitions already cover: each gap becomes a partition.
    "lo" := "cur";
    WHILE "lo" < "cur" + "step" LOOP
      SELECT max(p."range_to") INTO "hi" FROM "attempt_log_partitions" AS p
      WHERE p."parent" = 'fetcher_attempts' AND p."range_from" <= "lo" AND p."range_to" > "lo";
      IF "hi" IS NOT NULL THEN
        "lo" := "hi";
        CONTINUE;
      END IF;
      SELECT least("cur" + "step", min(p."range_from")) INTO "hi" FROM "attempt_log_partitions" AS p
      WHERE p."parent" = 'fetcher_attempts' AND p."range_from" > "lo";
      "hi" := coalesce("hi", "cur" + "step");
      "suffix" := to_char("lo" AT TIME ZONE 'UTC', 'YYYYMMDD');
      "fa" := 'fetcher_attempts_p' || "suffix";
      "ah" := 'attempt_heuristics_p' || "suffix";
      EXECUTE format('CREATE TABLE %I (LIKE "fetcher_attempts" INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', "fa");
      EXECUTE format('CREATE TABLE %I (LIKE "attempt_heuristics" INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', "ah");
      -- The range as a CHECK first, so ATTACH skips its validation scan.
      EXECUTE format('ALTER TABLE %I ADD CONSTRAINT "in_range" CHECK ("attempted_at" >= %L AND "attempted_at" < %L)', "fa", "lo", "hi");
      EXECUTE format('ALTER TABLE %I ADD CONSTRAINT "in_range" CHECK ("attempted_at" >= %L AND "attempted_at" < %L)', "ah", "lo", "hi");
      -- Rows of that range caught by the default partitions: moved as they are (same ids, keys and rollup keys; the
      -- rollups already count them). Heuristics first: the attempts' delete would cascade to them. A statement on a
      -- partition fires none of the parent's statement triggers, so the rollups are not touched.
      EXECUTE format('WITH "moved" AS (DELETE FROM "attempt_heuristics_default" WHERE "attempted_at" >= %L AND "attempted_at" < %L RETURNING *) INSERT INTO %I SELECT * FROM "moved"',
        "lo", "hi", "ah");
      EXECUTE format('WITH "moved" AS (DELETE FROM "fetcher_attempts_default" WHERE "attempted_at" >= %L AND "attempted_at" < %L RETURNING *) INSERT INTO %I SELECT * FROM "moved"',
        "lo", "hi", "fa");
      EXECUTE format('ALTER TABLE "fetcher_attempts" ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', "fa", "lo", "hi");
      EXECUTE format('ALTER TABLE "attempt_heuristics" ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', "ah", "lo", "hi");
      EXECUTE format('ALTER TABLE %I DROP CONSTRAINT "in_range"', "fa");
      EXECUTE format('ALTER TABLE %I DROP CONSTRAINT "in_range"', "ah");
      "created" := "created" + 1;
      "lo" := "hi";
    END LOOP;
    "cur" := "cur" + "step";
  END LOOP;
  RETURN "created";
END $$;

-- Retention of one partition: take the partition's attempts out of heuristic_rollups (what the delete trigger does row by
-- row, here in one aggregate), then detach and drop the heuristics' partition and the attempts'. Returns the rows
-- dropped. The caller names a partition of fetcher_attempts; its heuristics' partition is the one with the same range.
CREATE FUNCTION "attempt_log_drop_partition"("p_partition" TEXT, OUT "attempts" BIGINT, OUT "heuristics" BIGINT)
LANGUAGE plpgsql AS $$
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
    SELECT s."subset_key", fa."fetcher", (fa."id" %% 16)::smallint, -count(*), -sum("rollup_weight"(fa."success", fa."attempted_at")), NULL
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
END $$;

-- 4. The old rows, moved: a partition for every unit that holds one, and yesterday to a week ahead.
SELECT sum("attempt_log_ensure_partitions"(d."at", d."at" + interval '1 microsecond'))
FROM (SELECT DISTINCT date_trunc("attempt_log_partition_unit"(), "attempted_at", 'UTC') AS "at" FROM "fetcher_attempts_unpartitioned") AS d;
SELECT "attempt_log_ensure_partitions"(now() - interval '1 day', now() + interval '8 days');

-- Every trigger below is re-created, so none fires for the copy: the rollups already count these rows.
INSERT INTO "fetcher_attempts" ("id", "link", "url", "fetcher", "success", "is_banned", "error_type", "http_status",
  "response_headers", "duration_ms", "attempted_at", "selection_source", "rollup_keys")
SELECT "id", "link", "url", "fetcher", "success", "is_banned", "error_type", "http_status",
  "response_headers", "duration_ms", "attempted_at", "selection_source", "rollup_keys"
FROM "fetcher_attempts_unpartitioned";

-- A heuristic whose copied attempted_at drifted from its attempt's (only possible by hand, with triggers off) takes
-- its attempt's: the foreign key now requires them equal.
INSERT INTO "attempt_heuristics" ("id", "attempt", "heuristic_type", "heuristic_value", "importance_score", "created_at",
  "attempted_at", "fetcher", "success")
SELECT ah."id", ah."attempt", ah."heuristic_type", ah."heuristic_value", ah."importance_score", ah."created_at",
  fa."attempted_at", coalesce(ah."fetcher", fa."fetcher"), coalesce(ah."success", fa."success")
FROM "attempt_heuristics_unpartitioned" AS ah
JOIN "fetcher_attempts_unpartitioned" AS fa ON fa."id" = ah."attempt";

DROP TABLE "attempt_heuristics_unpartitioned";
DROP TABLE "fetcher_attempts_unpartitioned";

-- 5. Keys, indexes, foreign keys.
ALTER TABLE "fetcher_attempts" ADD CONSTRAINT "fetcher_attempts_pkey" PRIMARY KEY ("id", "attempted_at");
ALTER TABLE "attempt_heuristics" ADD CONSTRAINT "attempt_heuristics_pkey" PRIMARY KEY ("id", "attempted_at");
CREATE INDEX "idx_attempts_link" ON "fetcher_attempts"("link");
CREATE INDEX "idx_attempts_url" ON "fetcher_attempts"("url");
CREATE INDEX "idx_attempts_time" ON "fetcher_attempts"("attempted_at" DESC);
CREATE INDEX "idx_attempts_rate_limited" ON "fetcher_attempts"("id") WHERE "error_type" = 'rate_limited';
CREATE INDEX "idx_heur_type_value" ON "attempt_heuristics"("heuristic_type", "heuristic_value", "attempt", "fetcher", "success", "attempted_at");
CREATE INDEX "idx_heur_attempt" ON "attempt_heuristics"("attempt");

ALTER TABLE "fetcher_attempts" ADD CONSTRAINT "fetcher_attempts_link_fkey" FOREIGN KEY ("link") REFERENCES "links"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "attempt_heuristics" ADD CONSTRAINT "attempt_heuristics_attempt_fkey" FOREIGN KEY ("attempt", "attempted_at") REFERENCES "fetcher_attempts"("id", "attempted_at") ON DELETE CASCADE ON UPDATE CASCADE;

-- 6. The triggers, as they were (functions unchanged), now on the partitioned tables. Row triggers on a partitioned
-- table are cloned to every partition; statement triggers with transition tables fire for statements on the parent.
CREATE TRIGGER "attempt_heuristics_copy_attempt"
BEFORE INSERT ON "attempt_heuristics"
FOR EACH ROW WHEN (NEW."fetcher" IS NULL OR NEW."success" IS NULL)
EXECUTE FUNCTION "attempt_heuristics_copy_attempt"();
CREATE TRIGGER "attempt_heuristics_copy_attempt_update"
BEFORE UPDATE ON "attempt_heuristics"
FOR EACH ROW WHEN (NEW."fetcher" IS NULL OR NEW."success" IS NULL OR NEW."attempt" IS DISTINCT FROM OLD."attempt")
EXECUTE FUNCTION "attempt_heuristics_copy_attempt"();

-- The copy now reads its attempt by (id, attempted_at) (attempted_at is now always given), so one partition is probed.
CREATE OR REPLACE FUNCTION "attempt_heuristics_copy_attempt"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT fa."fetcher", fa."success"
    INTO NEW."fetcher", NEW."success"
    FROM "fetcher_attempts" AS fa WHERE fa."id" = NEW."attempt" AND fa."attempted_at" = NEW."attempted_at";
  RETURN NEW;
END $$;

-- The heuristics' copies of fetcher and success follow their attempt by a statement trigger now: an UPDATE that moves
-- a row to another partition (a new attempted_at) fires no row-level UPDATE trigger, but it does appear in the
-- statement's transition tables. attempted_at itself reaches the heuristics through the foreign key's ON UPDATE
-- CASCADE (it is part of the key), which has run by the time statement triggers fire.
CREATE OR REPLACE FUNCTION "fetcher_attempts_propagate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "attempt_heuristics" AS ah
  SET "fetcher" = n."fetcher", "success" = n."success"
  FROM "new_rows" AS n
  WHERE ah."attempt" = n."id" AND ah."attempted_at" = n."attempted_at"
    AND (ah."fetcher", ah."success") IS DISTINCT FROM (n."fetcher", n."success");
  RETURN NULL;
END $$;

CREATE TRIGGER "fetcher_attempts_propagate" AFTER UPDATE ON "fetcher_attempts"
REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "fetcher_attempts_propagate"();

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
