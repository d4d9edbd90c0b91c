-- Page versions, visits and change events (continuous crawling).
--
-- A link is fetched again (a refresh, a schedule): each fetch whose body differs by sha256 from the link's latest
-- stored page is a new row of fetched_content, numbered 1, 2, … per link in fetch order; an identical body, or a 304
-- to a conditional request, stores no body. Every successful visit is one row of page_visits, so an archive export
-- can write one record per visit (a WARC response for a new version, a revisit record for an unchanged one).

-- The result of the link's latest successful visit: NULL = first visit (or unknown), true = a new version,
-- false = unchanged (304 or identical body). Written with the outcome, in its statement. The revisit scheduler of
-- the same issue adds the column too, hence IF NOT EXISTS.
ALTER TABLE "links" ADD COLUMN IF NOT EXISTS "last_visit_changed" BOOLEAN;

ALTER TABLE "fetched_content" ADD COLUMN "version" INTEGER;
UPDATE "fetched_content" c SET "version" = v.n
FROM (SELECT id, row_number() OVER (PARTITION BY link ORDER BY fetched_at, id)::int AS n FROM "fetched_content") v
WHERE v.id = c.id;
ALTER TABLE "fetched_content" ALTER COLUMN "version" SET NOT NULL;
-- One number per version of a link; also the "latest version of a link" lookup (ORDER BY version DESC LIMIT 1).
CREATE UNIQUE INDEX "fetched_content_link_version_key" ON "fetched_content"("link", "version");

-- Whoever inserts a page (the outcome statement, fixtures, tools), it gets the next number. Inserts of one link are
-- serialized by the link's row lock in the outcome statement; the unique index is the final arbiter otherwise.
CREATE FUNCTION "fetched_content_number_version"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."version" IS NULL THEN
    SELECT coalesce(max("version"), 0) + 1 INTO NEW."version" FROM "fetched_content" WHERE "link" = NEW."link";
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER "fetched_content_version" BEFORE INSERT ON "fetched_content"
FOR EACH ROW EXECUTE FUNCTION "fetched_content_number_version"();

-- One row per successful visit. kind: new (this visit stored `content`), not_modified (a 304 to a conditional
-- request), identical (a 200 whose body had the sha256 of `content`). For unchanged visits `content` is the
-- version the visit confirmed, and the row keeps this visit's own status, URL and headers (a 304's headers).
CREATE TABLE "page_visits" (
    "id" BIGSERIAL NOT NULL,
    "link" UUID NOT NULL,
    "content" BIGINT NOT NULL,
    "kind" TEXT NOT NULL,
    "visited_at" TIMESTAMPTZ(3) NOT NULL,
    "fetcher" TEXT NOT NULL,
    "http_status" INTEGER NOT NULL,
    "final_url" TEXT NOT NULL,
    "response_headers" JSONB,
    CONSTRAINT "page_visits_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "page_visits_kind_check" CHECK ("kind" IN ('new', 'not_modified', 'identical')),
    CONSTRAINT "page_visits_link_fkey" FOREIGN KEY ("link") REFERENCES "links"("id") ON DELETE CASCADE,
    -- A pruned version takes the visits that confirmed it along: a revisit record must point at a stored response.
    CONSTRAINT "page_visits_content_fkey" FOREIGN KEY ("content") REFERENCES "fetched_content"("id") ON DELETE CASCADE
);
CREATE INDEX "idx_page_visits_link" ON "page_visits"("link");
CREATE INDEX "idx_page_visits_content" ON "page_visits"("content");
CREATE INDEX "idx_page_visits_time" ON "page_visits"("visited_at");

INSERT INTO "page_visits" ("link", "content", "kind", "visited_at", "fetcher", "http_status", "final_url")
SELECT "link", "id", 'new', "fetched_at", "fetcher", "http_status", "final_url" FROM "fetched_content" ORDER BY "id";

-- Change events carry the versions they are about.
ALTER TABLE "link_events" ADD COLUMN "old_sha256" TEXT, ADD COLUMN "new_sha256" TEXT, ADD COLUMN "version" INTEGER;

-- A new version is a visit, and from the second version on a `link.changed` event, written by the insert itself so
-- it commits with the page whatever path stored it.
CREATE FUNCTION "fetched_content_on_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  prev TEXT;
BEGIN
  INSERT INTO "page_visits" ("link", "content", "kind", "visited_at", "fetcher", "http_status", "final_url")
  VALUES (NEW."link", NEW."id", 'new', NEW."fetched_at", NEW."fetcher", NEW."http_status", NEW."final_url");
  IF NEW."version" > 1 THEN
    SELECT "sha256" INTO prev FROM "fetched_content"
    WHERE "link" = NEW."link" AND "version" < NEW."version" ORDER BY "version" DESC LIMIT 1;
    INSERT INTO "link_events" ("type", "link", "url", "status", "fetcher", "old_sha256", "new_sha256", "version")
    SELECT 'link.changed', l."id", l."url", 'done', NEW."fetcher", prev, NEW."sha256", NEW."version"
    FROM "links" l WHERE l."id" = NEW."link";
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER "fetched_content_visit" AFTER INSERT ON "fetched_content"
FOR EACH ROW EXECUTE FUNCTION "fetched_content_on_insert"();
