-- idx_content_link (link) duplicated the leading column of fetched_content_link_version_key (link, version): every
-- read by link (the latest version, a link's versions, the cascade from links) uses the unique index, and the crawl
-- benches never scanned this one (pg_stat_user_indexes, issue 23). It cost one index insertion per stored page.
DROP INDEX IF EXISTS "idx_content_link";
