-- A producer's BullMQ priority is kept on the link, so a job the reconciler rebuilds (Redis lost, a failover, a
-- reshard) keeps its place in the queue. NULL: no priority (runs before any prioritized link, as BullMQ does).
ALTER TABLE "links" ADD COLUMN "priority" INTEGER;
