/** A fetched response as the pure core sees it. Header names are lower-case. */
export interface ResponseSnapshot {
  status: number;
  /** Lower-case header names; a repeated header joined with ", ". */
  headers: Record<string, string>;
  /** The body as received (bytes are decoded with the response's charset) or already decoded text. */
  body: string | Uint8Array;
  /** The final URL after redirects, when known. */
  url?: string;
}

/**
 * Why a response is blocked: a challenge page, a refusal (403/406), or a rate limit (429), which asks for pace rather
 * than another tool.
 */
export type BlockType = 'blocked_captcha' | 'blocked_403' | 'rate_limited';

/** What a response tells us: blocked or not and by whom, an app shell, empty, its content family. */
export interface ValidationResult {
  /** A challenge page, a 403/406 or a 429 (a rate limit is a block for pausing and `is_banned`, not for the tool). */
  isBlocked: boolean;
  blockType: BlockType | null;
  /** The bot-protection vendor whose challenge this is (cloudflare, datadome, …), when recognised. */
  blockVendor: string | null;
  /** An HTML shell that needs JavaScript to show content (framework marker and < 200 chars visible text). */
  hasSpa: boolean;
  /** The framework of the shell (react, vue, next, nuxt, angular, svelte, generic), when hasSpa. */
  framework: string | null;
  /**
   * HTML with under 200 characters of visible text (CJK characters counting double), or a response with no body at
   * all (a 204, a blank 200). Never true for non-HTML content that has a body.
   */
  isEmpty: boolean;
  isHtml: boolean;
  /** Characters of visible text (whitespace collapsed) after removing script, style, template, noscript, svg. */
  visibleTextLength: number;
  /** html, pdf, image, video, audio, json, xml, text or binary. */
  contentFamily: string;
  /** Bytes inside <script> elements over the HTML's bytes (0 for non-HTML). */
  scriptRatio: number;
  /** Subscription-wall markers present. */
  hasPaywall: boolean;
}
