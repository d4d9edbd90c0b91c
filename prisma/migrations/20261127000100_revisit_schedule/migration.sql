-- Continuous crawling: refresh on demand and revisit schedules.
--
-- A link may carry a revisit policy: `fixed` (every revisit_interval_s) or `adaptive` (the interval shrinks when the
-- last visit found a new version and grows when it did not, within revisit_min_s..revisit_max_s). Postgres holds the
-- schedule: next_fetch_at per link, in a partial index that holds scheduled links only, so the scheduler's "what is
-- due" is an index range scan whatever the size of the table.

-- NULL = first visit or unknown, true = the last visit stored a new version, false = it found the same page.
-- (Also added by the page-versions migration; IF NOT EXISTS lets either run first.)
ALTER TABLE "links" ADD COLUMN IF NOT EXISTS "last_visit_changed" BOOLEAN;

ALTER TABLE "links"
  ADD COLUMN "revisit_mode" TEXT,
  -- The interval in force (seconds): the one the current visit was scheduled with; an adaptive policy's start value.
  ADD COLUMN "revisit_interval_s" DOUBLE PRECISION,
  ADD COLUMN "revisit_min_s" DOUBLE PRECISION,
  ADD COLUMN "revisit_max_s" DOUBLE PRECISION,
  -- The interval the finished visit chose for the next one; it becomes revisit_interval_s when that visit starts.
  ADD COLUMN "revisit_next_s" DOUBLE PRECISION,
  ADD COLUMN "next_fetch_at" TIMESTAMPTZ(3),
  ADD CONSTRAINT "links_revisit_mode_check" CHECK ("revisit_mode" IS NULL OR "revisit_mode" IN ('fixed', 'adaptive')),
  ADD CONSTRAINT "links_revisit_policy_check" CHECK (
    "revisit_mode" IS NULL
    OR ("revisit_interval_s" > 0 AND ("revisit_mode" = 'fixed' OR ("revisit_min_s" > 0 AND "revisit_max_s" >= "revisit_min_s"))));

CREATE INDEX "idx_links_next_fetch" ON "links" ("next_fetch_at") WHERE "next_fetch_at" IS NOT NULL;

-- A crawl's revisit policy (copied onto every link it admits) and its refresh age (a stored page older than it is
-- fetched again by this crawl; null: a page already stored is a duplicate, as before).
ALTER TABLE "crawls"
  ADD COLUMN "max_age_s" DOUBLE PRECISION,
  ADD COLUMN "revisit_mode" TEXT,
  ADD COLUMN "revisit_interval_s" DOUBLE PRECISION,
  ADD COLUMN "revisit_min_s" DOUBLE PRECISION,
  ADD COLUMN "revisit_max_s" DOUBLE PRECISION,
  -- Stored pages this crawl fetched again (stale), and stored pages it left alone (fresh enough).
  ADD COLUMN "refreshed" BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN "fresh" BIGINT NOT NULL DEFAULT 0,
  -- Finished links a later crawl took over to fetch again, by the status they had: the counters of this crawl still
  -- count them, so a re-crawl does not rewrite the old crawl's figures.
  ADD COLUMN "handed_over_done" BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN "handed_over_failed" BIGINT NOT NULL DEFAULT 0;

-- The schedule moves with the link's status, in the transaction that moves it, whichever code path writes it:
--  * a visit starts (finished → unfinished: a refresh or the scheduler): the interval chosen by the last visit comes
--    into force, and the next due time and the change flag are cleared;
--  * a visit ends (→ done or failed), or the policy or the change flag of a finished link is written: the next
--    interval is computed from the one in force (so writing the flag twice in one visit applies its factor once),
--    and next_fetch_at = last attempt + that interval.
-- Adaptive factors (Nutch's AdaptiveFetchSchedule with its shipped rates): changed ×(1 − 0.2), unchanged ×(1 + 0.4),
-- unknown (first visit, failed visit) ×1; then clamped to [min, max].
CREATE FUNCTION "links_revisit_schedule"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  finished_now BOOLEAN := NEW."status" IN ('done', 'failed');
  finished_before BOOLEAN := TG_OP = 'UPDATE' AND OLD."status" IN ('done', 'failed');
  next_s DOUBLE PRECISION;
BEGIN
  IF finished_before AND NOT finished_now THEN
    NEW."revisit_interval_s" := coalesce(NEW."revisit_next_s", NEW."revisit_interval_s");
    NEW."revisit_next_s" := NULL;
    NEW."next_fetch_at" := NULL;
    NEW."last_visit_changed" := NULL;
    RETURN NEW;
  END IF;
  IF NOT finished_now THEN
    RETURN NEW;
  END IF;
  IF NEW."revisit_mode" IS NULL THEN
    NEW."revisit_next_s" := NULL;
    NEW."next_fetch_at" := NULL;
    RETURN NEW;
  END IF;
  IF finished_before
     AND NEW."last_visit_changed" IS NOT DISTINCT FROM OLD."last_visit_changed"
     AND NEW."revisit_mode" IS NOT DISTINCT FROM OLD."revisit_mode"
     AND NEW."revisit_interval_s" IS NOT DISTINCT FROM OLD."revisit_interval_s"
     AND NEW."revisit_min_s" IS NOT DISTINCT FROM OLD."revisit_min_s"
     AND NEW."revisit_max_s" IS NOT DISTINCT FROM OLD."revisit_max_s"
     AND OLD."next_fetch_at" IS NOT NULL THEN
    RETURN NEW;
  END IF;
  next_s := NEW."revisit_interval_s";
  IF NEW."revisit_mode" = 'adaptive' THEN
    IF NEW."last_visit_changed" IS TRUE THEN
      next_s := next_s * (1 - 0.2);
    ELSIF NEW."last_visit_changed" IS FALSE THEN
      next_s := next_s * (1 + 0.4);
    END IF;
    next_s := greatest(NEW."revisit_min_s", least(NEW."revisit_max_s", next_s));
  END IF;
  NEW."revisit_next_s" := next_s;
  NEW."next_fetch_at" := coalesce(NEW."last_attempt_at", now()) + next_s * interval '1 second';
  RETURN NEW;
END
$$;

-- Only where it can matter: most of the hot path's updates change the status anyway; an unscheduled link that keeps
-- its status (attempt counts, late duplicates) does not pay for the call.
CREATE TRIGGER "links_revisit_schedule_insert"
BEFORE INSERT ON "links"
FOR EACH ROW
WHEN (NEW."revisit_mode" IS NOT NULL)
EXECUTE FUNCTION "links_revisit_schedule"();

CREATE TRIGGER "links_revisit_schedule"
BEFORE UPDATE ON "links"
FOR EACH ROW
WHEN (OLD."status" IS DISTINCT FROM NEW."status" OR OLD."revisit_mode" IS NOT NULL OR NEW."revisit_mode" IS NOT NULL)
EXECUTE FUNCTION "links_revisit_schedule"();

-- Whether a visit changed the page (links.last_visit_changed) is written by the outcome's own statement, in the same
-- transaction (page versions, 20261127500000_page_versions).
