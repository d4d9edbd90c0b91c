-- A crawl's links refused by maxDepth, counted apart: over_limit lumps maxDepth with maxPages and maxPagesPerHost, so
-- an operator could not tell a crawl stopped by its page budget from one that ran out of depth. Part of over_limit.
-- A constant default: no table rewrite, the ALTER holds its lock for an instant.
ALTER TABLE "crawls" ADD COLUMN "over_depth" BIGINT NOT NULL DEFAULT 0;
