-- Links refused because their path repeats itself (/deep/a/a/a/: a crawler trap that only goes deeper into one page),
-- counted apart from the scope's rules. Part of out_of_scope, as the other reasons are. Constant default: no rewrite.
ALTER TABLE "crawls" ADD COLUMN "out_of_scope_by_trap" BIGINT NOT NULL DEFAULT 0;
