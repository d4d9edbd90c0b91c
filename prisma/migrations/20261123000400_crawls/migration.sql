-- Link-following crawls: a crawl has seeds, a scope, limits and counters; its frontier remembers every URL key it
-- has decided on, so that no page is admitted twice whatever the number of workers; links carry the crawl, their
-- depth and the page that found them.

CREATE TABLE "crawls" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    -- running | cancelled. "done" is derived: no link of the crawl is queued, routing, fetching or paused.
    "status" TEXT NOT NULL DEFAULT 'running',
    "seeds" TEXT[] NOT NULL,
    -- same-site | same-host | same-origin | all
    "scope" TEXT NOT NULL,
    "include" TEXT[] NOT NULL DEFAULT '{}',
    "exclude" TEXT[] NOT NULL DEFAULT '{}',
    "max_depth" INTEGER,
    "max_pages" INTEGER,
    "max_pages_per_host" INTEGER,
    "follow_nofollow" BOOLEAN NOT NULL DEFAULT false,
    -- null: the default list
    "tracking_params" TEXT[],
    "sitemaps" BOOLEAN NOT NULL DEFAULT false,
    -- Pages admitted for fetching (each ends done or failed): the page budget's counter.
    "admitted" INTEGER NOT NULL DEFAULT 0,
    -- Link occurrences seen (distinct per page), and how the ones not admitted were refused.
    "discovered" BIGINT NOT NULL DEFAULT 0,
    "duplicate" BIGINT NOT NULL DEFAULT 0,
    "out_of_scope" BIGINT NOT NULL DEFAULT 0,
    "over_limit" BIGINT NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "cancelled_at" TIMESTAMPTZ(3),

    CONSTRAINT "crawls_pkey" PRIMARY KEY ("id")
);

-- The crawl's seen set, and the final arbiter of admission: one row per frontier key, whatever a cache says.
CREATE TABLE "crawl_frontier" (
    "crawl" UUID NOT NULL,
    "key" TEXT NOT NULL,
    "host" TEXT NOT NULL,
    "admitted" BOOLEAN NOT NULL,

    CONSTRAINT "crawl_frontier_pkey" PRIMARY KEY ("crawl", "key")
);

-- Pages admitted per host, for the per-host cap (kept only for crawls that have one).
CREATE TABLE "crawl_hosts" (
    "crawl" UUID NOT NULL,
    "host" TEXT NOT NULL,
    "admitted" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "crawl_hosts_pkey" PRIMARY KEY ("crawl", "host")
);

ALTER TABLE "crawl_frontier" ADD CONSTRAINT "crawl_frontier_crawl_fkey" FOREIGN KEY ("crawl") REFERENCES "crawls"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "crawl_hosts" ADD CONSTRAINT "crawl_hosts_crawl_fkey" FOREIGN KEY ("crawl") REFERENCES "crawls"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "links" ADD COLUMN "crawl" UUID;
ALTER TABLE "links" ADD COLUMN "depth" INTEGER;
ALTER TABLE "links" ADD COLUMN "discovered_from" UUID;
ALTER TABLE "links" ADD CONSTRAINT "links_crawl_fkey" FOREIGN KEY ("crawl") REFERENCES "crawls"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "links" ADD CONSTRAINT "links_discovered_from_fkey" FOREIGN KEY ("discovered_from") REFERENCES "links"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- "Is the crawl done?" and its counters: a crawl's links by status.
CREATE INDEX "idx_links_crawl_status" ON "links"("crawl", "status") WHERE "crawl" IS NOT NULL;
