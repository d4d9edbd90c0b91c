-- A page being fetched again (a refresh, a scheduled revisit, a re-crawl) is still the page its last visit stored,
-- but its link is queued, routing, fetching or paused until the visit ends. Exports that ask for `done` pages read
-- the status a link had when its current visit started from here, so a fleet that revisits continuously does not
-- drop every page that happens to be mid-revisit. Set when a finished link starts a new visit, whichever statement
-- starts it; the WHEN clause keeps every other update of links from calling the function.
ALTER TABLE "links" ADD COLUMN IF NOT EXISTS "settled_status" TEXT;

CREATE OR REPLACE FUNCTION "links_settled_status"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."settled_status" := OLD."status";
  RETURN NEW;
END $$;

CREATE TRIGGER "links_settled_status"
BEFORE UPDATE OF "status" ON "links"
FOR EACH ROW
WHEN (OLD."status" IN ('done', 'failed') AND NEW."status" NOT IN ('done', 'failed'))
EXECUTE FUNCTION "links_settled_status"();
