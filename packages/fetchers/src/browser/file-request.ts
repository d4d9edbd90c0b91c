import type { Page, Response } from 'playwright-core';
import type { FetchResult, Fetcher } from '../contract.js';
import { FetchError } from '../errors.js';
import type { PreparedRequest } from '../base-fetcher.js';
import type { ChallengeEncounter } from './challenge-wait.js';

/**
 * The browser's navigation ended on a file, not a page: Chromium handed it to its download manager (an attachment, a
 * zip, a CSV) or to its PDF viewer, and either way keeps its bytes from the page. What the file's request needs to be
 * made again as the browser made it.
 */
export interface FileAtUrl {
  file: {
    /** The URL the navigation ended on (after its redirects, each one checked by the egress guard). */
    url: string;
    /** The redirects the navigation followed to get there. */
    redirectChain: string[];
    /** The Cookie header the page's context sends to `url`: a wall's clearance, a session. */
    cookie: string;
    /** The User-Agent the page's context sends (a clearance cookie is bound to it). */
    userAgent: string | null;
    /** The wall the page met on its way to the file, when it met one. */
    challenge?: ChallengeEncounter;
  };
}

/**
 * What the browser knows of a file its navigation ended on, read while the page is still open: the context's cookies
 * for it and its user agent, so the request that gets the bytes is the one the site just answered.
 */
export async function fileAt(page: Page, response: Response, redirectChain: string[], challenge?: ChallengeEncounter | null): Promise<FileAtUrl> {
  const url = response.url();
  const cookies = await page.context().cookies(url).catch(() => []);
  const userAgent = await page.evaluate(() => navigator.userAgent).catch(() => null);
  return { file: { url, redirectChain, cookie: cookies.map((c) => `${c.name}=${c.value}`).join('; '), userAgent: typeof userAgent === 'string' ? userAgent : null, ...(challenge ? { challenge } : {}) } };
}

/**
 * The main-frame navigation responses Chromium turned into downloads, latest last: a wall's script that sets its
 * cookie and reloads onto a file (an attachment behind the wall) leaves the challenge on screen, as a download never
 * replaces the document.
 */
export function watchDownloads(page: Page): { readonly last: Response | null; stop(): void } {
  const navigations = new Map<string, Response>();
  let last: Response | null = null;
  const onResponse = (r: Response) => {
    if (r.request().isNavigationRequest() && r.frame() === page.mainFrame()) navigations.set(r.url(), r);
  };
  const onDownload = (d: { url(): string }) => {
    last = navigations.get(d.url()) ?? last;
  };
  page.on('response', onResponse);
  page.on('download', onDownload);
  return {
    get last() {
      return last;
    },
    stop() {
      page.off('response', onResponse);
      page.off('download', onDownload);
    },
  };
}

/**
 * Get the file with plain HTTP's request, carrying the browser's cookies and user agent for it, from the same exit,
 * under the same address policy, deadline and byte cap: the result is stored exactly as plain HTTP stores a file
 * (content type, bytes, decompression counted against the cap, charset), and named after the browser that met it.
 * Made after the page is closed, so a large file holds no browser page while it comes.
 */
export async function requestFile(http: Fetcher, browser: string, req: PreparedRequest, at: FileAtUrl['file']): Promise<FetchResult> {
  const headers: Record<string, string> = { ...req.headers };
  if (at.cookie) headers.cookie = at.cookie;
  if (at.userAgent) headers['user-agent'] = at.userAgent;
  const remainingMs = req.startedAt + req.timeoutMs - Date.now();
  if (remainingMs <= 0) throw new FetchError('timeout', `deadline of ${req.timeoutMs} ms exceeded before the file's request`, { url: req.originalUrl, fetcher: browser });
  let result: FetchResult;
  try {
    result = await http.fetch({ url: at.url, timeoutMs: remainingMs, maxBytes: req.maxBytes, headers, signal: req.signal, ...(req.request.exit ? { exit: req.request.exit } : {}) });
  } catch (err) {
    if (err instanceof FetchError) throw new FetchError(err.code, `the file the page led to (${at.url}): ${err.message}`, { url: req.originalUrl, fetcher: browser, cause: err });
    throw err;
  }
  // Assigned, not spread: plain HTTP's `text` is a getter that decodes on first read.
  return Object.assign(result, { fetcher: browser, url: req.originalUrl, redirectChain: [...at.redirectChain, ...result.redirectChain] }, at.challenge ? { challenge: at.challenge } : {});
}
