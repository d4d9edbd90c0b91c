-- An attempt that got no response records why, in words: `error_type` says network_error, `error_message` says
-- "UND_ERR_SOCKET: other side closed (the body ended after 18 of 5000 bytes)". Until now that cause was only in the
-- worker's log, and a link that failed with max_attempts:network_error could not say what the network did. NULL for
-- attempts with a response and for those logged before this column. Adding a nullable column to the partitioned
-- parent reaches every partition and is a catalogue change only.
ALTER TABLE "fetcher_attempts" ADD COLUMN "error_message" TEXT;
