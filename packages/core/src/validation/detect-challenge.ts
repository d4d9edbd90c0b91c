import type { PageFeatures } from './page-features.js';
import { detectSpa } from './detect-spa.js';
import {
  CAPTCHA_WIDGETS,
  CHALLENGE_SCORE_THRESHOLD,
  CHALLENGE_SIGNATURES,
  LONG_CHALLENGE_TEXT_CHARS,
  MAX_CHALLENGE_TEXT_CHARS,
  type ChallengeKind,
  type ChallengeKindMarker,
  type ChallengeSignature,
} from './challenge-signatures.js';

/** One vendor's evidence. */
export interface VendorScore {
  vendor: string;
  score: number;
  decisive: boolean;
  /** An `anyLength` marker matched: the score counts whatever the page's length. */
  anyLength: boolean;
  /** Indexes of matched markers in the signature, for explain/debugging. */
  matched: number[];
}

export interface ChallengeVerdict {
  isChallenge: boolean;
  /** The vendor whose signature decided, or the best-scoring vendor with any evidence (useful on a bare 403). */
  vendor: string | null;
  /**
   * What the challenge waits for (null when the page is not one): only an `interstitial` can clear by itself, so a
   * browser waits on nothing else.
   */
  kind: ChallengeKind | null;
  scores: VendorScore[];
}

/**
 * Statuses a challenge never comes with: a 404 or an origin error (500, 502, 504, Cloudflare's 52x) is not a bot
 * wall even when the CDN's error page looks like one. Only decisive headers count then.
 */
function statusExcludesChallenge(status: number): boolean {
  return status === 404 || status === 410 || (status >= 500 && status !== 503);
}

function markerMatches(m: Pick<ChallengeKindMarker, 'in' | 'header' | 'pattern'>, page: PageFeatures, headers: Record<string, string>): boolean {
  switch (m.in) {
    case 'html':
      return m.pattern.test(page.markupLower);
    case 'title':
      return m.pattern.test(page.title);
    case 'text':
      return m.pattern.test(page.visibleText);
    case 'header': {
      const v = m.header ? headers[m.header] : undefined;
      return v !== undefined && m.pattern.test(v);
    }
  }
}

function scoreVendor(sig: ChallengeSignature, page: PageFeatures | null, headers: Record<string, string>): VendorScore {
  let score = 0;
  let decisive = false;
  let anyLength = false;
  const matched: number[] = [];
  sig.markers.forEach((m, i) => {
    // Only headers can speak for a body that is not HTML or too long to be a challenge page (and skipping the
    // body markers there keeps a 2 MiB article cheap).
    if (m.in !== 'header' && (page === null || (page.visibleText.length > MAX_CHALLENGE_TEXT_CHARS && !m.anyLength))) return;
    if (m.in !== 'header' && sig.notOnDataForms && (page?.dataFieldCount ?? 0) > 0) return;
    if (m.maxTextChars !== undefined && (page?.visibleText.length ?? 0) > m.maxTextChars) return;
    if (!markerMatches(m, page as PageFeatures, headers)) return;
    score += m.weight;
    matched.push(i);
    if (m.decisive) decisive = true;
    if (m.anyLength) anyLength = true;
  });
  return { vendor: sig.vendor, score, decisive, anyLength, matched };
}

/**
 * Decide whether a response is a bot wall. `page` is null for non-HTML bodies (only headers can speak then).
 * Size gate: challenge pages carry little visible text, so a long article quoting challenge markup is not one;
 * markup inside <pre>, <code> and <textarea> is quoted, not live, and is ignored by 'html' markers.
 */
export function detectChallenge(
  page: PageFeatures | null,
  headers: Record<string, string>,
  status: number,
  signatures: readonly ChallengeSignature[] = CHALLENGE_SIGNATURES,
): ChallengeVerdict {
  // Generic evidence (a cookie and a reload) does not count on a framework's shell: apps write cookies and reload for
  // their own reasons (consent, RUM sessions, stale chunks). Vendor signatures still do.
  const appShell = page !== null && isFrameworkShell(page);
  const usable = appShell ? signatures.filter((s) => !s.fallback) : signatures;
  const scores = usable.map((s) => scoreVendor(s, page, headers)).filter((s) => s.score > 0);
  const fallback = new Set(signatures.filter((s) => s.fallback).map((s) => s.vendor));
  const isFallback = (s: VendorScore): number => (fallback.has(s.vendor) ? 1 : 0);
  scores.sort((a, b) => Number(b.decisive) - Number(a.decisive) || isFallback(a) - isFallback(b) || b.score - a.score);
  const textLength = page?.visibleText.length ?? 0;
  const excluded = statusExcludesChallenge(status);
  const allowedDespiteStatus = new Set(signatures.filter((s) => s.alsoOnStatuses?.includes(status)).map((s) => s.vendor));
  const winner = scores.find((s) => {
    if (s.decisive) return true;
    if ((excluded && !allowedDespiteStatus.has(s.vendor)) || page === null) return false;
    if (s.anyLength) return s.score >= CHALLENGE_SCORE_THRESHOLD;
    const needed = textLength > LONG_CHALLENGE_TEXT_CHARS ? 2 * CHALLENGE_SCORE_THRESHOLD : CHALLENGE_SCORE_THRESHOLD;
    return s.score >= needed && textLength <= MAX_CHALLENGE_TEXT_CHARS;
  });
  if (winner) return { isChallenge: true, vendor: vendorName(winner, page), kind: kindOf(usable.find((s) => s.vendor === winner.vendor)!, page, headers), scores };
  return { isChallenge: false, vendor: scores[0] ? vendorName(scores[0], page) : null, kind: null, scores };
}

/** The kind of the page `sig` named: its first kind marker that matches, else its own kind. */
function kindOf(sig: ChallengeSignature, page: PageFeatures | null, headers: Record<string, string>): ChallengeKind {
  const found = sig.kinds?.find((m) => (m.in === 'header' || page !== null) && markerMatches(m, page as PageFeatures, headers));
  return found?.kind ?? sig.kind ?? 'interstitial';
}

/** A client-rendered shell with a framework's own marker or mount point (not merely "some script, no text"). */
function isFrameworkShell(page: PageFeatures): boolean {
  const spa = detectSpa(page);
  return spa.hasSpa && spa.framework !== 'generic';
}

function vendorName(s: VendorScore, page: PageFeatures | null): string {
  if (s.vendor !== 'captcha_gate') return s.vendor;
  const html = page?.markupLower ?? '';
  return CAPTCHA_WIDGETS.find(([re]) => re.test(html))?.[1] ?? 'generic';
}
