-- CreateTable
CREATE TABLE "links" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "url" TEXT NOT NULL,
    "initial_url" TEXT NOT NULL,
    "domain" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "paused_until" TIMESTAMPTZ(3),
    "risk_level" INTEGER NOT NULL DEFAULT 0,
    "attempt_count" INTEGER NOT NULL DEFAULT 0,
    "last_attempt_at" TIMESTAMPTZ(3),
    "learning_mode_enabled" BOOLEAN,
    "fetcher" TEXT,
    "selection_source" TEXT,
    "last_error_type" TEXT,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "links_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "fetcher_attempts" (
    "id" BIGSERIAL NOT NULL,
    "link" UUID,
    "url" TEXT NOT NULL,
    "fetcher" TEXT NOT NULL,
    "success" BOOLEAN NOT NULL,
    "is_banned" BOOLEAN NOT NULL DEFAULT false,
    "error_type" TEXT,
    "http_status" INTEGER,
    "response_headers" JSONB,
    "duration_ms" INTEGER,
    "attempted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "selection_source" TEXT,

    CONSTRAINT "fetcher_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "attempt_heuristics" (
    "id" BIGSERIAL NOT NULL,
    "attempt" BIGINT NOT NULL,
    "heuristic_type" TEXT NOT NULL,
    "heuristic_value" TEXT NOT NULL,
    "importance_score" DOUBLE PRECISION,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "attempt_heuristics_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "fetcher_router" (
    "id" SERIAL NOT NULL,
    "domain" TEXT NOT NULL,
    "fetcher" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "fetcher_router_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "fetched_content" (
    "id" BIGSERIAL NOT NULL,
    "link" UUID NOT NULL,
    "body" BYTEA NOT NULL,
    "encoding" TEXT NOT NULL DEFAULT 'br',
    "content_type" TEXT,
    "http_status" INTEGER NOT NULL,
    "final_url" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "size_bytes" INTEGER NOT NULL,
    "fetcher" TEXT NOT NULL,
    "fetched_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "fetched_content_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "links_url_key" ON "links"("url");

-- CreateIndex
CREATE INDEX "idx_links_status" ON "links"("status");

-- CreateIndex
CREATE INDEX "idx_links_domain" ON "links"("domain");

-- CreateIndex
CREATE INDEX "idx_attempts_link" ON "fetcher_attempts"("link");

-- CreateIndex
CREATE INDEX "idx_attempts_url" ON "fetcher_attempts"("url");

-- CreateIndex
CREATE INDEX "idx_attempts_time" ON "fetcher_attempts"("attempted_at" DESC);

-- CreateIndex
CREATE INDEX "idx_heur_type_value" ON "attempt_heuristics"("heuristic_type", "heuristic_value");

-- CreateIndex
CREATE INDEX "idx_heur_attempt" ON "attempt_heuristics"("attempt");

-- CreateIndex
CREATE UNIQUE INDEX "fetcher_router_domain_key" ON "fetcher_router"("domain");

-- CreateIndex
CREATE INDEX "idx_content_link" ON "fetched_content"("link");

-- AddForeignKey
ALTER TABLE "fetcher_attempts" ADD CONSTRAINT "fetcher_attempts_link_fkey" FOREIGN KEY ("link") REFERENCES "links"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "attempt_heuristics" ADD CONSTRAINT "attempt_heuristics_attempt_fkey" FOREIGN KEY ("attempt") REFERENCES "fetcher_attempts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "fetched_content" ADD CONSTRAINT "fetched_content_link_fkey" FOREIGN KEY ("link") REFERENCES "links"("id") ON DELETE CASCADE ON UPDATE CASCADE;
