import type { FetchExit, FetchResult, Fetcher } from '../contract.js';
import type { HttpFetchRequest } from './http-fetcher.js';

export interface ProbeOptions {
  /** Whole-probe deadline (seeds 001: a 3 s GET). @defaultValue 3000 */
  timeoutMs?: number;
  /** Body limit; the body may be reused as the page, so the normal limit by default. */
  maxBytes?: number;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Where the probe leaves from. @defaultValue the worker's own address */
  exit?: FetchExit;
}

/**
 * The cheap probe of seeds 001 ("Probe & Reuse"): the SAME plain-HTTP fetcher and pool with a short deadline,
 * so a static page's probe body can be reused as the fetch result instead of asking twice.
 * Errors are thrown like any fetch; the router decides what a failed probe means.
 */
export function probe(httpFetcher: Fetcher, url: string, opts: ProbeOptions = {}): Promise<FetchResult> {
  const timeoutMs = opts.timeoutMs ?? 3000;
  const req: HttpFetchRequest = {
    url,
    timeoutMs,
    headersTimeoutMs: timeoutMs,
    bodyTimeoutMs: timeoutMs,
    ...(opts.maxBytes !== undefined ? { maxBytes: opts.maxBytes } : {}),
    ...(opts.headers ? { headers: opts.headers } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.exit ? { exit: opts.exit } : {}),
  };
  return httpFetcher.fetch(req);
}
