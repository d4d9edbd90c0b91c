import type { Logger } from '@crawler/core';
import type { FetchRequest, FetchResult, Fetcher } from './contract.js';
import { FetchError } from './errors.js';
import type { ResolvedFetchersOptions } from './options.js';

/** A request after the base has checked the URL and armed the deadline. */
export interface PreparedRequest {
  url: URL;
  /** The URL as the caller gave it, echoed in results. */
  originalUrl: string;
  timeoutMs: number;
  maxBytes: number;
  headers: Record<string, string>;
  /** Fires on the caller's abort or on the overall deadline; `signal.reason` says which. */
  signal: AbortSignal;
  startedAt: number;
  /** The caller's request as given, for fetcher-specific fields (the probe's per-phase timeouts). */
  request: FetchRequest;
}

/** The reason given to the deadline's abort, so translators can tell a deadline from a caller's abort. */
export class DeadlineExceeded extends Error {
  override name = 'DeadlineExceeded';
  constructor(readonly timeoutMs: number) {
    super(`deadline of ${timeoutMs} ms exceeded`);
  }
}

/**
 * How long a fetcher has, once the deadline has passed or the caller aborted, to wind down on its own (a browser closing
 * its page, a socket being destroyed) before the fetch settles without it: a library call with no timeout of its own
 * must not hold a worker's job past its deadline.
 */
export const SETTLE_GRACE_MS = 2_000;

/**
 * Parse a URL and refuse anything but http: and https:. `file:`, `data:`, `javascript:`, `ftp:` and friends
 * read local files or run code; a crawler never wants them.
 */
export function parseFetchUrl(raw: string, fetcher?: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (cause) {
    throw new FetchError('invalid_url', `not a URL: ${raw.slice(0, 200)}`, { url: raw, fetcher, cause });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FetchError('blocked_scheme', `scheme ${url.protocol} is not fetched`, { url: raw.slice(0, 200), fetcher });
  }
  return url;
}

/**
 * What every fetcher shares: URL and scheme checks, the overall deadline, caller aborts, and translating
 * whatever the library threw into a {@link FetchError} once. Subclasses implement {@link BaseFetcher.fetchPrepared}.
 */
export abstract class BaseFetcher implements Fetcher {
  abstract readonly name: string;
  protected readonly log: Logger;

  protected constructor(protected readonly options: ResolvedFetchersOptions, component: string) {
    // Its own key: the logger handed in usually carries `component` already (the runtime's is `fetchers`), and pino
    // would write a second `component` into the same JSON line.
    this.log = options.logger.child({ fetcherImpl: component });
  }

  async fetch(req: FetchRequest): Promise<FetchResult> {
    const url = parseFetchUrl(req.url, this.name);
    const timeoutMs = req.timeoutMs ?? this.options.timeoutMs;
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new DeadlineExceeded(timeoutMs)), timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, deadline.signal]) : deadline.signal;
    const prepared: PreparedRequest = {
      url,
      originalUrl: req.url,
      timeoutMs,
      maxBytes: req.maxBytes ?? this.options.maxBytes,
      headers: req.headers ?? {},
      signal,
      startedAt: Date.now(),
      request: req,
    };
    let grace: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    try {
      if (signal.aborted) throw signal.reason;
      const work = this.fetchPrepared(prepared);
      const given = new Promise<never>((_resolve, reject) => {
        onAbort = () => {
          grace = setTimeout(() => {
            this.log.warn({ url: req.url, graceMs: SETTLE_GRACE_MS }, 'fetch still running after its deadline and grace: settled without it');
            reject(signal.reason);
          }, SETTLE_GRACE_MS);
        };
        signal.addEventListener('abort', onAbort, { once: true });
      });
      // What it ends with after the fetch has settled is nobody's to read.
      work.catch(() => undefined);
      return await Promise.race([work, given]);
    } catch (err) {
      const translated = this.translateError(err, prepared);
      this.log.debug({ url: req.url, code: translated.code, err: translated }, 'fetch failed');
      throw translated;
    } finally {
      clearTimeout(timer);
      clearTimeout(grace);
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }

  /** Do the fetch. Throw anything; {@link BaseFetcher.translateError} turns it into a FetchError. */
  protected abstract fetchPrepared(req: PreparedRequest): Promise<FetchResult>;

  /** Map a library error onto a stable code. Subclasses handle their library and defer to this for the rest. */
  protected translateError(err: unknown, req: PreparedRequest): FetchError {
    if (err instanceof FetchError) return err;
    const ctx = { url: req.originalUrl, fetcher: this.name, cause: err };
    const reason = req.signal.aborted ? req.signal.reason : undefined;
    if (reason instanceof DeadlineExceeded) return new FetchError('timeout', reason.message, ctx);
    if (req.signal.aborted) return new FetchError('aborted', 'fetch aborted by caller', ctx);
    const message = err instanceof Error ? err.message : String(err);
    return new FetchError('network_error', message, ctx);
  }

  abstract close(): Promise<void>;
}
