-- A failover moves the primary to a standby, which goes on from the last transaction id it replayed: the ids the old
-- primary gave to transactions that never reached it are given again. A cursor the old primary handed out after them
-- would count the new rows under those ids as exported already and pass over them for good. The promoted server
-- writes on a new timeline (as does a point-in-time recovery), so each row records the timeline it was written on and
-- each cursor the timeline it was taken on: a row from a later timeline than a cursor's is after it, whatever its
-- transaction id.
--
-- The timeline of the WAL being written (the first 8 hex digits of its file name); the inserts that call it run on
-- the primary.
CREATE FUNCTION export_timeline() RETURNS integer LANGUAGE sql VOLATILE AS
$$ SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::integer $$;

-- Rows stored before the column get timeline 1, the lowest: they are ordered by their transaction ids, as before.
ALTER TABLE "fetched_content" ADD COLUMN "tli" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "fetched_content" ALTER COLUMN "tli" SET DEFAULT export_timeline();
ALTER TABLE "page_visits" ADD COLUMN "tli" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "page_visits" ALTER COLUMN "tli" SET DEFAULT export_timeline();

-- Where a resumed export starts when the database has moved to a later timeline since its cursor (index only).
CREATE INDEX "idx_fetched_content_tli" ON "fetched_content" ("tli", "id");
CREATE INDEX "idx_page_visits_tli" ON "page_visits" ("tli", "id");
