import { detectChallenge, type ChallengeVerdict } from './detect-challenge.js';
import { detectContentFamily } from './content-family.js';
import { decodeBody, MAX_ANALYSED_BYTES } from './decode-body.js';
import { detectPaywall } from './detect-paywall.js';
import { detectSpa } from './detect-spa.js';
import { extractPageFeatures, textWeight, type PageFeatures } from './page-features.js';
import { SPA_MAX_VISIBLE_CHARS } from './spa-signatures.js';
import type { ResponseSnapshot, ValidationResult } from './types.js';

/**
 * Statuses that are a block by themselves: 403, and 406 too: it is the default deny of Fastly's
 * Next-Gen WAF (Signal Sciences) and of ModSecurity on many shared hosts, while a crawler's GET with a broad
 * Accept header practically never fails real content negotiation; and 999, LinkedIn's (and a few others') answer to a
 * client it takes for a bot, which no standard defines and which is not a server error.
 */
export const BLOCK_STATUSES: ReadonlySet<number> = new Set([403, 406, 429, 999]);

/**
 * A 503 whose page is all script (the markup at least this share code, hardly any text) is a wall's interstitial even
 * when no signature knows its family: an outage page says something, a "checking your browser" page only runs.
 */
export const SCRIPT_WALL_MIN_RATIO = 0.5;

export interface ValidateOptions {
  /** Bytes analysed. @defaultValue MAX_ANALYSED_BYTES (2 MiB) */
  maxBytes?: number;
}

/** A validation with the evidence behind it, for `explain` and the classify command. */
export interface ValidationDetail {
  result: ValidationResult;
  challenge: ChallengeVerdict;
  page: PageFeatures | null;
}

/** Lower-case header names (callers should already, but a stray "Server" must not hide a marker). */
function lowerHeaders(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h ?? {})) out[k.toLowerCase()] = String(v);
  return out;
}

/** A body with nothing but whitespace (or nothing). Stops at the first other byte, so large bodies cost nothing. */
function isBlankBody(body: string | Uint8Array): boolean {
  if (typeof body === 'string') return !/\S/.test(body);
  for (let i = 0; i < body.length; i++) {
    const b = body[i] as number;
    if (b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) return false;
  }
  return true;
}

/** validateResponse plus the evidence. */
export function validateResponseDetailed(r: ResponseSnapshot, opts: ValidateOptions = {}): ValidationDetail {
  const headers = lowerHeaders(r.headers);
  const maxBytes = opts.maxBytes ?? MAX_ANALYSED_BYTES;
  const contentType = headers['content-type'];
  const head = typeof r.body === 'string' ? r.body.slice(0, 512) : r.body.subarray(0, 512);
  const contentFamily = detectContentFamily(contentType, head);
  const isHtml = contentFamily === 'html';
  const page = isHtml ? extractPageFeatures(decodeBody(r.body, contentType, maxBytes)) : null;
  const challenge = detectChallenge(page, headers, r.status);
  // Non-HTML content (PDF, image, JSON…) has no visible text by nature and is never "empty"; a
  // response with no body at all (a 204, a blank 200) is, whatever it claims to be.
  const isEmpty = (isHtml && textWeight(page?.visibleText ?? '') < SPA_MAX_VISIBLE_CHARS) || isBlankBody(r.body);
  const scriptWall = !challenge.isChallenge && r.status === 503 && page !== null && isEmpty && page.scriptRatio >= SCRIPT_WALL_MIN_RATIO;
  const isChallenge = challenge.isChallenge || scriptWall;
  const statusBlock = BLOCK_STATUSES.has(r.status);
  const isBlocked = isChallenge || statusBlock;
  const spa = page && !isBlocked ? detectSpa(page) : { hasSpa: false, framework: null };
  const visibleTextLength = page?.visibleText.length ?? 0;
  // A wall's refusal served with 429 is its rate limit's page (Cloudflare's 1015, "You are being rate limited"): pace
  // gets past it, another tool does not. A 429 that is a check or a captcha (Kasada, Google's /sorry) stays a challenge.
  const rateLimitPage = r.status === 429 && challenge.kind === 'refusal';
  const result: ValidationResult = {
    isBlocked,
    blockType: isChallenge && !rateLimitPage ? 'blocked_captcha' : r.status === 429 ? 'rate_limited' : statusBlock ? 'blocked_403' : null,
    // A wall no signature knows has no vendor.
    blockVendor: isBlocked && !scriptWall ? challenge.vendor : null,
    hasSpa: spa.hasSpa,
    framework: spa.framework,
    isEmpty,
    isHtml,
    visibleTextLength,
    contentFamily,
    scriptRatio: page?.scriptRatio ?? 0,
    hasPaywall: page ? detectPaywall(page) : false,
  };
  return { result, challenge, page };
}

/**
 * What a response is: a bot wall (challenge page →
 * blocked_captcha; bare 403/406 → blocked_403; bare 429 → rate_limited), a client-rendered shell, empty HTML, or
 * content. A challenge served with 429 is still a challenge, save a refusal (a wall's rate-limit page): rate_limited. Pure and
 * total: any status, headers and body give a result, never an exception.
 */
export function validateResponse(r: ResponseSnapshot, opts: ValidateOptions = {}): ValidationResult {
  return validateResponseDetailed(r, opts).result;
}
