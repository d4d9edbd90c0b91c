import { DAY_MS } from '../contracts/clock.js';
import { FETCHERS, SELECTION_SOURCES, canonicalFetcherName } from '../contracts/names.js';
import { ERROR_TYPES } from '../contracts/error-codes.js';
import { isToolEvidence } from '../policy/rate-limit.js';

/** One recent attempt on a domain, as the domain-state query returns it (newest first). */
export interface DomainAttempt {
  fetcher: string;
  success: boolean;
  isBanned: boolean;
  errorType: string | null;
  selectionSource: string | null;
  attemptedAt: Date;
  /**
   * The `section` heuristic logged with the attempt ("example.com/blog"); null or absent for a site's root and for
   * attempts logged before sections (learning scopeLearned).
   */
  section?: string | null;
}

/** A fetcher's recent record on one domain. */
export interface DomainFetcherState {
  fetcher: string;
  /** Attempts in the window read. */
  attempts: number;
  successes: number;
  /** The fetcher's latest attempt on the domain. */
  last: { success: boolean; isBanned: boolean; errorType: string | null; attemptedAt: Date };
  lastSuccessAt: Date | null;
  /**
   * The latest success that fresh evidence chose (a probe, an escalation, a route table) rather than a remembered or
   * learned choice: when the site last showed it NEEDS this fetcher, not merely that it still works.
   */
  lastVerifiedAt: Date | null;
}

/** Where a decision came from when the router reuses a domain's own latest working browser. Stored as text. */
export const DOMAIN_MEMORY_SOURCE = SELECTION_SOURCES.domainMemory;

/** Selection sources that re-use earlier evidence; successes chosen by them do not re-verify a fetcher. */
const REMEMBERED_SOURCES = new Set<string>([SELECTION_SOURCES.learned, DOMAIN_MEMORY_SOURCE]);

/**
 * Days after which a browser choice for a domain is checked again with the cheap probe. A browser also succeeds on a
 * page that no longer needs it (an SPA that moved to server rendering), so success alone never sends a domain back
 * to plain HTTP; a re-check costs one probe per domain per period. 21 days leaves room for the gap between pages
 * within the 30-day half-life's promise. The stealth browser is re-checked less often: the probe of a bot wall that
 * is still up is a request the site refuses (a block).
 */
export const REVERIFY_AFTER_DAYS: Readonly<Record<string, number>> = {
  [FETCHERS.playwright]: 21,
  [FETCHERS.playwrightStealth]: 60,
};
/** Re-check period for other non-HTTP fetchers. */
export const DEFAULT_REVERIFY_AFTER_DAYS = 21;

/** Error types that say the site refused this fetcher or the fetcher was the wrong tool for it. */
const DISQUALIFYING_ERRORS = new Set<string>([ERROR_TYPES.wrongTool, ERROR_TYPES.blockedCaptcha, ERROR_TYPES.blocked403]);

/**
 * Summarise a domain's recent attempts (newest first, as read) per canonical fetcher. Rate-limited attempts are left
 * out: the site asked for pace, which says nothing about the fetcher (a 429 must not disqualify a working browser).
 */
export function summarizeDomainAttempts(attempts: readonly DomainAttempt[]): Map<string, DomainFetcherState> {
  const out = new Map<string, DomainFetcherState>();
  const sorted = attempts.filter((a) => isToolEvidence(a.errorType)).sort((a, b) => b.attemptedAt.getTime() - a.attemptedAt.getTime());
  for (const a of sorted) {
    const name = canonicalFetcherName(a.fetcher);
    let s = out.get(name);
    if (!s) {
      s = { fetcher: name, attempts: 0, successes: 0, last: { success: a.success, isBanned: a.isBanned, errorType: a.errorType, attemptedAt: a.attemptedAt }, lastSuccessAt: null, lastVerifiedAt: null };
      out.set(name, s);
    }
    s.attempts += 1;
    if (!a.success) continue;
    s.successes += 1;
    s.lastSuccessAt ??= a.attemptedAt;
    if (s.lastVerifiedAt === null && !REMEMBERED_SOURCES.has(a.selectionSource ?? '')) s.lastVerifiedAt = a.attemptedAt;
  }
  return out;
}

/**
 * The documents' `is_banned` rationale applied per domain: a fetcher whose latest attempt on the domain was banned
 * or the wrong tool is not chosen from learned data until it has worked there again.
 */
export function isDisqualified(state: DomainFetcherState | undefined): boolean {
  if (!state) return false;
  return !state.last.success && (state.last.isBanned || DISQUALIFYING_ERRORS.has(state.last.errorType ?? ''));
}

/**
 * Whether a browser fetcher's record on this domain is too old to trust without a new probe: the domain has used
 * it, but fresh evidence last showed it was needed more than its re-check period ago. Plain HTTP never goes stale
 * (a wrong tool is caught by the fetch worker's switch), nor does a fetcher the domain has not used.
 */
export function needsReverification(state: DomainFetcherState | undefined, now: Date, periods: Readonly<Record<string, number>> = REVERIFY_AFTER_DAYS): boolean {
  if (!state || state.fetcher === FETCHERS.simpleHttp) return false;
  const days = periods[state.fetcher] ?? DEFAULT_REVERIFY_AFTER_DAYS;
  if (state.lastVerifiedAt === null) return true;
  return now.getTime() - state.lastVerifiedAt.getTime() > days * DAY_MS;
}

/**
 * The domain's own latest working browser, for a domain with too few attempts for a confident learned score: the
 * fetcher of the domain's most recent success, when that is a browser whose latest attempt succeeded and whose need
 * was verified within its re-check period. Null sends the router to the probe, which is free for a plain-HTTP site
 * (its body is reused) and so is never worth remembering.
 */
export function rememberedFetcher(states: ReadonlyMap<string, DomainFetcherState>, now: Date, opts: { avoid?: string | null; periods?: Readonly<Record<string, number>> } = {}): DomainFetcherState | null {
  let newest: DomainFetcherState | null = null;
  for (const s of states.values()) {
    if (s.lastSuccessAt && (!newest || s.lastSuccessAt.getTime() > newest.lastSuccessAt!.getTime())) newest = s;
  }
  if (!newest || newest.fetcher === FETCHERS.simpleHttp || newest.fetcher === opts.avoid) return null;
  if (!newest.last.success || needsReverification(newest, now, opts.periods)) return null;
  return newest;
}
