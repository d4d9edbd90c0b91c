export { PrismaClient, createPrismaClient, type CreatePrismaClientOptions } from './client.js';
export { Prisma } from './generated/prisma/client.js';
export type { Link, FetcherAttempt, AttemptHeuristic, FetcherRoute, FetchedContent } from './generated/prisma/client.js';
export { DB_ERROR_CODES, NOT_MIGRATED_MESSAGE, dbErrorCodeOf, isInputDbError, isSchemaMissingError, translateDbError, withDbErrors } from './errors.js';
export { migrate, readMigrations, MIGRATION_LOCK_KEY, type MigrateOptions, type MigrateResult, type MigrationFile } from './migrate/migrate.js';
export { locateMigrationsDir } from './migrate/locate.js';
export { dropDatabase, recreateDatabase, withDatabase } from './migrate/databases.js';
export { AttemptStore, DEFAULT_RETENTION_DAYS } from './attempts/attempt-store.js';
export { DomainStateStore, DOMAIN_STATE_SQL, DOMAIN_STATE_WINDOW } from './attempts/domain-state.js';
export { INVALID_ATTEMPT, ATTEMPT_BATCH_PARTIAL, AttemptBatchError } from './attempts/log-attempts.js';
export { scoreAggregates, mergeAliases, type FetcherAggregate, type BestFetcherAnswer } from './attempts/find-best-fetcher.js';
export type {
  StoreDeps,
  AttemptInput,
  LoggedHeuristic,
  FindBestFetcherOptions,
  AttemptStats,
  ProxyStats,
  VelocityBucket,
  PruneResult,
} from './attempts/types.js';
export { ImportanceAnalytics, type HeuristicGain, type ImportanceOptions } from './analytics/importance.js';
export { RouteStore, type Route } from './routes/route-store.js';
export { ContentStore, CONTENT_BROTLI_QUALITY, prepareContentRow, type ContentInput, type StoredContent } from './content/content-store.js';
export { sqlOf, withTransaction, type SqlClient } from './sql.js';
export {
  iterateContent, countContent, iterateVisits, countVisits,
  type ContentExportFilter, type IterateContentOptions, type ExportedPage, type ExportedRevisit, type ExportedVisit,
} from './content/content-export.js';
export { currentExportCursor, cursorSnapshot, isCursorForeign, parseExportCursor, type ExportCursor } from './content/export-cursor.js';
export { OutboxStore, type LinkEvent, type ClaimedEvent, type ReplayFilter, type OutboxStats } from './events/outbox-store.js';
export {
  OutcomeStore, type OutcomeStoreDeps, type OutcomeWrite, type OutcomeHook, type AppliedOutcome, type OutcomeLinkChange, type NotModifiedVisit, type VisitKind,
} from './outcome/outcome-store.js';
export { WriteBatcher, type WriteBatcherOptions, type BatchWriter } from './write-batcher.js';
export { OutcomeBatcher, type OutcomeBatcherOptions, type BatchOutcomeWriter } from './outcome/outcome-batcher.js';
export {
  VersionStore, reopenForRevisit, DEFAULT_KEEP_VERSIONS, DEFAULT_KEEP_VERSIONS_DAYS,
  type PageVersion, type RevisitValidators, type VersionRetention, type ReopenedLink,
} from './versions/version-store.js';
export { LinkStore, READ_ROUTABLE_SQL, type BacklogStatus, type LinkBacklog, type LinkChange, type LinkRecord, type NewLink, type LinkSummary, type StaleLink } from './links/link-store.js';
export {
  CrawlStore,
  OUT_OF_SCOPE_REASONS,
  OUT_OF_SCOPE_SAMPLES_KEPT,
  type OutOfScopeReason,
  type AdmitTally,
  type CrawlRecord,
  type CrawlCounters,
  type CrawlView,
  type FrontierCandidate,
  type AdmitRequest,
  type AdmitResult,
} from './crawls/crawl-store.js';
export { FINISHED_STATUSES, IN_PROGRESS_STATUSES, IN_FLIGHT_STATUSES, sqlList } from './sql-lists.js';
export { pingDatabase } from './health.js';
export { analyzeStaleTables, GROWING_TABLES, type AnalyzedTable, type TableStatsOptions } from './maintenance/table-stats.js';
export { ScheduleStore, type VisitStart, type RefreshResult, type ScheduleSummary } from './schedule/schedule-store.js';
export { storedLinkStates, takeOverStaleLinks } from './schedule/crawl-revisits.js';
export { listLinks, pausedLinksByDomain, resumePausedLinks, reviveFailedLinks, type LinkListItem, type ListLinksQuery, type PausedDomainLinks, type ResumedLink } from './links/link-query.js';
export {
  ensureAttemptPartitions,
  listAttemptPartitions,
  ATTEMPT_PARTITION_AHEAD_DAYS,
  type AttemptPartition,
  type EnsurePartitionsOptions,
  type AttemptPartitionUnit,
} from './maintenance/attempt-partitions.js';
