-- findBestFetcher reads only attempt_heuristics: each heuristic row carries a copy of its attempt's fetcher,
-- success and attempted_at, and idx_heur_match covers them, so the query is an index-only scan whose cost follows
-- the number of matching rows rather than the size of fetcher_attempts.

-- AlterTable
ALTER TABLE "attempt_heuristics" ADD COLUMN     "attempted_at" TIMESTAMPTZ(3),
ADD COLUMN     "fetcher" TEXT,
ADD COLUMN     "success" BOOLEAN;

-- Backfill rows written before this migration (the seed priors).
UPDATE "attempt_heuristics" AS ah
SET "fetcher" = fa."fetcher", "success" = fa."success", "attempted_at" = fa."attempted_at"
FROM "fetcher_attempts" AS fa
WHERE fa."id" = ah."attempt";

-- CreateIndex
CREATE INDEX "idx_heur_match" ON "attempt_heuristics"("heuristic_type", "heuristic_value", "attempt", "fetcher", "success", "attempted_at");

-- Keep the copies right whatever writes the rows (the store fills them itself; other writers may not).
CREATE FUNCTION "attempt_heuristics_copy_attempt"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."fetcher" IS NULL OR NEW."success" IS NULL OR NEW."attempted_at" IS NULL
     OR TG_OP = 'UPDATE' AND NEW."attempt" IS DISTINCT FROM OLD."attempt" THEN
    SELECT fa."fetcher", fa."success", fa."attempted_at"
      INTO NEW."fetcher", NEW."success", NEW."attempted_at"
      FROM "fetcher_attempts" AS fa WHERE fa."id" = NEW."attempt";
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER "attempt_heuristics_copy_attempt"
BEFORE INSERT OR UPDATE ON "attempt_heuristics"
FOR EACH ROW EXECUTE FUNCTION "attempt_heuristics_copy_attempt"();

CREATE FUNCTION "fetcher_attempts_propagate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "attempt_heuristics"
  SET "fetcher" = NEW."fetcher", "success" = NEW."success", "attempted_at" = NEW."attempted_at"
  WHERE "attempt" = NEW."id";
  RETURN NULL;
END $$;

CREATE TRIGGER "fetcher_attempts_propagate"
AFTER UPDATE OF "fetcher", "success", "attempted_at" ON "fetcher_attempts"
FOR EACH ROW
WHEN (OLD."fetcher" IS DISTINCT FROM NEW."fetcher" OR OLD."success" IS DISTINCT FROM NEW."success" OR OLD."attempted_at" IS DISTINCT FROM NEW."attempted_at")
EXECUTE FUNCTION "fetcher_attempts_propagate"();
