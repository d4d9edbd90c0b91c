import { FETCHERS } from '../contracts/names.js';
import type { ResponseSnapshot, ValidationResult } from '../validation/types.js';
import { validateResponse } from '../validation/validate-response.js';
import { hasReadableRetryAfter, isRateLimitResponse } from '../policy/rate-limit.js';

/** The probe's verdict: the fetcher to use, and whether the probe's own body can stand for the page. */
export interface ProbeClassification {
  /** The fetcher to use for the real fetch. */
  fetcher: string;
  /** Whether the probe's body can be stored as the fetch result instead of fetching again. */
  reuse: boolean;
  /**
   * probe_failed, blocked_captcha, blocked_403, rate_limited, http_<status>, non_html_content, spa_shell, empty_html,
   * static_html or small_body. On rate_limited the router pauses the link and the domain before any fetch.
   */
  reason: string;
  validation: ValidationResult | null;
}

export type ProbeInput = { response: ResponseSnapshot } | { error: { errorType: string; message: string } };

/** A 200 bigger than this many bytes is real content for plain HTTP: smaller is an error stub or a redirect page. */
export const MIN_REUSABLE_BODY_BYTES = 500;

function byteLength(body: string | Uint8Array): number {
  return typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.byteLength;
}

/** 4xx answers that say something final about the URL; 408, 425 and 429 ask to try again (403 is a block, handled before). */
function isDefinitiveClientError(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 425 && status !== 429;
}

/**
 * Choose a fetcher from a cheap probe (docs/design.md says where this departs from the design): a rate limit (429,
 * or 503 with Retry-After, without a challenge page) → simple_http, as it asks for pace rather than another tool; a
 * challenge or a 403 → playwright_stealth; a client error (404, 410…) → simple_http WITH reuse (it is the page's answer; a
 * browser will not fix it), a server error → simple_http without reuse (the fetch's request is its retry); non-HTML content → simple_http WITH reuse (a PDF has no visible text and needs no browser); an SPA shell or
 * empty HTML → playwright; a 2xx over 500 bytes → simple_http with reuse; probe failure → simple_http, no reuse.
 */
export function classifyProbe(input: ProbeInput): ProbeClassification {
  if ('error' in input) return { fetcher: FETCHERS.simpleHttp, reuse: false, reason: 'probe_failed', validation: null };
  const r = input.response;
  const v = validateResponse(r);
  const ok = r.status >= 200 && r.status < 300;
  const headers = Object.fromEntries(Object.entries(r.headers ?? {}).map(([k, val]) => [k.toLowerCase(), String(val)]));
  if (v.blockType === 'rate_limited' || (!v.isBlocked && isRateLimitResponse(r.status, hasReadableRetryAfter(headers['retry-after'])))) {
    return { fetcher: FETCHERS.simpleHttp, reuse: false, reason: 'rate_limited', validation: v };
  }
  if (v.isBlocked) return { fetcher: FETCHERS.playwrightStealth, reuse: false, reason: v.blockType ?? 'blocked', validation: v };
  // A client error (404, 410, 401…) is the page's own answer and the fetch would get it again: storing it keeps the
  // page at one request. A server error is not reused: the fetch's own request is the retry it deserves.
  if (!ok) return { fetcher: FETCHERS.simpleHttp, reuse: isDefinitiveClientError(r.status), reason: `http_${r.status}`, validation: v };
  if (!v.isHtml) return { fetcher: FETCHERS.simpleHttp, reuse: true, reason: 'non_html_content', validation: v };
  if (v.hasSpa) return { fetcher: FETCHERS.playwright, reuse: false, reason: 'spa_shell', validation: v };
  if (v.isEmpty) return { fetcher: FETCHERS.playwright, reuse: false, reason: 'empty_html', validation: v };
  if (byteLength(r.body) > MIN_REUSABLE_BODY_BYTES) return { fetcher: FETCHERS.simpleHttp, reuse: true, reason: 'static_html', validation: v };
  return { fetcher: FETCHERS.simpleHttp, reuse: false, reason: 'small_body', validation: v };
}
