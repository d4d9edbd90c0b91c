-- How many times the reconciler gave a link a new job because the job carrying it had failed (its worker crashed or
-- it stalled out). Past RECONCILE_MAX_RESCUES the link fails with job_lost, so a page that kills its workers cannot
-- do so forever. Kept apart from generation, which pauses move on too.
ALTER TABLE "links" ADD COLUMN "rescues" INTEGER NOT NULL DEFAULT 0;
