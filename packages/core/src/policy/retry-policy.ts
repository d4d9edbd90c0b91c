import { FETCHERS } from '../contracts/names.js';
import { ERROR_TYPES, errorPolicyOf, type FailureAction } from '../contracts/error-codes.js';

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

/**
 * The fetcher a link paused by `errorType` resumes with: the same after a rate limit (it asked for pace, not another
 * tool), the next tool after a block, none (ask the router again) after other trouble. Read by the retry policy and
 * by the reconciler when it rebuilds a paused link's lost job.
 */
export function resumeFetcherAfterPause(errorType: string, fetcher: string): string | undefined {
  if (errorType === ERROR_TYPES.rateLimited) return fetcher;
  return errorPolicyOf(errorType).banRisk ? ESCALATION.blocked[fetcher] : undefined;
}

/** The action for an error type: its row in ERROR_POLICY (internal_error's for a code this build does not know). */
export function failureActionFor(errorType: string): FailureAction {
  return errorPolicyOf(errorType).action;
}
