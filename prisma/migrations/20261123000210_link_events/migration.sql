-- The events outbox. A link reaching done or failed writes its event here from a trigger, so the event commits in the
-- same transaction as the link's final state, whichever code path (fetch worker, router, CLI) wrote that state: a
-- crash between the two can neither lose an event nor invent one. Dispatchers deliver from this table (webhooks,
-- the Redis stream); each channel keeps its own progress columns.
CREATE TABLE "link_events" (
    "seq" BIGSERIAL NOT NULL,
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "type" TEXT NOT NULL,
    -- No foreign key: an event outlives a deleted link until it is delivered.
    "link" UUID NOT NULL,
    "url" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "fetcher" TEXT,
    "error_type" TEXT,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    -- Webhook delivery: attempts so far, when the next one is due, since when it is being retried (the retry window
    -- starts again on a replay), the lease a dispatcher holds while it sends, and how it ended.
    "webhook_attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "retrying_since" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "lease_until" TIMESTAMPTZ(3),
    "delivered_at" TIMESTAMPTZ(3),
    "dead_at" TIMESTAMPTZ(3),
    "last_error" TEXT,
    -- Redis stream: when the event was added to it, and the lease of the dispatcher adding it.
    "stream_lease_until" TIMESTAMPTZ(3),
    "streamed_at" TIMESTAMPTZ(3),

    CONSTRAINT "link_events_pkey" PRIMARY KEY ("seq")
);

CREATE UNIQUE INDEX "link_events_id_key" ON "link_events"("id");
CREATE INDEX "idx_link_events_link" ON "link_events"("link");
-- What dispatchers scan: small partial indexes that only hold undelivered events.
CREATE INDEX "idx_link_events_webhook_due" ON "link_events"("next_attempt_at") WHERE "delivered_at" IS NULL AND "dead_at" IS NULL;
CREATE INDEX "idx_link_events_unstreamed" ON "link_events"("seq") WHERE "streamed_at" IS NULL;
CREATE INDEX "idx_link_events_dead" ON "link_events"("dead_at") WHERE "dead_at" IS NOT NULL;

CREATE FUNCTION "link_events_on_final_state"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "link_events" ("type", "link", "url", "status", "fetcher", "error_type")
  VALUES ('link.' || NEW."status", NEW."id", NEW."url", NEW."status", NEW."fetcher",
          CASE WHEN NEW."status" = 'failed' THEN NEW."last_error_type" END);
  RETURN NULL;
END
$$;

-- Only a change of status into done or failed is an event: done → done (a duplicate job storing the page again)
-- is not.
CREATE TRIGGER "links_final_state_event"
AFTER UPDATE OF "status" ON "links"
FOR EACH ROW
WHEN (NEW."status" IN ('done', 'failed') AND OLD."status" IS DISTINCT FROM NEW."status")
EXECUTE FUNCTION "link_events_on_final_state"();

CREATE TRIGGER "links_final_state_event_insert"
AFTER INSERT ON "links"
FOR EACH ROW
WHEN (NEW."status" IN ('done', 'failed'))
EXECUTE FUNCTION "link_events_on_final_state"();
