-- attempt_heuristics' foreign key to its attempt, held by each partition towards its twin partition of
-- fetcher_attempts (same range; the DEFAULT partitions towards each other) instead of by the parent towards the
-- parent. A heuristic and its attempt share attempted_at, the partition key, and both tables are partitioned over the
-- same ranges (attempt_log_ensure_partitions creates the two together), so every heuristic's attempt is in the twin:
-- the same rows are allowed and refused as before, and deleting an attempt still deletes its heuristics.
--
-- Why: Postgres checks a foreign key by a query on the referenced table, and a query on a partitioned table is planned
-- again for every row (its generic plan, over every partition, never wins), so each heuristic inserted paid a plan:
-- about 40 µs a row, 4 rows a page (pgbench, 50 attempts and 200 heuristics a statement: 12-15 ms against 4-6 ms with
-- the partitions' keys). Against a plain table the check's plan is made once per connection.
--
-- Retention is unchanged: attempt_log_drop_partition drops the heuristics' partition before the attempts'.
--
-- An attempt's key (id, attempted_at) no longer changes: an attempt is a record of what happened when. Moving one to
-- another partition is a delete and an insert there, and a partition's own key would cascade that delete to its
-- heuristics behind the rollups' triggers (which watch the parent tables); nothing of ours ever changed it. A
-- maintenance job that must move attempts (the test databases re-date the seed priors) takes their heuristics out
-- first, puts them back after, and says so with SET LOCAL crawler.move_attempts = 'on'.
CREATE FUNCTION "attempt_key_unchanged"() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('crawler.move_attempts', true) = 'on' THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'fetcher_attempts: an attempt''s id and attempted_at do not change (attempt %, %): log a new attempt instead', OLD."id", OLD."attempted_at"
    USING ERRCODE = 'check_violation';
END $$;
CREATE TRIGGER "fetcher_attempts_key_unchanged" BEFORE UPDATE OF "id", "attempted_at" ON "fetcher_attempts"
  FOR EACH ROW WHEN (OLD."id" IS DISTINCT FROM NEW."id" OR OLD."attempted_at" IS DISTINCT FROM NEW."attempted_at")
  EXECUTE FUNCTION "attempt_key_unchanged"();

ALTER TABLE "attempt_heuristics" DROP CONSTRAINT "attempt_heuristics_attempt_fkey";

-- Every pair there is now. NOT VALID, then VALIDATE: the check of existing rows takes a SHARE UPDATE EXCLUSIVE lock on
-- the heuristics' partition, so writers go on meanwhile.
DO $$
DECLARE
  "pair" RECORD;
BEGIN
  FOR "pair" IN
    SELECT h."partition" AS "ah", a."partition" AS "fa"
    FROM "attempt_log_partitions" AS h
    JOIN "attempt_log_partitions" AS a
      ON a."parent" = 'fetcher_attempts' AND a."range_from" IS NOT DISTINCT FROM h."range_from" AND a."range_to" IS NOT DISTINCT FROM h."range_to"
    WHERE h."parent" = 'attempt_heuristics'
  LOOP
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I FOREIGN KEY ("attempt", "attempted_at") REFERENCES %I ("id", "attempted_at") ON DELETE CASCADE ON UPDATE CASCADE NOT VALID',
      "pair"."ah", "pair"."ah" || '_attempt_fkey', "pair"."fa");
    EXECUTE format('ALTER TABLE %I VALIDATE CONSTRAINT %I', "pair"."ah", "pair"."ah" || '_attempt_fkey');
  END LOOP;
  -- A heuristics' partition without a twin would hold heuristics no key checks: there is none unless made by hand.
  IF EXISTS (
    SELECT 1 FROM "attempt_log_partitions" AS h
    WHERE h."parent" = 'attempt_heuristics' AND NOT EXISTS (
      SELECT 1 FROM "attempt_log_partitions" AS a
      WHERE a."parent" = 'fetcher_attempts' AND a."range_from" IS NOT DISTINCT FROM h."range_from" AND a."range_to" IS NOT DISTINCT FROM h."range_to")
  ) THEN
    RAISE EXCEPTION 'attempt_heuristics has a partition whose range no partition of fetcher_attempts has: partition both tables alike first';
  END IF;
END $$;

-- New partitions get theirs when they are made.
CREATE OR REPLACE FUNCTION "attempt_log_ensure_partitions"("p_from" TIMESTAMPTZ, "p_to" TIMESTAMPTZ, "p_unit" TEXT DEFAULT NULL) RETURNS INTEGER
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
      -- The heuristics' foreign key to their attempts, from this partition to its twin (see the top of this file): once
      -- the twin is attached, which gives it the parent's primary key.
      EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I FOREIGN KEY ("attempt", "attempted_at") REFERENCES %I ("id", "attempted_at") ON DELETE CASCADE ON UPDATE CASCADE',
        "ah", "ah" || '_attempt_fkey', "fa");
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
