-- The stored page keeps the response headers it was fetched with (lower-case names, repeats joined as the fetcher
-- reports them; never set-cookie), so an export can replay the HTTP response as fetched (WARC response records).
-- Rows stored before this migration have none: exports rebuild a minimal header block from content_type.
ALTER TABLE "fetched_content" ADD COLUMN "response_headers" JSONB;
