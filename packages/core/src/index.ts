export * from './contracts/names.js';
export * from './contracts/error-codes.js';
export * from './contracts/clock.js';
export * from './contracts/errors.js';
export * from './contracts/logger.js';
export * from './contracts/scoring.js';
export * from './contracts/politeness.js';
export * from './contracts/metrics.js';

export { normalizeUrl, domainOf, MAX_URL_LENGTH } from './url/normalize-url.js';
export { parseHttpUrl } from './url/parse-http-url.js';
export {
  extractUrlHeuristics,
  describeUrl,
  URL_HEURISTIC_EXTRACTORS,
  VIDEO_PLATFORM_DOMAINS,
  DEEP_PATH_MIN_SEGMENTS,
  COMPLEX_QUERY_MIN_LENGTH,
  SECTION_HEURISTIC,
  SECTION_SEGMENT_MAX_CHARS,
  sectionOf,
  sectionOfUrl,
  type UrlHeuristicExtractor,
  type UrlParts,
} from './url/url-heuristics.js';
export {
  LEARNING_DEFAULTS,
  decayWeight,
  documentSuccessRate,
  sampleFactor,
  scoreFetchers,
  scoreTallies,
  type FetcherTally,
  isConfident,
  type ScoredAttempt,
  type ScoreOptions,
} from './scoring/score-fetchers.js';
export {
  pauseDurationMs,
  parseRetryAfterMs,
  DEFAULT_MAX_PAUSE_MS,
  BLOCK_BASE_PAUSE_MS,
  TRANSIENT_BASE_PAUSE_MS,
  DEFAULT_RATE_LIMIT_MIN_PAUSE_MS,
  BAN_RISK_ERROR_TYPES,
  type PauseOptions,
} from './backoff/pause-duration.js';
export {
  DEFAULT_MAX_ATTEMPTS,
  ESCALATION,
  failureActionFor,
  resumeFetcherAfterPause,
} from './policy/retry-policy.js';
export {
  NOT_TOOL_EVIDENCE_ERROR_TYPES,
  isToolEvidence,
  isRateLimitResponse,
  hasReadableRetryAfter,
  rateLimitPause,
  rateLimitPauseMs,
  pushbackPause,
  retryAfterMsOf,
  type PushbackPause,
  type RateLimitPauseInput,
} from './policy/rate-limit.js';
export { siteUnreachablePause, DEFAULT_UNREACHABLE_BASE_PAUSE_MS, type SiteUnreachableInput, type SiteUnreachableDecision } from './policy/site-unreachable.js';
export { wallVerdict, wallPauseMs, DEFAULT_WALL_MAX_WAIT_MS, type WallStreak, type WallVerdict } from './policy/wall-give-up.js';
export { decideOutcome, type OutcomeInput, type OutcomeDecision, type OutcomeKind } from './policy/decide-outcome.js';
export { safeResponseHeaders, archivedResponseHeaders, SAFE_RESPONSE_HEADERS, MAX_SAFE_HEADER_VALUE_LENGTH, MAX_ARCHIVED_HEADER_VALUE_LENGTH, MAX_ARCHIVED_HEADERS } from './http/safe-headers.js';
export { revisitValidators, usableLastModified, type ValidatorSource, type UsableValidators } from './http/revisit-validators.js';
export type { ResponseSnapshot, ValidationResult, BlockType } from './validation/types.js';
export { validateResponse, validateResponseDetailed, BLOCK_STATUSES, type ValidateOptions, type ValidationDetail } from './validation/validate-response.js';
export { extractResponseHeuristics, SERVER_FAMILIES, HIGH_SCRIPT_RATIO } from './validation/response-heuristics.js';
export { detectChallenge, type ChallengeVerdict, type VendorScore } from './validation/detect-challenge.js';
export {
  CHALLENGE_SIGNATURES,
  CAPTCHA_WIDGETS,
  CHALLENGE_SCORE_THRESHOLD,
  MAX_CHALLENGE_TEXT_CHARS,
  LONG_CHALLENGE_TEXT_CHARS,
  type ChallengeKind,
  type ChallengeKindMarker,
  type ChallengeMarker,
  type ChallengeSignature,
} from './validation/challenge-signatures.js';
export { detectSpa, type SpaVerdict } from './validation/detect-spa.js';
export { tagAttributes, anyOf, type TextPattern, type TagAttributePattern, type AnyPattern } from './validation/tag-scan.js';
export { SPA_SIGNATURES, SPA_MAX_VISIBLE_CHARS, type SpaSignature } from './validation/spa-signatures.js';
export { detectPaywall, PAYWALL_MARKERS } from './validation/detect-paywall.js';
export { detectContentFamily, mimeOf, type ContentFamily } from './validation/content-family.js';
export { bodyCharset, decodeBody, declaredCharset, undeclaredCharset, charsetOf, decodeWindows1252, isWindows1252Label, knownCharset, metaCharsetLabel, MAX_ANALYSED_BYTES } from './validation/decode-body.js';
export { extractPageFeatures, collapseWhitespace, MAX_SRCDOC_DEPTH, type PageFeatures } from './validation/page-features.js';
export { classifyProbe, MIN_REUSABLE_BODY_BYTES, type ProbeClassification, type ProbeInput } from './probe/classify-probe.js';
export * from './learning/index.js';
export { CRAWL_SCOPES, compileScope, compileUrlPattern, registrableDomainOf, siteOf, type CrawlScope, type ScopeRules, type ScopeMatcher, type ScopeVerdict } from './crawl/crawl-scope.js';
export {
  DEFAULT_TRACKING_PARAMS,
  compileTrackingParams,
  stripTrackingParams,
  canonicalCrawlUrl,
  frontierKey,
  type TrackingParamFilter,
} from './crawl/crawl-url.js';
export { MAX_SEGMENT_REPEATS, isRepeatingPath } from './crawl/crawl-traps.js';
export { encodeQueryIn } from './crawl/query-encoding.js';
export { extractLinks, robotsHeaderNofollow, type ExtractedLink, type ExtractLinksOptions, type PageLinks } from './crawl/extract-links.js';
export { limitHtmlNesting, MAX_READABLE_DEPTH } from './crawl/limit-nesting.js';
export { extractXmlLinks, looksLikeFeed, type XmlDocumentKind, type XmlPageLinks } from './crawl/extract-feed-links.js';
export { extractJsonFeedLinks } from './crawl/extract-json-feed-links.js';
export { parseLastmod, parseSitemap, sitemapsFromRobots, type SitemapEntries } from './crawl/sitemap.js';
export {
  parseEnv,
  envSchema,
  composeEnv,
  envGroup,
  optionalIntVar,
  camelCaseEnvName,
  showEnvValue,
  ConfigError,
  boolVar,
  intVar,
  fractionVar,
  urlVar,
  parsedVar,
  logLevelVar,
  databaseUrlVar,
  redisUrlVar,
  queuePrefixVar,
  MAX_TIMER_MS,
  MAX_DURATION_MS,
  MAX_RETENTION_DAYS,
  DATABASE_ENV,
  DEFAULT_DATABASE_POOL_SIZE,
  LOG_LEVELS,
  type EnvSource,
  type EnvVars,
  type EnvConfig,
  type EnvValues,
  type EnvGroup,
  type EnvValuesOf,
  type EnvConcern,
  type ConcernConfig,
  type CamelCaseEnvName,
  type ConfigIssue,
} from './config/env.js';
export * from './schedule/revisit-policy.js';
export * from './schedule/sitemap-freshness.js';
export * from './exits/index.js';
export { Semaphore } from './concurrency/semaphore.js';
export { sharedWhilePending, withTimeout } from './concurrency/bounded-wait.js';
export { BoundedMap } from './collections/bounded-map.js';
export { dependencyCheck, type DependencyCheckLogger, type DependencyCheckOptions } from './health/check-dependency.js';
