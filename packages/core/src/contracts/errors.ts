import { errorPolicyOf, type ErrorCode } from './error-codes.js';

/** Context carried by every crawler error, so logs and link records say where it happened. */
export interface CrawlerErrorContext {
  url?: string;
  fetcher?: string;
  status?: number;
  cause?: unknown;
}

/**
 * Base of every error the crawler raises on purpose. `code` is the stable error type recorded on attempts and links;
 * what it means (retry, pause, fail) is its row in ERROR_POLICY, which `retryable` reads like the fetch pipeline does,
 * so the two cannot disagree. Third-party errors are translated into these once, at the edge (fetchers, stores), and
 * wrapped as `cause`.
 */
export class CrawlerError extends Error {
  override name = 'CrawlerError';
  readonly code: ErrorCode;
  /** Whether trying again later (perhaps with another fetcher) can help: every action of ERROR_POLICY but `fail`. */
  readonly retryable: boolean;
  readonly url?: string;
  readonly fetcher?: string;
  readonly status?: number;

  constructor(code: ErrorCode, message: string, context: CrawlerErrorContext = {}) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.code = code;
    this.retryable = errorPolicyOf(code).action !== 'fail';
    this.url = context.url;
    this.fetcher = context.fetcher;
    this.status = context.status;
  }

  /** A plain object for logs and job results (errors do not survive JSON.stringify). */
  toJSON(): Record<string, unknown> {
    return { name: this.name, code: this.code, message: this.message, retryable: this.retryable, url: this.url, fetcher: this.fetcher, status: this.status };
  }
}

/** A URL that cannot be crawled: unparsable, or not http/https. */
export class InvalidUrlError extends CrawlerError {
  override name = 'InvalidUrlError';
  constructor(message: string, context: CrawlerErrorContext = {}) {
    super('invalid_url', message, context);
  }
}

/** The error code to record for anything thrown: a CrawlerError's code, otherwise `internal_error`. */
export function errorTypeOf(err: unknown): ErrorCode {
  return err instanceof CrawlerError ? err.code : 'internal_error';
}

/** True for a CrawlerError that refuses the URL itself (ERROR_POLICY's `refusesUrl`). */
export function isUrlPolicyError(err: unknown): err is CrawlerError {
  return err instanceof CrawlerError && errorPolicyOf(err.code).refusesUrl;
}

/**
 * True when the site's TLS certificate was refused (`tls_error`: expired, another host's, an unknown CA): every
 * request to the origin gets the same answer until its operator (or ours, NODE_EXTRA_CA_CERTS) changes something.
 */
export function isCertificateError(err: unknown): err is CrawlerError {
  return err instanceof CrawlerError && err.code === 'tls_error';
}

/** True when the exit failed, not the site (`proxy_unavailable`): nothing may be concluded about the site from it. */
export function isExitError(err: unknown): err is CrawlerError {
  return err instanceof CrawlerError && err.code === 'proxy_unavailable';
}
