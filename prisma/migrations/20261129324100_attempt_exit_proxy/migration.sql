-- Every proxied attempt records which proxy of its tier carried it, masked as the operator may see it
-- (`http://***@host:port`, never its credentials): `crawl stats` shows requests, successes and blocks per proxy from
-- the attempt log, fleet-wide, where /metrics only has each process's own counters. NULL for direct attempts and for
-- those logged before this column. Adding a nullable column to the partitioned parent reaches every partition and is
-- a catalogue change only.
ALTER TABLE "fetcher_attempts" ADD COLUMN "exit_proxy" TEXT;
