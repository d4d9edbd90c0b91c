/**
 * Every error code the crawler raises or records, and the one table that says what each means. A code is stored as
 * TEXT on attempts and links, so adding one needs no migration, but it needs a row in ERROR_POLICY: the table is typed
 * over the closed union, so a code nobody decided about does not compile.
 */
export const ERROR_TYPES = {
  // Fetches that produced no response (the fetchers translate undici, Node and Playwright errors into these).
  timeout: 'timeout',
  networkError: 'network_error',
  dnsError: 'dns_error',
  tlsError: 'tls_error',
  tooLarge: 'too_large',
  redirectLoop: 'redirect_loop',
  tooManyRedirects: 'too_many_redirects',
  blockedScheme: 'blocked_scheme',
  blockedAddress: 'blocked_address',
  /** The caller aborted the fetch (shutdown). */
  aborted: 'aborted',
  /** The server's answer was not valid HTTP. */
  protocolError: 'protocol_error',
  /** The body could not be decompressed as its Content-Encoding says. */
  decodeError: 'decode_error',
  browserError: 'browser_error',
  /**
   * The exit failed, not the site: the proxy refused the connection, answered 407 or timed out. The proxy URL is
   * marked unhealthy fleet-wide and the fetch goes out through another URL of the tier; never a fetcher's failure
   * or a site's block.
   */
  proxyUnavailable: 'proxy_unavailable',
  // Responses that came back but are not the page.
  blockedCaptcha: 'blocked_captcha',
  blocked403: 'blocked_403',
  rateLimited: 'rate_limited',
  wrongTool: 'wrong_tool',
  emptyContent: 'empty_content',
  httpError: 'http_error',
  // The pipeline's own verdicts on a link.
  invalidUrl: 'invalid_url',
  /** A URL longer than MAX_URL_LENGTH: refused at enqueue, per URL. */
  urlTooLong: 'url_too_long',
  robotsDisallowed: 'robots_disallowed',
  /**
   * The site could not be reached (its robots.txt unreachable, 5xx or 429) on every check of the attempt budget: each
   * check paused the link and the domain with backoff; only the last one fails the link.
   */
  siteUnreachable: 'site_unreachable',
  noRoute: 'no_route',
  unknownFetcher: 'unknown_fetcher',
  /** The link's crawl was cancelled (written by the cancel statement). */
  crawlCancelled: 'crawl_cancelled',
  /**
   * A page a crawl found redirected off the crawl's scope (a link on example.com answering 301 to another site): its
   * page is not the crawl's to keep, nor its links to follow. Written on a `done` link with no page (the link is
   * settled, not failed); the fetch itself succeeded, and its attempt says so.
   */
  redirectedOffScope: 'redirected_off_scope',
  /**
   * The jobs carrying the link kept dying with their worker (a crash, an out-of-memory kill) or stalling, more often
   * than RECONCILE_MAX_RESCUES: the page is taken to be what kills them, and the link fails instead of looping.
   */
  jobLost: 'job_lost',
  internal: 'internal_error',
  // Programming and configuration errors: raised, never retried.
  invalidConfig: 'invalid_config',
  fetcherInUse: 'fetcher_in_use',
  invalidRoute: 'invalid_route',
  invalidContent: 'invalid_content',
  invalidAttempt: 'invalid_attempt',
  attemptBatchPartial: 'attempt_batch_partial',
  // The data layer (translated once from pg and Prisma errors).
  dbUnavailable: 'db_unavailable',
  dbConstraint: 'db_constraint',
  dbNotFound: 'db_not_found',
  dbConflict: 'db_conflict',
  dbMigration: 'db_migration',
  dbInvalidInput: 'db_invalid_input',
  dbError: 'db_error',
} as const;

/** The closed union of error codes. */
export type ErrorCode = (typeof ERROR_TYPES)[keyof typeof ERROR_TYPES];
/** An error type as stored: text, which may come from an older or newer build. */
export type ErrorType = string;

/**
 * What happens after a failed attempt, before the per-link attempt limit is applied:
 * - retry_now: transient trouble; once at once with the same fetcher, after that pause with the short table.
 * - switch_fetcher: the tool was wrong (an empty or shell page from plain HTTP, a file handed to a browser); once with
 *   the other tool.
 * - pause: the site pushed back; pause the link (and the domain) by the table and Retry-After.
 * - fail: trying again cannot help; the link fails for good with this error.
 */
export type FailureAction = 'retry_now' | 'switch_fetcher' | 'pause' | 'fail';

/** What one error code means for everything that reads it. */
export interface ErrorCodePolicy {
  /** What the fetch pipeline does next; `CrawlerError.retryable` is true for every action but `fail`. */
  readonly action: FailureAction;
  /** The site is blocking us (IP ban risk): the attempt is `is_banned`, pauses take the 10-minute base, not 5. */
  readonly banRisk: boolean;
  /**
   * Whether the attempt is evidence for or against its fetcher in the learned selection and the domain's memory.
   * A rate limit is not: the site asked for less traffic and any fetcher would have been told the same.
   */
  readonly toolEvidence: boolean;
  /**
   * The URL itself is refused (the SSRF guard, a scheme we never fetch, an unparsable URL): every request gets the
   * same answer, so no robots.txt verdict, retry or pause applies.
   */
  readonly refusesUrl: boolean;
  /**
   * Whether an attempt row can carry this code. A site that could not be reached at all (its robots.txt unanswered)
   * saw no request for the page, so no attempt is logged and the attempt log's SQL never needs to single it out.
   */
  readonly loggedAsAttempt: boolean;
}

const policy = (action: FailureAction, extra: Partial<Omit<ErrorCodePolicy, 'action'>> = {}): ErrorCodePolicy => ({
  action,
  banRisk: false,
  toolEvidence: true,
  refusesUrl: false,
  loggedAsAttempt: true,
  ...extra,
});
const RETRY = policy('retry_now');
const FAIL = policy('fail');
const REFUSED = policy('fail', { refusesUrl: true });
const BLOCKED = policy('pause', { banRisk: true });

/**
 * The decision table. Timeouts, resets and 5xx are transient; a refused scheme or address, a redirect loop, an
 * oversized or undecodable body will be the same next time; a configuration or data error is the caller's to fix.
 */
export const ERROR_POLICY: { readonly [C in ErrorCode]: ErrorCodePolicy } = {
  timeout: RETRY,
  network_error: RETRY,
  dns_error: RETRY,
  // A refused certificate is refused to every tool (the browsers check it too): no evidence for or against one.
  tls_error: policy('fail', { toolEvidence: false }),
  too_large: FAIL,
  redirect_loop: FAIL,
  too_many_redirects: FAIL,
  blocked_scheme: REFUSED,
  blocked_address: REFUSED,
  aborted: RETRY,
  protocol_error: RETRY,
  decode_error: FAIL,
  browser_error: RETRY,
  // The exit's fault: no page was asked of the site, so no attempt is logged and nothing is learned from it.
  proxy_unavailable: policy('retry_now', { toolEvidence: false, loggedAsAttempt: false }),
  blocked_captcha: BLOCKED,
  blocked_403: BLOCKED,
  rate_limited: policy('pause', { banRisk: true, toolEvidence: false }),
  wrong_tool: policy('switch_fetcher'),
  empty_content: FAIL,
  http_error: RETRY,
  invalid_url: REFUSED,
  url_too_long: FAIL,
  robots_disallowed: FAIL,
  // "Not now": the domain pauses with its own backoff (core siteUnreachablePause). No page was requested, so it is
  // no evidence about any fetcher.
  site_unreachable: policy('pause', { toolEvidence: false, loggedAsAttempt: false }),
  no_route: FAIL,
  unknown_fetcher: FAIL,
  crawl_cancelled: FAIL,
  // Written on the link only: the attempt that landed off scope is its fetcher's success.
  redirected_off_scope: policy('fail', { loggedAsAttempt: false }),
  job_lost: FAIL,
  // Unexpected trouble is treated as transient, so a bug in one job never loses a link.
  internal_error: RETRY,
  invalid_config: FAIL,
  fetcher_in_use: FAIL,
  invalid_route: FAIL,
  invalid_content: FAIL,
  invalid_attempt: FAIL,
  attempt_batch_partial: FAIL,
  db_unavailable: RETRY,
  db_constraint: FAIL,
  db_not_found: FAIL,
  db_conflict: RETRY,
  db_migration: FAIL,
  db_invalid_input: FAIL,
  db_error: FAIL,
};

/** Every known code. */
export const ERROR_CODES: readonly ErrorCode[] = Object.values(ERROR_TYPES);

/** True when `value` is one of the known codes. */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_POLICY, value);
}

/**
 * The policy of a stored error type. Text read back from storage may name a code this build does not know (written by
 * a newer one): it gets internal_error's policy, transient, so it never loses a link.
 */
export function errorPolicyOf(errorType: string): ErrorCodePolicy {
  return isErrorCode(errorType) ? ERROR_POLICY[errorType] : ERROR_POLICY.internal_error;
}

/** The codes whose policy has `flag` set, for SQL and logs that want them as a list. */
export function errorCodesWhere(flag: Exclude<keyof ErrorCodePolicy, 'action'>, value = true): ReadonlySet<ErrorCode> {
  return new Set(ERROR_CODES.filter((c) => ERROR_POLICY[c][flag] === value));
}
