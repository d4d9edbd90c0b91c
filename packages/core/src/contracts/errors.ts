import type { ErrorType } from './names.js';

/** Context carried by every crawler error, so logs and link records say where it happened. */
export interface CrawlerErrorContext {
  url?: string;
  fetcher?: string;
  status?: number;
  cause?: unknown;
}

/**
 * Base of every error the crawler raises on purpose. `code` is the stable error type recorded on attempts
 * and links; `retryable` says whether trying again later can help. Third-party errors are translated into
 * these once, at the edge (fetchers, stores), and wrapped as `cause`.
 */
export class CrawlerError extends Error {
  override name = 'CrawlerError';
  readonly code: ErrorType;
  readonly retryable: boolean;
  readonly url?: string;
  readonly fetcher?: string;
  readonly status?: number;

  constructor(code: ErrorType, message: string, context: CrawlerErrorContext = {}, retryable = false) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.code = code;
    this.retryable = retryable;
    this.url = context.url;
    this.fetcher = context.fetcher;
    this.status = context.status;
  }

  /** A plain object for logs and job results (errors do not survive JSON.stringify). */
  toJSON(): Record<string, unknown> {
    return { name: this.name, code: this.code, message: this.message, retryable: this.retryable, url: this.url, fetcher: this.fetcher, status: this.status };
  }
}

/** Transient: the same request may succeed if tried again (timeouts, resets, 5xx). */
export class RetryableError extends CrawlerError {
  override name = 'RetryableError';
  constructor(code: ErrorType, message: string, context: CrawlerErrorContext = {}) {
    super(code, message, context, true);
  }
}

/** Permanent: trying again cannot help (bad scheme, refused address, too large). */
export class NonRetryableError extends CrawlerError {
  override name = 'NonRetryableError';
  constructor(code: ErrorType, message: string, context: CrawlerErrorContext = {}) {
    super(code, message, context, false);
  }
}

/** The site pushed back (challenge page, 403): back off before asking again. */
export class BlockedError extends CrawlerError {
  override name = 'BlockedError';
  constructor(code: ErrorType, message: string, context: CrawlerErrorContext = {}) {
    super(code, message, context, true);
  }
}

/** The site rate-limited us (429, or 503 with Retry-After); `retryAfterMs` is what it asked for, when it said. */
export class RateLimitedError extends BlockedError {
  override name = 'RateLimitedError';
  readonly retryAfterMs?: number;
  constructor(message: string, context: CrawlerErrorContext & { retryAfterMs?: number } = {}) {
    super('rate_limited', message, context);
    this.retryAfterMs = context.retryAfterMs;
  }
}

/** A URL that cannot be crawled: unparsable, or not http/https. */
export class InvalidUrlError extends NonRetryableError {
  override name = 'InvalidUrlError';
  constructor(message: string, context: CrawlerErrorContext = {}) {
    super('invalid_url', message, context);
  }
}

/** The error type to record for anything thrown: a CrawlerError's code, otherwise `internal_error`. */
export function errorTypeOf(err: unknown): ErrorType {
  return err instanceof CrawlerError ? err.code : 'internal_error';
}

/**
 * Error types that refuse the URL itself (the SSRF guard, a scheme we never fetch, an unparsable URL). Every request to
 * the URL gets the same answer, so no robots.txt verdict, retry or pause applies: the link fails with this reason.
 */
export const URL_POLICY_ERRORS: ReadonlySet<string> = new Set(['blocked_address', 'blocked_scheme', 'invalid_url']);

/** True for a CrawlerError that refuses the URL itself (see URL_POLICY_ERRORS). */
export function isUrlPolicyError(err: unknown): err is CrawlerError {
  return err instanceof CrawlerError && URL_POLICY_ERRORS.has(err.code);
}
