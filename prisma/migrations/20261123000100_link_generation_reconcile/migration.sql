-- A link's generation: which route job currently owns it (route job id = link id, then `<id>.g<generation>`). The
-- reconciler rebuilds lost Redis work from Postgres: a link in a non-final state whose current job does not exist
-- (Redis lost its data) or is dead (failed while Postgres was away) gets a job again, and a dead job's id is taken,
-- so the link moves to the next generation.
ALTER TABLE "links" ADD COLUMN "generation" INTEGER NOT NULL DEFAULT 0;

-- The reconciler's scan: unfinished links untouched for a while, oldest first, in batches. Partial, so the index
-- holds only the links still in flight, not the millions that are done.
CREATE INDEX "idx_links_unfinished_updated" ON "links"("status", "updated_at") WHERE "status" NOT IN ('done', 'failed');
