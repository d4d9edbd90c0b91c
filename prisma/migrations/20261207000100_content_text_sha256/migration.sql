-- "Changed" means the page's text changed, not its bytes. Pages carry markup that differs at every response while
-- what a reader sees is the same (a CSRF <meta> token, CSP nonces on <script>, hidden form tokens, cache-busting
-- asset URLs, request ids in inline scripts): compared by sha256 alone, such a page is a new version at every visit,
-- writes `link.changed` each time and holds an adaptive revisit schedule at its minimum interval.
--
-- text_sha256 is the sha256 of the page's visible text (title and body text, whitespace collapsed; script, style,
-- template and noscript contents and every attribute left out), computed by the fetch worker from the text its
-- response analysis already extracts; NULL for non-HTML bodies, bodies too large to analyse whole, and rows stored
-- before this column. A body whose bytes differ is still stored as a new version (an archive keeps what the server
-- sent); it is a change (`links.last_visit_changed`, `link.changed`) when its text_sha256 differs from the previous
-- version's, or, when either has none, when its sha256 does.
ALTER TABLE "fetched_content" ADD COLUMN "text_sha256" TEXT;

-- As in 20261127500000, but `link.changed` only for a version whose content changed (the rule above). The outcome
-- statement applies the same rule to links.last_visit_changed and writes `link.unchanged` for a version that is not a
-- change, when asked.
CREATE OR REPLACE FUNCTION "fetched_content_on_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  prev TEXT;
  prev_text TEXT;
BEGIN
  INSERT INTO "page_visits" ("link", "content", "kind", "visited_at", "fetcher", "http_status", "final_url")
  VALUES (NEW."link", NEW."id", 'new', NEW."fetched_at", NEW."fetcher", NEW."http_status", NEW."final_url");
  IF NEW."version" > 1 THEN
    SELECT "sha256", "text_sha256" INTO prev, prev_text FROM "fetched_content"
    WHERE "link" = NEW."link" AND "version" < NEW."version" ORDER BY "version" DESC LIMIT 1;
    IF prev_text IS NULL OR NEW."text_sha256" IS NULL OR prev_text <> NEW."text_sha256" THEN
      INSERT INTO "link_events" ("type", "link", "url", "status", "fetcher", "old_sha256", "new_sha256", "version")
      SELECT 'link.changed', l."id", l."url", 'done', NEW."fetcher", prev, NEW."sha256", NEW."version"
      FROM "links" l WHERE l."id" = NEW."link";
    END IF;
  END IF;
  RETURN NULL;
END
$$;
