import { ERROR_TYPES, FETCHERS } from '../contracts/names.js';

/** What happens after a failed attempt, before the per-link attempt limit is applied. */
export type FailureAction = 'retry_now' | 'switch_fetcher' | 'pause' | 'fail';

/**
 * The retry policy as data (documents 003/004 "four cases" plus our additions). Keyed by error type:
 * - retry_now: transient trouble; once at once with the same fetcher, after that pause with the short table.
 * - switch_fetcher: the tool was wrong (an empty or shell page from plain HTTP); once with a browser.
 * - pause: the site pushed back; mark is_banned, raise the risk level, pause by the table and Retry-After.
 * - fail: trying again cannot help; the link fails for good with this error.
 * Error types not listed are treated as transient (UNKNOWN_ERROR_ACTION) so a new fetcher error never loses a link.
 */
export const RETRY_POLICY: Readonly<Record<string, FailureAction>> = {
  [ERROR_TYPES.timeout]: 'retry_now',
  [ERROR_TYPES.networkError]: 'retry_now',
  [ERROR_TYPES.dnsError]: 'retry_now',
  [ERROR_TYPES.httpError]: 'retry_now',
  [ERROR_TYPES.browserError]: 'retry_now',
  [ERROR_TYPES.internal]: 'retry_now',
  [ERROR_TYPES.wrongTool]: 'switch_fetcher',
  [ERROR_TYPES.blockedCaptcha]: 'pause',
  [ERROR_TYPES.blocked403]: 'pause',
  [ERROR_TYPES.rateLimited]: 'pause',
  [ERROR_TYPES.invalidUrl]: 'fail',
  [ERROR_TYPES.urlTooLong]: 'fail',
  [ERROR_TYPES.blockedScheme]: 'fail',
  [ERROR_TYPES.blockedAddress]: 'fail',
  [ERROR_TYPES.tooLarge]: 'fail',
  [ERROR_TYPES.robotsDisallowed]: 'fail',
  [ERROR_TYPES.emptyContent]: 'fail',
  [ERROR_TYPES.tlsError]: 'fail',
  [ERROR_TYPES.redirectLoop]: 'fail',
  [ERROR_TYPES.tooManyRedirects]: 'fail',
  [ERROR_TYPES.unknownFetcher]: 'fail',
  [ERROR_TYPES.noRoute]: 'fail',
};

/** What an error type not in RETRY_POLICY gets. */
export const UNKNOWN_ERROR_ACTION: FailureAction = 'retry_now';

/** Attempts a link gets (all fetchers, all jobs) before it fails for good. */
export const DEFAULT_MAX_ATTEMPTS = 6;

/**
 * The fetcher to try next when a page needed more than `fetcher` could give. Plain HTTP that got a shell or an
 * empty page → a browser; a browser that got a file instead of a page → plain HTTP. A challenge seen by plain HTTP or the ordinary browser → the stealth browser, but only
 * after the pause: switching tools at once would hit a site that just flagged us again within seconds.
 */
export const ESCALATION: Readonly<{ wrongTool: Record<string, string>; download: Record<string, string>; blocked: Record<string, string> }> = {
  wrongTool: { [FETCHERS.simpleHttp]: FETCHERS.playwright },
  /** A browser that was handed a file (Chromium's "Download is starting"): plain HTTP fetches files. */
  download: { [FETCHERS.playwright]: FETCHERS.simpleHttp, [FETCHERS.playwrightStealth]: FETCHERS.simpleHttp },
  blocked: { [FETCHERS.simpleHttp]: FETCHERS.playwrightStealth, [FETCHERS.playwright]: FETCHERS.playwrightStealth },
};

/** The action for an error type. */
export function failureActionFor(errorType: string): FailureAction {
  return RETRY_POLICY[errorType] ?? UNKNOWN_ERROR_ACTION;
}
