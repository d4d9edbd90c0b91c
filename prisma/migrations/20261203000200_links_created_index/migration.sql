-- GET /links lists links newest first, a keyset walk over (created_at, id). Without an index on that order every page,
-- the first included, read and sorted the whole links table (0.2 s per page at 500k links, seconds at millions, with
-- two parallel workers of Postgres CPU each): a consumer paging through its links scanned the table once per page.
CREATE INDEX IF NOT EXISTS "idx_links_created" ON "links" ("created_at", "id");
