-- A link.failed event says why in words, as the link does: `error` beside `errorType`
-- ("max_attempts:network_error: UND_ERR_SOCKET: other side closed (17 of 5000 body bytes received)"), so a consumer of
-- webhooks or the stream does not have to ask GET /links/:id for every failure. Named link_error: link_events already
-- has last_error, the webhook delivery's own. Cut to 600 characters, as the fetch worker writes last_error. NULL for
-- other events and for those written before this column.
ALTER TABLE "link_events" ADD COLUMN "link_error" TEXT;

CREATE OR REPLACE FUNCTION "link_events_on_final_state"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "link_events" ("type", "link", "url", "status", "fetcher", "error_type", "link_error")
  VALUES ('link.' || NEW."status", NEW."id", NEW."url", NEW."status", NEW."fetcher",
          CASE WHEN NEW."status" = 'failed' THEN NEW."last_error_type" END,
          CASE WHEN NEW."status" = 'failed' THEN left(NEW."last_error", 600) END);
  RETURN NULL;
END
$$;
