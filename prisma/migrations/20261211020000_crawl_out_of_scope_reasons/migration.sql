-- A crawl's links refused by its rules, counted by the rule that refused them: out_of_scope lumped another site (host,
-- origin) than the seeds', no include matched, an exclude matched and rel=nofollow, so a crawl that stopped early did
-- not say which rule stopped it. Their sum is out_of_scope for links counted from now on (0 for a crawl's earlier ones).
-- Constant defaults: no table rewrite, the ALTER holds its lock for an instant.
ALTER TABLE "crawls"
  ADD COLUMN "out_of_scope_by_scope" BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN "out_of_scope_by_include" BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN "out_of_scope_by_exclude" BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN "out_of_scope_by_nofollow" BIGINT NOT NULL DEFAULT 0,
  -- The first few distinct URLs each rule refused, {"exclude": ["https://…", …], …}: bounded by the store.
  ADD COLUMN "out_of_scope_samples" JSONB NOT NULL DEFAULT '{}';
