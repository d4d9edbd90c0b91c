-- Resumable exports (`crawl export --after CURSOR`, GET /export?after=CURSOR) need to know which rows became visible
-- between two exports. Neither id nor fetched_at says that: ids come from a sequence at insert and fetched_at is the
-- fetch's time, while the row commits later (the outcome batch, a slow Postgres), so a row with a lower id or an
-- earlier fetched_at can appear after an export has read past it. Each row records the transaction that wrote it, and
-- an export's cursor is the database snapshot it read up to (pg_current_snapshot): the next export takes exactly the
-- rows whose transaction is visible in its own snapshot and was not in the previous one, whatever their ids.
--
-- Rows stored before this column existed get '2' (FrozenTransactionId): committed before any snapshot, so they are in
-- every full export and in no resumed one. The constant default is added without rewriting the table; new rows then
-- take the inserting transaction's id.
ALTER TABLE "fetched_content" ADD COLUMN "xact" xid8 NOT NULL DEFAULT '2'::xid8;
ALTER TABLE "fetched_content" ALTER COLUMN "xact" SET DEFAULT pg_current_xact_id();
ALTER TABLE "page_visits" ADD COLUMN "xact" xid8 NOT NULL DEFAULT '2'::xid8;
ALTER TABLE "page_visits" ALTER COLUMN "xact" SET DEFAULT pg_current_xact_id();

-- Where a resumed export starts: the first row written by a transaction at or after the previous snapshot's xmin
-- (index only, as idx_fetched_content_fetched_at answers it for `since`).
CREATE INDEX "idx_fetched_content_xact" ON "fetched_content" ("xact", "id");
CREATE INDEX "idx_page_visits_xact" ON "page_visits" ("xact", "id");
