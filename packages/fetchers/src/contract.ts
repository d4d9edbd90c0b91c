import type { ChallengeEncounter } from './browser/challenge-wait.js';

/** What a caller asks a fetcher for. */
export interface FetchRequest {
  url: string;
  /** Overall deadline for the whole fetch, redirects and body included. Defaults to the fetcher's own. */
  timeoutMs?: number;
  /** Largest body accepted, counted after decompression. Defaults to the fetcher's own (10 MiB). */
  maxBytes?: number;
  /**
   * A longer body is cut to its first `maxBytes` (the rest is not read) instead of failing with `too_large`: for
   * documents whose head is what counts, such as robots.txt (RFC 9309 asks for at least 500 KiB). Plain HTTP only.
   */
  truncate?: boolean;
  /** Extra request headers; they override the fetcher's browser-like defaults. */
  headers?: Record<string, string>;
  /** Abort from outside (worker shutdown, job cancelled). */
  signal?: AbortSignal;
  /** Where the request leaves from. @defaultValue the worker's own address (tier `direct`) */
  exit?: FetchExit;
}

/** An exit: a tier and, unless it is `direct`, the one proxy URL of that tier this request goes through. */
export interface FetchExit {
  tier: string;
  /** `http://`, `https://` or `socks5://`, credentials included; null for the worker's own address. */
  proxyUrl: string | null;
}

/** Timings of one fetch, in epoch and elapsed milliseconds. */
export interface FetchTimings {
  /** Epoch milliseconds when the fetch started. */
  startedAt: number;
  /** Milliseconds until the final response's headers arrived; null when unknown (browser navigations). */
  headersMs: number | null;
  /** Milliseconds for the whole fetch. */
  totalMs: number;
}

/**
 * A response, whatever its status: 403, 429 and 5xx are results, not errors, so the caller can classify
 * them (blocked, rate-limited) with the body in hand.
 */
export interface FetchResult {
  /** Canonical name of the fetcher that produced this result. */
  fetcher: string;
  /** The URL that was asked for. */
  url: string;
  /** The URL after redirects. */
  finalUrl: string;
  status: number;
  /** Response headers of the final (main document) response, lower-case names; repeats joined with ", " (set-cookie with "\n"). */
  headers: Record<string, string>;
  body: Uint8Array;
  /** MIME type without parameters, lower-case (`text/html`), or null when the server sent none. */
  contentType: string | null;
  /** The body decoded with its charset when it is textual; null for binary content (PDF, images). */
  text: string | null;
  /**
   * The charset `text` is decoded with (`decodeText(body, charset)`, from `@crawler/fetchers/decode`), when a fetcher
   * decodes bytes: plain HTTP decodes on first read of `text`, and the fetch worker's analysis thread decodes the
   * bytes itself, so the event loop of a crawl that follows no links never decodes a page. Absent where `text` came
   * as text (a browser's DOM: its document's encoding is `documentCharset`).
   */
  charset?: string;
  /**
   * The encoding the site's document was read in, lower-case, where `body` and `text` are not in it: a browser hands
   * over its rendered DOM in UTF-8 whatever the site sent, and this is its `document.characterSet`. A link's non-ASCII
   * query is percent-encoded in the document's encoding, as browsers do; absent, the document's encoding is `charset`.
   */
  documentCharset?: string;
  /** URLs that answered with a redirect, in order; empty when there was none. */
  redirectChain: string[];
  /**
   * Browsers only, when the first rendered page was a challenge: what it was, whether it cleared within the wait,
   * and every main-frame document the browser landed on (the reload chain), in order.
   */
  challenge?: ChallengeEncounter;
  timings: FetchTimings;
  /** The exit tier the response came through. @defaultValue 'direct' */
  exitTier?: string;
}

/** One way of getting a page. Implementations translate their library's failures into {@link FetchError}s. */
export interface Fetcher {
  readonly name: string;
  fetch(req: FetchRequest): Promise<FetchResult>;
  /** Release pools, browsers and timers. Idempotent. */
  close(): Promise<void>;
}
