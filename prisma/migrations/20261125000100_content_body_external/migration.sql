-- Stored pages are brotli-compressed by the crawler before they get here: Postgres' own TOAST compression (pglz) only
-- spends CPU finding that out on every insert. EXTERNAL keeps out-of-line storage and skips the attempt. Rows already
-- stored are unchanged; reads are unchanged.
ALTER TABLE "fetched_content" ALTER COLUMN "body" SET STORAGE EXTERNAL;
